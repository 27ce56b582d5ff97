import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { SeatKind } from "../protocol/frames.ts";
import { transient } from "./group-commit.ts";
import { playerId } from "../protocol/players.ts";
import type { Sql } from "./sql.ts";

/** The kinds a token may play as: a program, or a program that relays a language model. */
export type PlayerKind = Extract<SeatKind, "bot" | "llm">;
/** A player's kind, or `admin`: a token that administers the server (registers policies) and never plays. */
export type TokenKind = PlayerKind | "admin";
export const TOKEN_KINDS: readonly TokenKind[] = ["bot", "llm", "admin"];

/** A token as stored: never the secret, only its SHA-256. */
export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly kind: TokenKind;
  readonly hash: string;
  readonly createdAt: string;
  /** Live matches this token may sit in at once. */
  readonly maxMatches: number;
  readonly revoked?: boolean;
}

export class TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenError";
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const TOKEN = /^ludus_([0-9a-f]{12})_([A-Za-z0-9_-]{32})$/;
export const DEFAULT_MAX_MATCHES = 64;
/** Where tokens lived before the store kept them; imported once, then renamed. */
export const TOKEN_FILE = "tokens.json";

const digest = (secret: string): Buffer => createHash("sha256").update(secret).digest();

const toToken = (r: Record<string, unknown>): TokenRecord => ({
  id: r.id as string,
  name: r.name as string,
  kind: r.kind as TokenKind,
  hash: r.hash as string,
  createdAt: new Date(r.created_at as string).toISOString(),
  maxMatches: r.max_matches as number,
  ...(r.revoked_at !== null && { revoked: true }),
});

/**
 * Tokens in the store, hashed. A token reads `ludus_<id>_<secret>`: the id finds the row, the secret is checked
 * against its hash in constant time. Every check reads the row, so a token made or revoked by another process on
 * the same store counts at once; while the store cannot be reached, the tokens this process has read still
 * verify (bots reconnect through a database outage), as they stood when last read.
 */
export class TokenStore {
  /** Every live token as last read, by id: what verifies while the store is away. */
  private readonly known = new Map<string, TokenRecord>();
  /** Tokens this process issued for its own lifetime (the runtime file's admin token), never stored. */
  private readonly ephemeral = new Map<string, TokenRecord>();

  constructor(private readonly sql: Sql) {}

  /** Reads every live token, so that they verify through an outage that starts before they first connect. */
  async load(): Promise<void> {
    for (const row of await this.sql.query("SELECT * FROM tokens WHERE revoked_at IS NULL")) {
      const record = toToken(row);
      this.known.set(record.id, record);
    }
  }

  /**
   * Makes a token. A bot's or LLM's token is also a player (`kind:name`), unless `player` is false: a run's own token
   * (a tournament's, an evolution's) whose seats are named by the run.
   */
  async create(
    name: string,
    kind: TokenKind = "bot",
    maxMatches = DEFAULT_MAX_MATCHES,
    { player = true }: { player?: boolean } = {},
  ): Promise<{ token: string; record: TokenRecord }> {
    if (!NAME.test(name)) {
      throw new TokenError(
        `a bot name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit; got ${
          JSON.stringify(name)
        }`,
      );
    }
    if (!TOKEN_KINDS.includes(kind)) throw new TokenError(`a token kind is one of ${TOKEN_KINDS.join(", ")}`);
    if (!Number.isInteger(maxMatches) || maxMatches < 1) {
      throw new TokenError(`max matches must be a whole number ≥ 1, got ${maxMatches}`);
    }
    const secret = randomBytes(24).toString("base64url");
    const record = await this.insert({
      id: randomBytes(6).toString("hex"),
      name,
      kind,
      hash: digest(secret).toString("hex"),
      createdAt: new Date().toISOString(),
      maxMatches,
    }, player);
    return { token: `ludus_${record.id}_${secret}`, record };
  }

  /** A token valid only while this process runs: checked like any other, never written to the store. */
  issueEphemeral(name: string, kind: TokenKind): string {
    const secret = randomBytes(24).toString("base64url");
    const id = randomBytes(6).toString("hex");
    const hash = digest(secret).toString("hex");
    this.ephemeral.set(id, { id, name, kind, hash, createdAt: new Date().toISOString(), maxMatches: 1 });
    return `ludus_${id}_${secret}`;
  }

  /** The record of a valid, unrevoked token, or undefined. */
  async verify(token: string): Promise<TokenRecord | undefined> {
    const match = TOKEN.exec(token);
    if (!match) return undefined;
    const [, id, secret] = match;
    let record = this.ephemeral.get(id);
    if (record) return timingSafeEqual(digest(secret), Buffer.from(record.hash, "hex")) ? record : undefined;
    try {
      const rows = await this.sql.query("SELECT * FROM tokens WHERE id = $1", [id]);
      record = rows.length ? toToken(rows[0]) : undefined;
      if (record && !record.revoked) this.known.set(id, record);
      else this.known.delete(id);
    } catch (error) {
      if (!transient(error)) throw error;
      record = this.known.get(id);
    }
    if (!record || record.revoked) return undefined;
    return timingSafeEqual(digest(secret), Buffer.from(record.hash, "hex")) ? record : undefined;
  }

  /** The live token of a name, if there is one. */
  async named(name: string): Promise<TokenRecord | undefined> {
    const rows = await this.sql.query("SELECT * FROM tokens WHERE name = $1 AND revoked_at IS NULL", [name]);
    return rows.length ? toToken(rows[0]) : undefined;
  }

  /** Every token, oldest first. */
  async list(): Promise<TokenRecord[]> {
    return (await this.sql.query("SELECT * FROM tokens ORDER BY created_at, id")).map(toToken);
  }

  /** Revokes by name or id; false when there was none. */
  async revoke(nameOrId: string): Promise<boolean> {
    const rows = await this.sql.query<{ id: string }>(
      "UPDATE tokens SET revoked_at = now() WHERE revoked_at IS NULL AND (name = $1 OR id = $1) RETURNING id",
      [nameOrId],
    );
    for (const { id } of rows) this.known.delete(id);
    return rows.length > 0;
  }

  /**
   * Moves the tokens of `<dataDir>/tokens.json` (where earlier versions kept them) into the store, then renames
   * the file `tokens.json.imported`, so a token revoked here never comes back from it. Tokens already in the
   * store are kept as they are. Returns how many were imported.
   */
  async importFile(dataDir: string): Promise<number> {
    const file = join(dataDir, TOKEN_FILE);
    if (!existsSync(file)) return 0;
    const parsed = JSON.parse(readFileSync(file, "utf8"));
    if (!Array.isArray(parsed?.tokens)) throw new TokenError(`${file} is not a Ludus token file`);
    let imported = 0;
    for (const record of parsed.tokens as TokenRecord[]) {
      const exists = await this.sql.query("SELECT 1 FROM tokens WHERE id = $1", [record.id]);
      if (exists.length > 0) continue;
      // A name taken by a live token already in the store keeps that one; the file's is imported revoked.
      const taken = await this.sql.query("SELECT 1 FROM tokens WHERE name = $1 AND revoked_at IS NULL", [record.name]);
      await this.insert({ ...record, revoked: record.revoked || taken.length > 0 }, true);
      imported++;
    }
    renameSync(file, `${file}.imported`);
    return imported;
  }

  /** Stores a token, and its player (bots and LLM agents play under their token's name). */
  private async insert(record: TokenRecord, player: boolean): Promise<TokenRecord> {
    try {
      await this.sql.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO tokens (id, name, kind, hash, max_matches, created_at, revoked_at)
           VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::boolean THEN now() END)`,
          [
            record.id,
            record.name,
            record.kind,
            record.hash,
            record.maxMatches,
            record.createdAt,
            record.revoked === true,
          ],
        );
        if (player && record.kind !== "admin") {
          await tx.query(
            "INSERT INTO players (id, kind, name) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
            [playerId({ kind: record.kind, name: record.name }), record.kind, record.name],
          );
        }
      });
    } catch (error) {
      if ((error as { code?: string })?.code === "23505") {
        throw new TokenError(
          `a bot named ${record.name} already has a token; revoke it first or choose another name`,
        );
      }
      throw error;
    }
    if (!record.revoked) this.known.set(record.id, record);
    return record;
  }
}
