import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SeatKind } from "../../protocol/frames.ts";

/** The kinds a token may play as: a program, or a program that relays a language model. */
export type PlayerKind = Extract<SeatKind, "bot" | "llm">;
/** A player's kind, or `admin`: a token that administers the server (registers policies) and never plays. */
export type TokenKind = PlayerKind | "admin";
export const TOKEN_KINDS: readonly TokenKind[] = ["bot", "llm", "admin"];

/** A bot's identity as stored: never the secret, only its SHA-256. */
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

const PREFIX = "ludus";
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const DEFAULT_MAX_MATCHES = 64;

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/**
 * Bot tokens in `<dataDir>/tokens.json`, hashed. A token reads `ludus_<id>_<secret>`: the id finds the
 * record, the secret is checked against its hash in constant time. The file is re-read when it changes,
 * so `ludus token create` works while a server runs.
 */
export class TokenStore {
  private readonly file: string;
  private records: TokenRecord[] = [];
  /** The file's mtime and size when last read: a change in either means re-read. */
  private loadedStamp = "";

  constructor(readonly dataDir: string) {
    this.file = join(dataDir, "tokens.json");
  }

  create(
    name: string,
    kind: TokenKind = "bot",
    maxMatches = DEFAULT_MAX_MATCHES,
  ): { token: string; record: TokenRecord } {
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
    this.load();
    if (this.records.some((r) => r.name === name && !r.revoked)) {
      throw new TokenError(`a bot named ${name} already has a token; revoke it first or choose another name`);
    }
    const id = randomBytes(6).toString("hex");
    const secret = randomBytes(24).toString("base64url");
    const record: TokenRecord = {
      id,
      name,
      kind,
      hash: digest(secret).toString("hex"),
      createdAt: new Date().toISOString(),
      maxMatches,
    };
    this.records.push(record);
    this.save();
    return { token: `${PREFIX}_${id}_${secret}`, record };
  }

  /** The record of a valid, unrevoked token, or undefined. */
  verify(token: string): TokenRecord | undefined {
    const match = /^ludus_([0-9a-f]{12})_([A-Za-z0-9_-]{32})$/.exec(token);
    if (!match) return undefined;
    this.load();
    const record = this.records.find((r) => r.id === match[1]);
    if (!record || record.revoked) return undefined;
    return timingSafeEqual(digest(match[2]), Buffer.from(record.hash, "hex")) ? record : undefined;
  }

  list(): TokenRecord[] {
    this.load();
    return [...this.records];
  }

  /** Revokes by name or id; false when there was none. */
  revoke(nameOrId: string): boolean {
    this.load();
    const i = this.records.findIndex((r) => !r.revoked && (r.name === nameOrId || r.id === nameOrId));
    if (i < 0) return false;
    this.records[i] = { ...this.records[i], revoked: true };
    this.save();
    return true;
  }

  private load(): void {
    let stamp: string;
    try {
      const stat = statSync(this.file);
      stamp = `${stat.mtimeMs}:${stat.size}`;
    } catch {
      this.records = [];
      this.loadedStamp = "";
      return;
    }
    if (stamp === this.loadedStamp) return;
    const parsed = JSON.parse(readFileSync(this.file, "utf8"));
    if (!Array.isArray(parsed?.tokens)) throw new TokenError(`${this.file} is not a Ludus token file`);
    this.records = parsed.tokens;
    this.loadedStamp = stamp;
  }

  private save(): void {
    mkdirSync(this.dataDir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ tokens: this.records }, null, 2) + "\n", { mode: 0o600 });
    renameSync(tmp, this.file); // atomic: a server reading it never sees half a file
    this.loadedStamp = "";
  }
}
