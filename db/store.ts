import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeDataDir } from "./data-dir.ts";
import { LeagueStore } from "./league.ts";
import { seatOfPlayer } from "../protocol/players.ts";
import { PlayerStore } from "./players.ts";
import { TokenStore } from "./tokens.ts";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.ts";
import { migrate, StoreError } from "./migrate.ts";
import { PolicyRegistry } from "./policies.ts";
import { END_REASONS, type MatchRecord, SEAT_STATUSES, type StepRecordRow } from "./records.ts";
import { MATCHES } from "./tables/matches.ts";
import { STEPS } from "./tables/steps.ts";
import { openPglite, openPostgres, type Sql, textArray } from "./sql.ts";
import { NodeDirectory } from "./nodes.ts";

export { StoreError };

export interface StoreOptions {
  /** The server's data directory; the embedded store lives in `<dataDir>/replay`. */
  readonly dataDir: string;
  /** A PostgreSQL URL: use it instead of the embedded store. */
  readonly databaseUrl?: string;
  readonly groupCommit?: GroupCommitOptions;
}

/** Filters for listing and exporting matches; every field is optional. */
export interface MatchFilter {
  readonly game?: string;
  /** The game version (with `game`). */
  readonly version?: number;
  readonly variant?: string;
  /** A participant's name or token id, in any seat. */
  readonly participant?: string;
  /** A player (`kind:name`, as the players table names it), in any seat. */
  readonly player?: string;
  /** A model, as an LLM seat declared it (`seats[].model`), in any seat. */
  readonly model?: string;
  /**
   * A player (`kind:name`) or a participant (name or token id) in another seat than the one `model`, `player` and
   * `participant` pick (any seat when none of them is given).
   */
  readonly opponent?: string;
  /**
   * A seat status (DONE, TIMEOUT, ...: that of the seat `model`, `player` and `participant` pick, or of any seat when
   * none is given) or a match's end reason (completed, forfeit, aborted, error).
   */
  readonly status?: string;
  /** Matches created at or after this time. */
  readonly from?: Date;
  /** Matches created before this time. */
  readonly to?: Date;
  /** Only ended matches (true), only unfinished ones (false), or both (undefined). */
  readonly ended?: boolean;
}

/** A position in the (created_at, id) order of matches: where a page or an export stopped. */
export interface MatchPosition {
  readonly createdAt: string;
  readonly id: string;
}

const M = MATCHES.column;
const S = STEPS.column;

// The invite and the seat keys are capabilities: read back only to restore a match, never for the API or exports.
const MATCH_SELECT = `SELECT ${MATCHES.selected} FROM matches`;
const STEP_SELECT = `SELECT ${STEPS.selected} FROM steps`;

type Row = Record<string, unknown>;

/** Creation order: oldest first (exports, verify, restore) or newest first (what people browsing expect). */
export type MatchOrder = "asc" | "desc";

/** WHERE clauses and parameters for a filter, and for the page after `after` in `order`. */
function where(
  filter: MatchFilter,
  after?: MatchPosition,
  order: MatchOrder = "asc",
): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(clause(`$${params.length}`));
  };
  if (filter.game !== undefined) add((n) => `${M.game} = ${n}`, filter.game);
  if (filter.version !== undefined) add((n) => `${M.gameVersion} = ${n}`, filter.version);
  if (filter.variant !== undefined) add((n) => `${M.variant} = ${n}`, filter.variant);
  if (filter.participant !== undefined) {
    add(
      (n) =>
        `(${M.seats} @> jsonb_build_array(jsonb_build_object('name', ${n}::text)) OR ` +
        `${M.seats} @> jsonb_build_array(jsonb_build_object('tokenId', ${n}::text)))`,
      filter.participant,
    );
  }
  if (filter.player !== undefined) {
    const { kind, names } = seatOfPlayer(filter.player)!;
    // Either name the seat may carry; both use the seats index.
    params.push(...names.map((name) => JSON.stringify([{ kind, name }])));
    const [a, b] = [params.length - 1, params.length];
    clauses.push(`(${M.seats} @> $${a}::text::jsonb OR ${M.seats} @> $${b}::text::jsonb)`);
  }
  const seatOf = seatClause(filter, params);
  if (seatOf) clauses.push(seatOf);
  if (filter.status !== undefined && (END_REASONS as readonly string[]).includes(filter.status)) {
    add((n) => `${M.endReason} = ${n}`, filter.status);
  }
  if (filter.from !== undefined) add((n) => `${M.createdAt} >= ${n}`, filter.from.toISOString());
  if (filter.to !== undefined) add((n) => `${M.createdAt} < ${n}`, filter.to.toISOString());
  if (filter.ended === true) clauses.push(`${M.endedAt} IS NOT NULL`);
  if (filter.ended === false) clauses.push(`${M.endedAt} IS NULL`);
  if (after) {
    params.push(after.createdAt, after.id);
    const beyond = order === "asc" ? ">" : "<";
    clauses.push(`(${M.createdAt}, ${M.id}) ${beyond} ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  return { sql: clauses.length ? ` WHERE ${clauses.join(" AND ")}` : "", params };
}

/**
 * The clause that one seat (the focal seat: the one `model`, `player` and `participant` all name) has the filter's
 * seat status and that another seat holds its `opponent`; undefined when the filter asks neither. The containment
 * clauses beside it (`seats @> ...`) let the seats index narrow the matches first.
 */
function seatClause(filter: MatchFilter, params: unknown[]): string | undefined {
  const seatStatus = filter.status !== undefined && (SEAT_STATUSES as readonly string[]).includes(filter.status)
    ? filter.status
    : undefined;
  if (seatStatus === undefined && filter.opponent === undefined && filter.model === undefined) return undefined;
  const param = (value: unknown) => `$${params.push(value)}`;
  /** Conditions on a seat (`alias.seat`) that it is this player or this participant. */
  const holds = (alias: string, who: string): string => {
    const player = seatOfPlayer(who);
    if (player) {
      return `(${alias}.seat->>'kind' = ${param(player.kind)} AND ${alias}.seat->>'name' IN (${
        player.names.map(param).join(", ")
      }))`;
    }
    const name = param(who);
    return `(${alias}.seat->>'name' = ${name} OR ${alias}.seat->>'tokenId' = ${name})`;
  };
  const focal: string[] = ["TRUE"];
  if (filter.model !== undefined) focal.push(`f.seat->>'model' = ${param(filter.model)}`);
  if (filter.player !== undefined) focal.push(holds("f", filter.player));
  if (filter.participant !== undefined) focal.push(holds("f", filter.participant));
  if (seatStatus !== undefined) focal.push(`${M.statuses}->>(f.i - 1)::int = ${param(seatStatus)}`);
  if (filter.opponent !== undefined) {
    focal.push(
      `EXISTS (SELECT 1 FROM jsonb_array_elements(${M.seats}) WITH ORDINALITY AS o(seat, i) WHERE o.i <> f.i AND ${
        holds("o", filter.opponent)
      })`,
    );
  }
  const contains = filter.model === undefined
    ? ""
    : `${M.seats} @> ${param(JSON.stringify([{ model: filter.model }]))}::text::jsonb AND `;
  return `${contains}EXISTS (SELECT 1 FROM jsonb_array_elements(${M.seats}) WITH ORDINALITY AS f(seat, i) WHERE ${
    focal.join(" AND ")
  })`;
}

/** A file-system failure as one sentence: what could not be done, and why in words. */
function fsProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  const why: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "permission denied",
    EROFS: "the file system is read-only",
    ENOSPC: "the disk is full",
    ENOTDIR: "a part of the path is a file, not a directory",
  };
  const name = (error as Error)?.name;
  if (code && Object.hasOwn(why, code)) return `${why[code]} (${code})`;
  if (name === "PermissionDenied" || name === "NotCapable") return "permission denied";
  return (error as Error)?.message ?? String(error);
}

/**
 * An exclusive lock on an embedded store's directory, so two processes never open one PGlite. It is the
 * operating system's lock on `replay.lock` (flock): held while the process lives, released by the kernel
 * when it dies however it dies, so there is no guessing whether the process named in the file still runs.
 * The file itself stays (removing it would let two processes lock two different files).
 */
/** The embedded store is held by another process (a running server): its commands go through that server. */
export class StoreInUseError extends StoreError {
  constructor(readonly dataDir: string, message: string) {
    super(message);
    this.name = "StoreInUseError";
  }
}

function lockDirectory(dir: string): () => void {
  const path = join(dir, "replay.lock");
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true, write: true, create: true });
  } catch (error) {
    throw new StoreError(`cannot lock the replay store in ${dir}: ${fsProblem(error)}`);
  }
  if (!file.tryLockSync(true)) {
    file.close();
    const holder = (() => {
      try {
        return readFileSync(path, "utf8").trim();
      } catch {
        return "";
      }
    })();
    throw new StoreInUseError(
      dir,
      `the replay store in ${dir} is in use by ${
        /^\d+$/.test(holder) ? `process ${holder}` : "another process"
      }; stop that server ` +
        "or choose another --data-dir (`ludus export --server http://HOST:PORT` reads a running server's store; " +
        "`ludus token`, `policy`, `exploitability`, `simulate` and `tournament` go through the server by themselves " +
        "when it left its address in the data directory, or take --server http://HOST:PORT)",
    );
  }
  try {
    file.truncateSync(0);
    file.writeSync(new TextEncoder().encode(String(Deno.pid)));
  } catch {
    // Only a note for the message above: the lock is what counts.
  }
  return () => {
    file.unlockSync();
    file.close();
  };
}

/** Opens the embedded store, checking the directory is one (or can become one). */
async function openEmbedded(dataDir: string): Promise<{ sql: Sql; unlock: () => void }> {
  if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) {
    throw new StoreError(`--data-dir ${dataDir} is a file, not a directory`);
  }
  try {
    makeDataDir(dataDir);
  } catch (error) {
    throw new StoreError(`cannot create the data directory ${dataDir}: ${fsProblem(error)}`);
  }
  const dir = join(dataDir, "replay");
  if (existsSync(dir) && (!statSync(dir).isDirectory() || !existsSync(join(dir, "PG_VERSION")))) {
    const empty = statSync(dir).isDirectory() && readdirSync(dir).length === 0;
    if (!empty) {
      throw new StoreError(`${dir} is not a Ludus store (no PG_VERSION); move it away or choose another --data-dir`);
    }
  }
  const unlock = lockDirectory(dataDir);
  try {
    return { sql: await openPglite(dir), unlock };
  } catch (error) {
    unlock();
    throw new StoreError(`cannot open the replay store in ${dir}: ${fsProblem(error)}`);
  }
}

/** How often the embedded store refreshes its planner's statistics. */
const ANALYZE_EVERY_MS = 30_000;

/**
 * The replay store: matches and their step logs in PostgreSQL, or in PGlite inside the data directory.
 * Writes go through group commit (`writer`); reads serve the HTTP API, exports and restarts.
 */
export class ReplayStore {
  /** This process's id as a writer of step rows. */
  readonly writerId = randomBytes(6).toString("base64url");
  readonly writer: GroupCommit;
  private readonly analyzer?: ReturnType<typeof setInterval>;
  /** Trained ONNX policies, beside the matches that seat them. */
  readonly policies: PolicyRegistry;
  /** Tournaments and online ratings. */
  readonly league: LeagueStore;
  /** Everyone who has sat at a table or holds a token to. */
  readonly players: PlayerStore;
  /** Bot, LLM and admin tokens. */
  readonly tokens: TokenStore;
  /** The server processes sharing this store, and which plays each live match. */
  readonly nodes: NodeDirectory;

  private constructor(readonly sql: Sql, private readonly unlock: () => void, options: StoreOptions) {
    this.writer = new GroupCommit(sql, this.writerId, options.groupCommit);
    this.policies = new PolicyRegistry(sql);
    this.league = new LeagueStore(sql);
    this.players = new PlayerStore(sql);
    this.tokens = new TokenStore(sql);
    this.nodes = new NodeDirectory(sql);
    if (sql.backend === "pglite") {
      // PGlite has no autovacuum: statistics taken when the tables were small make the planner scan whole tables
      // once they are not (an incremental export slowed with every match a training run added).
      this.analyzer = setInterval(() => sql.exec("ANALYZE matches, steps").catch(() => {}), ANALYZE_EVERY_MS);
      Deno.unrefTimer(this.analyzer);
    }
  }

  static async open(options: StoreOptions): Promise<ReplayStore> {
    const { sql, unlock } = options.databaseUrl
      ? { sql: openPostgres(options.databaseUrl), unlock: () => {} }
      : await openEmbedded(options.dataDir);
    try {
      await migrate(sql);
      // PGlite has no autovacuum: without statistics its planner scans whole tables for keyed lookups.
      if (sql.backend === "pglite") await sql.exec("ANALYZE matches, steps");
    } catch (error) {
      await sql.close().catch(() => {});
      unlock();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot open the replay store at ${sql.where}: ${(error as Error).message}`);
    }
    const store = new ReplayStore(sql, unlock, options);
    try {
      await store.tokens.importFile(options.dataDir);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  get backend(): Sql["backend"] {
    return this.sql.backend;
  }

  get where(): string {
    return this.sql.where;
  }

  async match(id: string): Promise<MatchRecord | undefined> {
    const rows = await this.sql.query<Row>(`${MATCH_SELECT} WHERE ${M.id} = $1`, [id]);
    return rows.length ? MATCHES.record(rows[0]) : undefined;
  }

  /** A match's decisions in sequence order. */
  async steps(matchId: string): Promise<StepRecordRow[]> {
    return (await this.sql.query<Row>(`${STEP_SELECT} WHERE ${S.matchId} = $1 ORDER BY ${S.seq}`, [matchId])).map(
      STEPS.record,
    );
  }

  /** The steps of several matches, grouped by match id, each in sequence order. */
  async stepsOf(matchIds: readonly string[]): Promise<Map<string, StepRecordRow[]>> {
    const byMatch = new Map<string, StepRecordRow[]>(matchIds.map((id) => [id, []]));
    if (matchIds.length === 0) return byMatch;
    const rows = await this.sql.query<Row>(
      `${STEP_SELECT} WHERE ${S.matchId} IN (SELECT jsonb_array_elements_text($1::text::jsonb)) ORDER BY ${S.matchId}, ${S.seq}`,
      [JSON.stringify(matchIds)],
    );
    for (const row of rows) byMatch.get(row[S.matchId] as string)!.push(STEPS.record(row));
    return byMatch;
  }

  /** Up to `limit` matches in (created_at, id) order (or its reverse), after `after`. */
  async matches(
    filter: MatchFilter,
    limit: number,
    after?: MatchPosition,
    order: MatchOrder = "asc",
  ): Promise<MatchRecord[]> {
    const w = where(filter, after, order);
    const direction = order === "asc" ? "" : " DESC";
    const rows = await this.sql.query<Row>(
      `${MATCH_SELECT}${w.sql} ORDER BY ${M.createdAt}${direction}, ${M.id}${direction} LIMIT $${w.params.length + 1}`,
      [...w.params, limit],
    );
    return rows.map(MATCHES.record);
  }

  /**
   * Up to `limit` ended matches in the order they ended (`end_seq`), after the one with `afterEndSeq`: the
   * order exports read in, so a match that ends late is read after every match that ended before it.
   */
  async endedMatches(filter: MatchFilter, limit: number, afterEndSeq = 0): Promise<MatchRecord[]> {
    const w = where({ ...filter, ended: true });
    const clause = `${w.sql ? `${w.sql} AND` : " WHERE"} ${M.endSeq} > $${w.params.length + 1}`;
    const rows = await this.sql.query<Row>(
      `${MATCH_SELECT}${clause} ORDER BY ${M.endSeq} LIMIT $${w.params.length + 2}`,
      [...w.params, afterEndSeq, limit],
    );
    return rows.map(MATCHES.record);
  }

  /** Closes a match that will never be played on: every seat ERROR, ended by `reason`, with `why` as its error. */
  closeUnplayed(record: MatchRecord, reason: "aborted" | "error", why: string): Promise<void> {
    return this.writer.writeMatch({
      ...record,
      statuses: record.statuses.map(() => "ERROR"),
      endReason: reason,
      error: why,
      endedAt: new Date(),
    });
  }

  /**
   * Matches that never ended (a server stopped mid-match), oldest first, with their invites and seat keys: all of
   * them, or those of `ids`.
   */
  async unfinished(ids?: readonly string[]): Promise<MatchRecord[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${MATCHES.selected}, ${M.invite}, ${M.seatKeys} FROM matches WHERE ${M.endedAt} IS NULL${
        ids ? ` AND ${M.id} = ANY($1::text[])` : ""
      } ORDER BY ${M.createdAt}, ${M.id}`,
      ids ? [textArray(ids)] : [],
    );
    return rows.map(MATCHES.record);
  }

  /** Which of `ids` the store has, each with whether it has ended. */
  async ended(ids: readonly string[]): Promise<Map<string, boolean>> {
    const rows = await this.sql.query<{ id: string; ended: boolean }>(
      `SELECT ${M.id} AS id, ${M.endedAt} IS NOT NULL AS ended FROM matches WHERE ${M.id} = ANY($1::text[])`,
      [textArray(ids)],
    );
    return new Map(rows.map((r) => [r.id, r.ended]));
  }

  /**
   * Writes everything waiting (for at most `timeoutMs`), then closes the database; `last` runs with everything
   * written and the database still open (a server gives up its lease there, so a peer takes its matches over with
   * their logs whole). Returns how many records could not be written in time (none of them had been acknowledged).
   */
  async close(timeoutMs?: number, last?: () => Promise<void>): Promise<number> {
    clearInterval(this.analyzer);
    const unwritten = await this.writer.close(timeoutMs);
    await last?.();
    await this.sql.close().catch(() => {});
    this.unlock();
    return unwritten;
  }
}
