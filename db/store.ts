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

const MATCH_COLUMNS = `id, game, game_version, variant, config, seed, seats, conduct, statuses, returns,
  end_reason, culprit, steps, created_at, started_at, ended_at, error, group_id, end_seq, rated`;
// The invite and the seat keys are capabilities: read back only to restore a match, never for the API or exports.
const MATCH_SELECT = `SELECT ${MATCH_COLUMNS} FROM matches`;

const STEP_SELECT = `SELECT match_id, seq, turn, seat, observation, action, input, legal, error, attempts, defaulted,
  latency_ms, meta, rewards, at, offered, legal_ids, prompt FROM steps`;

type Row = Record<string, unknown>;

const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));

function toMatch(r: Row): MatchRecord {
  return {
    id: r.id as string,
    game: r.game as string,
    gameVersion: r.game_version as number,
    variant: r.variant as string,
    config: r.config,
    seed: r.seed as string,
    seats: r.seats as MatchRecord["seats"],
    conduct: r.conduct,
    statuses: r.statuses as MatchRecord["statuses"],
    returns: (r.returns ?? null) as MatchRecord["returns"],
    endReason: (r.end_reason ?? null) as MatchRecord["endReason"],
    culprit: (r.culprit ?? null) as number | null,
    steps: r.steps as number,
    createdAt: date(r.created_at),
    startedAt: r.started_at == null ? null : date(r.started_at),
    endedAt: r.ended_at == null ? null : date(r.ended_at),
    error: (r.error ?? null) as string | null,
    group: (r.group_id ?? null) as string | null,
    rated: r.rated === true,
    endSeq: r.end_seq == null ? null : Number(r.end_seq),
    ...("invite" in r ? { invite: (r.invite ?? null) as string | null } : {}),
    ...("seat_keys" in r ? { seatKeys: (r.seat_keys ?? null) as (string | null)[] | null } : {}),
  };
}

function toStep(r: Row): StepRecordRow {
  return {
    matchId: r.match_id as string,
    seq: r.seq as number,
    turn: r.turn as number,
    seat: r.seat as number,
    observation: r.observation,
    action: r.action ?? null,
    input: r.input ?? null,
    legal: r.legal as boolean,
    error: (r.error ?? null) as StepRecordRow["error"],
    attempts: (r.attempts ?? []) as StepRecordRow["attempts"],
    defaulted: (r.defaulted ?? null) as StepRecordRow["defaulted"],
    latencyMs: Number(r.latency_ms),
    meta: (r.meta ?? null) as StepRecordRow["meta"],
    rewards: (r.rewards ?? null) as StepRecordRow["rewards"],
    at: date(r.at),
    offered: r.offered ?? null,
    legalIds: (r.legal_ids ?? null) as StepRecordRow["legalIds"],
    prompt: (r.prompt ?? null) as string | null,
  };
}

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
  if (filter.game !== undefined) add((n) => `game = ${n}`, filter.game);
  if (filter.version !== undefined) add((n) => `game_version = ${n}`, filter.version);
  if (filter.variant !== undefined) add((n) => `variant = ${n}`, filter.variant);
  if (filter.participant !== undefined) {
    add(
      (n) =>
        `(seats @> jsonb_build_array(jsonb_build_object('name', ${n}::text)) OR ` +
        `seats @> jsonb_build_array(jsonb_build_object('tokenId', ${n}::text)))`,
      filter.participant,
    );
  }
  if (filter.player !== undefined) {
    const { kind, names } = seatOfPlayer(filter.player)!;
    // Either name the seat may carry; both use the seats index.
    params.push(...names.map((name) => JSON.stringify([{ kind, name }])));
    const [a, b] = [params.length - 1, params.length];
    clauses.push(`(seats @> $${a}::text::jsonb OR seats @> $${b}::text::jsonb)`);
  }
  const seatOf = seatClause(filter, params);
  if (seatOf) clauses.push(seatOf);
  if (filter.status !== undefined && (END_REASONS as readonly string[]).includes(filter.status)) {
    add((n) => `end_reason = ${n}`, filter.status);
  }
  if (filter.from !== undefined) add((n) => `created_at >= ${n}`, filter.from.toISOString());
  if (filter.to !== undefined) add((n) => `created_at < ${n}`, filter.to.toISOString());
  if (filter.ended === true) clauses.push("ended_at IS NOT NULL");
  if (filter.ended === false) clauses.push("ended_at IS NULL");
  if (after) {
    params.push(after.createdAt, after.id);
    const beyond = order === "asc" ? ">" : "<";
    clauses.push(`(created_at, id) ${beyond} ($${params.length - 1}::timestamptz, $${params.length})`);
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
  if (seatStatus !== undefined) focal.push(`statuses->>(f.i - 1)::int = ${param(seatStatus)}`);
  if (filter.opponent !== undefined) {
    focal.push(
      `EXISTS (SELECT 1 FROM jsonb_array_elements(seats) WITH ORDINALITY AS o(seat, i) WHERE o.i <> f.i AND ${
        holds("o", filter.opponent)
      })`,
    );
  }
  const contains = filter.model === undefined
    ? ""
    : `seats @> ${param(JSON.stringify([{ model: filter.model }]))}::text::jsonb AND `;
  return `${contains}EXISTS (SELECT 1 FROM jsonb_array_elements(seats) WITH ORDINALITY AS f(seat, i) WHERE ${
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
    const rows = await this.sql.query<Row>(`${MATCH_SELECT} WHERE id = $1`, [id]);
    return rows.length ? toMatch(rows[0]) : undefined;
  }

  /** A match's decisions in sequence order. */
  async steps(matchId: string): Promise<StepRecordRow[]> {
    return (await this.sql.query<Row>(`${STEP_SELECT} WHERE match_id = $1 ORDER BY seq`, [matchId])).map(toStep);
  }

  /** The steps of several matches, grouped by match id, each in sequence order. */
  async stepsOf(matchIds: readonly string[]): Promise<Map<string, StepRecordRow[]>> {
    const byMatch = new Map<string, StepRecordRow[]>(matchIds.map((id) => [id, []]));
    if (matchIds.length === 0) return byMatch;
    const rows = await this.sql.query<Row>(
      `${STEP_SELECT} WHERE match_id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) ORDER BY match_id, seq`,
      [JSON.stringify(matchIds)],
    );
    for (const row of rows) byMatch.get(row.match_id as string)!.push(toStep(row));
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
      `${MATCH_SELECT}${w.sql} ORDER BY created_at${direction}, id${direction} LIMIT $${w.params.length + 1}`,
      [...w.params, limit],
    );
    return rows.map(toMatch);
  }

  /**
   * Up to `limit` ended matches in the order they ended (`end_seq`), after the one with `afterEndSeq`: the
   * order exports read in, so a match that ends late is read after every match that ended before it.
   */
  async endedMatches(filter: MatchFilter, limit: number, afterEndSeq = 0): Promise<MatchRecord[]> {
    const w = where({ ...filter, ended: true });
    const clause = `${w.sql ? `${w.sql} AND` : " WHERE"} end_seq > $${w.params.length + 1}`;
    const rows = await this.sql.query<Row>(
      `${MATCH_SELECT}${clause} ORDER BY end_seq LIMIT $${w.params.length + 2}`,
      [...w.params, afterEndSeq, limit],
    );
    return rows.map(toMatch);
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
      `SELECT ${MATCH_COLUMNS}, invite, seat_keys FROM matches WHERE ended_at IS NULL${
        ids ? " AND id = ANY($1::text[])" : ""
      } ORDER BY created_at, id`,
      ids ? [textArray(ids)] : [],
    );
    return rows.map(toMatch);
  }

  /** Which of `ids` the store has, each with whether it has ended. */
  async ended(ids: readonly string[]): Promise<Map<string, boolean>> {
    const rows = await this.sql.query<{ id: string; ended: boolean }>(
      "SELECT id, ended_at IS NOT NULL AS ended FROM matches WHERE id = ANY($1::text[])",
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
