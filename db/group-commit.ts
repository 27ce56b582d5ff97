import { setImmediate } from "node:timers";
import { type PlayerRow, playerRow } from "./players.ts";
import type { MatchRecord, StepRecordRow } from "./records.ts";
import { MATCHES } from "./tables/matches.ts";
import { STEPS } from "./tables/steps.ts";
import { NotCopyable } from "./tables/table.ts";
import type { NodeLife } from "./nodes.ts";
import type { Sql } from "./sql.ts";
import { StoreDownError, yieldToEventLoop } from "./sql.ts";

export interface GroupCommitOptions {
  /**
   * How long the first write of a batch waits for others before the batch is written (ms); 0 writes
   * on the next turn of the event loop. While a batch is being written the next one gathers anyway.
   */
  readonly windowMs?: number;
  /**
   * Batches written at once, never two holding records of the same match. More than one pays where the
   * database's round trip, not its work, is the bound (a remote server): on a local database with few cores,
   * the smaller batches cost more than the overlap saves.
   */
  readonly maxInFlight?: number;
  /** Most step rows in one statement. */
  readonly maxBatch?: number;
  /** Records (match rows and step rows) that may wait unwritten (the store being down) before `full` turns true. */
  readonly maxBuffer?: number;
  /** Backoff between retries while the database is unreachable. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** Told of each failed write and of the recovery, for the server's log. */
  readonly onStatus?: (status: { readonly ok: boolean; readonly message: string }) => void;
}

export const DEFAULT_GROUP_COMMIT = {
  windowMs: 0,
  maxInFlight: 1,
  maxBatch: 4000,
  maxBuffer: 100_000,
  retryMinMs: 50,
  retryMaxMs: 2000,
} as const;

/** A match another server process took over (its owner's lease lapsed): its records are that process's to write. */
export class MatchMovedError extends Error {
  constructor(readonly matchId: string) {
    super(`match ${matchId} is now played by another server process`);
    this.name = "MatchMovedError";
  }
}

/** A step whose sequence number another writer already used: the match's log is not ours to extend. */
export class SequenceConflictError extends Error {
  constructor(readonly matchId: string, readonly seq: number) {
    super(`match ${matchId} already has a step ${seq} from another writer`);
    this.name = "SequenceConflictError";
  }
}

interface Waiter {
  readonly matchId: string;
  resolve(): void;
  reject(error: Error): void;
}

interface Batch {
  /** The latest row of each match written in this batch (a row is the whole record, so the last wins). */
  readonly matches: Map<string, MatchRecord>;
  readonly steps: StepRecordRow[];
  /** Decisions appended in bulk (a match nobody waits on): COPYed ahead of the batch's statement where the store can. */
  readonly bulk: StepRecordRow[];
  readonly waiters: Waiter[];
}

const emptyBatch = (): Batch => ({ matches: new Map(), steps: [], bulk: [], waiters: [] });

/** `earlier` then `later` as one batch: steps and waiters in order, the later row of a match winning. */
const merge = (earlier: Batch, later: Batch): Batch => ({
  matches: new Map([...earlier.matches, ...later.matches]),
  steps: [...earlier.steps, ...later.steps],
  bulk: [...earlier.bulk, ...later.bulk],
  waiters: [...earlier.waiters, ...later.waiters],
});

const M = MATCHES.column;
const S = STEPS.column;

/** What rewriting a match's row changes: its result, as it goes along (its header is fixed at creation). */
const MATCH_UPDATES = [
  M.seats,
  M.statuses,
  M.returns,
  M.endReason,
  M.culprit,
  M.steps,
  M.startedAt,
  M.endedAt,
  M.error,
  M.seatKeys,
]
  .map((c) => `${c} = EXCLUDED.${c}`).join(", ");

/**
 * One statement writes a whole batch: match rows upserted, step rows appended. A single statement is
 * atomic without BEGIN/COMMIT round trips, and both backends parse the JSON parameters the same way.
 * Steps already present are skipped (a retry after a lost reply); the count tells if any were. A match
 * closed in error stays closed: a row of it queued before the failure may commit after `closeInError`.
 * `fenced` (a server process on PostgreSQL, which several processes may share): only the owner writes. The
 * batch holds its owner life's node row (`$4`, `$5`, see db/nodes.ts) while no peer took that life over, and writes
 * nothing once one did: a peer takes a lapsed life's matches only after locking that row and marking it taken over,
 * so a batch of the lapsed owner lands before its matches change hands or not at all (`owned` says which). However
 * many matches the batch touches, the fence is one lookup in a table of a few rows. The embedded store belongs to one
 * process: nobody can take its matches. A match row is kept from being overwritten by another owner's either way.
 */
function writeBatch(fenced: boolean): string {
  const onlyIfOwned = fenced ? "\n  WHERE EXISTS (SELECT FROM fence)" : "";
  return `
WITH ${
    fenced
      ? `fence AS (
  SELECT FROM nodes WHERE id = $4 AND epoch = $5::integer AND taken_at IS NULL FOR KEY SHARE
), `
      : ""
  }m AS (
  INSERT INTO matches (${MATCHES.written})
  SELECT * FROM json_to_recordset($1::text::json) AS r(${MATCHES.recordset})${onlyIfOwned}
  ON CONFLICT (${M.id}) DO UPDATE SET ${MATCH_UPDATES}
    WHERE matches.${M.endReason} IS DISTINCT FROM 'error' AND matches.${M.owner} IS NOT DISTINCT FROM EXCLUDED.${M.owner}
      AND matches.${M.ownerEpoch} IS NOT DISTINCT FROM EXCLUDED.${M.ownerEpoch}
  RETURNING 1
), s AS (
  INSERT INTO steps (${STEPS.written})
  SELECT * FROM json_to_recordset($2::text::json) AS r(${STEPS.recordset})${onlyIfOwned}
  ON CONFLICT (${S.matchId}, ${S.seq}) DO NOTHING
  RETURNING 1
), p AS (
  INSERT INTO players (id, kind, name, details)
  SELECT * FROM json_to_recordset($3::text::json) AS r(id text, kind text, name text, details jsonb)
  ON CONFLICT (id) DO UPDATE SET details = EXCLUDED.details WHERE players.details IS DISTINCT FROM EXCLUDED.details
)
SELECT (SELECT count(*) FROM s)::integer AS inserted,
  ${fenced ? "EXISTS (SELECT FROM fence)" : "true"} AS owned`;
}
const WRITE_BATCH = { fenced: writeBatch(true), alone: writeBatch(false) };

/** Ends match `$1` in error, unless it ended: statuses `$2`, error `$3`, steps `$4`, ended at `$5`. */
const CLOSE_IN_ERROR = `UPDATE matches SET ${M.statuses} = $2::text::jsonb, ${M.endReason} = 'error', ${M.error} = $3,
  ${M.steps} = $4, ${M.endedAt} = $5 WHERE ${M.id} = $1 AND ${M.endedAt} IS NULL`;

/** Of the steps keyed `$1` ({id, seq}: a match's id), the first of each match that another writer than `$2` wrote. */
const FOREIGN_STEPS = `SELECT s.${S.matchId} AS id, min(s.${S.seq}) AS seq FROM steps s
  JOIN json_to_recordset($1::text::json) AS k(id text, seq integer) ON s.${S.matchId} = k.id AND s.${S.seq} = k.seq
  WHERE s.${S.writer} <> $2 GROUP BY s.${S.matchId}`;

/** Connection failures worth retrying; anything else is the batch's own fault. */
export function transient(error: unknown): boolean {
  if (error instanceof StoreDownError) return true;
  const code = String((error as { code?: unknown })?.code ?? "");
  // 40001/40P01: a serialization failure or a deadlock (a batch meeting a peer's takeover): trying again succeeds.
  return /^(08|57P0[123]|53|40001|40P01)/.test(code) ||
    /^(CONNECTION_|CONNECT_TIMEOUT|ECONN|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)/.test(code) ||
    /connection|terminat|closed/i.test(String((error as Error)?.message));
}

/** How often a store that fails or does not answer is reported while it stays so, and how long a batch may go
 * unanswered before that counts as not answering. */
const REPORT_EVERY_MS = 10_000;

/** One batch per match it holds, in the batch's order: a record one match cannot write fails only that match. */
function byMatch(batch: Batch): Batch[] {
  const parts = new Map<string, Batch>();
  const part = (id: string) => {
    let found = parts.get(id);
    if (!found) parts.set(id, found = emptyBatch());
    return found;
  };
  for (const [id, match] of batch.matches) part(id).matches.set(id, match);
  for (const step of batch.steps) part(step.matchId).steps.push(step);
  for (const step of batch.bulk) part(step.matchId).bulk.push(step);
  for (const waiter of batch.waiters) part(waiter.matchId).waiters.push(waiter);
  return [...parts.values()];
}

const matchIds = (batch: Batch) =>
  new Set([...batch.matches.keys(), ...batch.steps.map((s) => s.matchId), ...batch.bulk.map((s) => s.matchId)]);

const isEmpty = (batch: Batch) =>
  batch.matches.size + batch.steps.length + batch.bulk.length + batch.waiters.length === 0;

/** The records and waiters of the matches in `ids`, and the rest, each in the batch's order. */
function split(batch: Batch, ids: ReadonlySet<string>): [Batch, Batch] {
  const yes = emptyBatch(), no = emptyBatch();
  for (const [id, match] of batch.matches) (ids.has(id) ? yes : no).matches.set(id, match);
  for (const step of batch.steps) (ids.has(step.matchId) ? yes : no).steps.push(step);
  for (const step of batch.bulk) (ids.has(step.matchId) ? yes : no).bulk.push(step);
  for (const waiter of batch.waiters) (ids.has(waiter.matchId) ? yes : no).waiters.push(waiter);
  return [yes, no];
}

/**
 * Group commit for every live match of a server: writes wait a short window, then go to the database
 * together, and each write's promise resolves once its batch is durable. Decisions go with COPY where the
 * store has it (the embedded one), match rows and the rest in one statement. Up to `maxInFlight` batches are
 * written at once (one by default), never two holding records of the same match, so a match's writes land in
 * order; the next batch gathers while they commit.
 * While the database is unreachable the batch is retried with backoff and new writes keep gathering;
 * past `maxBuffer` the store reports itself `full` so the server refuses new matches. A batch the database
 * refuses for good is retried match by match, so only the match whose record is at fault fails.
 */
export class GroupCommit {
  private readonly options: Required<Omit<GroupCommitOptions, "onStatus">> & Pick<GroupCommitOptions, "onStatus">;
  private next: Batch = emptyBatch();
  /** Batches being written, each with when it was sent; no match has records in two of them. */
  private readonly inFlight = new Map<Batch, number>();
  private scheduled = false;
  private retryMs = 0;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private failing?: string;
  /** Since when writes fail or hang, and when that was last reported. */
  private troubleSince?: number;
  private reportedAt = 0;
  private readonly watchdog: ReturnType<typeof setInterval>;
  private closed = false;
  private idle: (() => void)[] = [];
  /** Waiting for `caughtUp`. */
  private catchingUp: (() => void)[] = [];
  /** Players this writer has written, with what named them (see `unseenPlayers`). */
  private readonly seenPlayers = new Map<string, string>();

  private life?: NodeLife;
  /** The life each batch taken from the queue is written for (what was queued, then, was that life's). */
  private readonly batchOwner = new WeakMap<Batch, NodeLife | undefined>();

  /**
   * The server process's life this writer writes for (see db/nodes.ts): new matches are recorded as its, and
   * records of a match that has another owner are not written (their waiters get MatchMovedError).
   */
  get owner(): NodeLife | undefined {
    return this.life;
  }

  /**
   * A new life of the process (it joined again after its lease lapsed): what an earlier life queued is of matches
   * it handed over, and is never written now, under this life's name; its waiters get MatchMovedError.
   */
  set owner(life: NodeLife | undefined) {
    const earlier = this.life;
    this.life = life;
    if (earlier === undefined) return;
    const queued = this.next;
    this.next = emptyBatch();
    for (const w of queued.waiters) w.reject(new MatchMovedError(w.matchId));
  }

  constructor(private readonly sql: Sql, readonly writer: string, options: GroupCommitOptions = {}) {
    this.options = { ...DEFAULT_GROUP_COMMIT, ...options };
    this.watchdog = setInterval(() => this.report(), 1000);
    Deno.unrefTimer(this.watchdog);
  }

  /** Writes (or rewrites) a match's row; resolves once it is durable. */
  writeMatch(match: MatchRecord): Promise<void> {
    this.next.matches.set(match.id, match);
    return this.wait(match.id);
  }

  /**
   * Appends a decision; or a match's decisions in bulk, in order, written with COPY (for a match whose
   * writes nobody waits on, many at a time). Resolves once they are durable.
   */
  appendStep(step: StepRecordRow | readonly StepRecordRow[]): Promise<void> {
    if (!Array.isArray(step)) {
      this.next.steps.push(step as StepRecordRow);
      return this.wait((step as StepRecordRow).matchId);
    }
    for (const row of step) this.next.bulk.push(row);
    return this.wait(step[0].matchId);
  }

  /**
   * Ends a match in error with a statement of its own, for a match whose records the database refused:
   * only server-made values are written (statuses, the reason), so it succeeds where the records failed.
   * Retried while the database is unreachable.
   */
  async closeInError(
    matchId: string,
    end: { statuses: readonly string[]; error: string; steps: number; endedAt: Date },
  ): Promise<void> {
    for (let delay = this.options.retryMinMs;; delay = Math.min(this.options.retryMaxMs, delay * 2)) {
      try {
        await this.sql.query(
          CLOSE_IN_ERROR,
          [matchId, JSON.stringify(end.statuses), end.error, end.steps, end.endedAt.toISOString()],
        );
        return;
      } catch (error) {
        if (!transient(error) || this.closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Records (match rows and step rows) that may wait unwritten before the store refuses new matches. */
  get capacity(): number {
    return this.options.maxBuffer;
  }

  /** Records not yet durable. */
  get buffered(): number {
    const size = (b?: Batch) => (b ? b.steps.length + b.bulk.length + b.matches.size : 0);
    let total = size(this.next);
    for (const batch of this.inFlight.keys()) total += size(batch);
    return total;
  }

  /** True while the buffer is past its bound, whatever kind of match its records are of: new matches are refused. */
  get full(): boolean {
    return this.buffered >= this.options.maxBuffer;
  }

  /**
   * True while matches played wholly in-process must wait, and new ones be refused: the store fails or does not
   * answer, or decisions written in bulk fill half the buffer. Such matches acknowledge nothing to anyone, so they
   * pause rather than grow the buffer; the rest of it is kept for the matches of players, whose acks wait on it.
   */
  get behind(): boolean {
    if (this.failure !== undefined || this.full) return true;
    let bulk = this.next.bulk.length;
    for (const batch of this.inFlight.keys()) bulk += batch.bulk.length;
    return bulk >= this.options.maxBuffer / 2;
  }

  /** Resolves once `behind` is false. */
  caughtUp(): Promise<void> {
    if (!this.behind) return Promise.resolve();
    return new Promise((resolve) => this.catchingUp.push(resolve));
  }

  /** Tells those waiting for `caughtUp`, once it is so. */
  private wakeIfCaughtUp(): void {
    if (this.catchingUp.length > 0 && !this.behind) this.catchingUp.splice(0).forEach((resolve) => resolve());
  }

  /** Why writes are failing (or not answered) right now, or undefined when they are not. */
  get failure(): string | undefined {
    return this.failing ?? this.hang();
  }

  /** Resolves when everything written so far is durable. */
  drain(): Promise<void> {
    if (this.inFlight.size === 0 && this.next.waiters.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Writes what is waiting (retrying as usual) for at most `timeoutMs`, then refuses further writes. Returns
   * how many records were not known to be written in time (a batch in flight may still land): none of them
   * was acknowledged to anyone.
   */
  async close(timeoutMs = Infinity): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([this.drain(), gaveUp]);
    clearTimeout(timer);
    this.closed = true;
    clearInterval(this.watchdog);
    clearTimeout(this.retryTimer);
    const unwritten = this.buffered;
    const stopped = new Error("the server stopped before this record could be written");
    for (const batch of [...this.inFlight.keys(), this.next]) for (const w of batch.waiters) w.reject(stopped);
    this.next = emptyBatch();
    return unwritten;
  }

  private wait(matchId: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the replay store is closed"));
    const done = new Promise<void>((resolve, reject) => this.next.waiters.push({ matchId, resolve, reject }));
    this.schedule();
    return done;
  }

  private schedule(): void {
    // While a failed batch waits out its backoff, new writes join it rather than hurry the retry.
    if (this.scheduled || this.inFlight.size >= this.options.maxInFlight || this.retryTimer) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      void this.flush();
    };
    if (this.options.windowMs <= 0) setImmediate(go);
    else setTimeout(go, this.options.windowMs);
  }

  /**
   * The next batch to write: what waits, less the records of matches that have records in flight (a match's
   * records land in order) and of matches past `maxBatch` decisions, bulk ones too. A match goes whole or waits whole
   * (its rows then never land after its decisions), in the order its records came; the first always goes.
   */
  private take(): Batch {
    const all = this.next;
    if (this.inFlight.size === 0 && all.steps.length + all.bulk.length <= this.options.maxBatch) {
      this.next = emptyBatch();
      return all;
    }
    const held = new Set<string>();
    for (const batch of this.inFlight.keys()) for (const id of matchIds(batch)) held.add(id);
    const decisions = new Map<string, number>();
    for (const step of [...all.steps, ...all.bulk]) decisions.set(step.matchId, (decisions.get(step.matchId) ?? 0) + 1);
    let going = 0;
    for (const [id, n] of decisions) {
      if (held.has(id)) continue;
      if (going > 0 && going + n > this.options.maxBatch) held.add(id);
      else going += n;
    }
    const [stay, go] = split(all, held);
    this.next = stay;
    return go;
  }

  private async flush(): Promise<void> {
    const next = this.next;
    if (
      this.closed || this.inFlight.size >= this.options.maxInFlight || this.retryTimer ||
      (next.waiters.length === 0 && next.steps.length + next.bulk.length === 0)
    ) {
      return;
    }
    const batch = this.take();
    if (isEmpty(batch)) return; // all of it waits on matches in flight
    this.batchOwner.set(batch, this.life);
    this.inFlight.set(batch, performance.now());
    // Waiters are told only once the batch is no longer in flight, so `buffered` is true when they run.
    const settle: (() => void)[] = [];
    const outcome = await this.commit(batch);
    let error: unknown;
    if ("settle" in outcome) settle.push(outcome.settle);
    else if (!transient(outcome.error) && matchIds(batch).size > 1) {
      // Refused for good: write match by match, so that only the match whose record is at fault fails.
      const parts = byMatch(batch);
      for (const part of parts) this.batchOwner.set(part, this.batchOwner.get(batch));
      for (let i = 0; i < parts.length && error === undefined; i++) {
        const part = await this.commit(parts[i]);
        if ("settle" in part) settle.push(part.settle);
        else if (transient(part.error)) {
          error = part.error;
          const rest = parts.slice(i).reduce(merge);
          this.batchOwner.set(rest, this.batchOwner.get(batch));
          this.requeue(rest);
        } else settle.push(() => this.fail(parts[i], part.error));
      }
    } else if (transient(outcome.error)) {
      error = outcome.error;
      this.requeue(batch);
    } else settle.push(() => this.fail(batch, outcome.error));
    if (this.sql.backend === "pglite") await yieldToEventLoop();
    this.inFlight.delete(batch);
    for (const done of settle) done();
    this.wakeIfCaughtUp();
    if (error !== undefined && !this.closed) {
      this.failing = (error as Error).message ?? String(error);
      this.report();
      this.retryMs = Math.min(this.options.retryMaxMs, Math.max(this.options.retryMinMs, this.retryMs * 2));
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        void this.flush();
      }, this.retryMs);
      return;
    }
    if (!this.retryTimer) {
      this.recovered(); // a batch beside this one may have failed and wait for its retry
      this.wakeIfCaughtUp();
    }
    if (this.next.waiters.length > 0) void this.flush();
    else if (this.inFlight.size === 0) this.idle.splice(0).forEach((resolve) => resolve());
  }

  /**
   * Writes one batch: its decisions with COPY where the store has it, then the rest in one statement. How to
   * tell its waiters, or the error.
   */
  private async commit(batch: Batch): Promise<{ settle: () => void } | { error: unknown }> {
    let conflicts = new Map<string, number>();
    let moved = new Set<string>();
    try {
      const owner = this.batchOwner.get(batch);
      const players = this.unseenPlayers(batch);
      const fenced = this.sql.backend === "postgres" && owner !== undefined;
      /** The batch statement for the match rows and `steps`. */
      const statement = (steps: readonly StepRecordRow[]) => ({
        text: fenced ? WRITE_BATCH.fenced : WRITE_BATCH.alone,
        params: [
          JSON.stringify([...batch.matches.values()].map((m) => MATCHES.row(m, owner))),
          JSON.stringify(steps.map((s) => STEPS.row(s, this.writer))),
          JSON.stringify(players),
          ...(fenced ? [owner.node, String(owner.epoch)] : []),
        ],
      });
      // COPY is the embedded store's, which one process holds: no peer can take its matches, so it needs no fence.
      // It and the statement for the match rows are one transaction: a match's rows (its join, its start) are never
      // left behind by decisions of it that landed. Rows already there (a write whose reply was lost, then retried)
      // make COPY refuse them all: they go through the statement instead, which skips what is there and checks
      // whose it is.
      const all = [...batch.steps, ...batch.bulk];
      const rows = batch.matches.size > 0 ? statement([]) : undefined;
      const copied = all.length > 0 && this.sql.copyIn !== undefined &&
        await this.copySteps(all, rows);
      const steps = copied ? [] : all;
      let written: { inserted: number; owned: boolean } | undefined;
      if (copied) written = copied[0];
      else if (steps.length > 0 || batch.matches.size > 0) {
        const { text, params } = statement(steps);
        [written] = await this.sql.prepared<{ inserted: number; owned: boolean }>(text, params);
      }
      if (written) {
        for (const player of players) this.seenPlayers.set(player.id, JSON.stringify(player.details));
        if (!written.owned) moved = matchIds(batch);
        else if (written.inserted < steps.length) conflicts = await this.conflicts(steps);
      }
    } catch (caught) {
      return { error: caught ?? new Error("the replay store failed without saying why") };
    }
    return {
      settle: () => {
        for (const w of batch.waiters) {
          const seq = conflicts.get(w.matchId);
          if (moved.has(w.matchId)) w.reject(new MatchMovedError(w.matchId));
          else if (seq === undefined) w.resolve();
          else w.reject(new SequenceConflictError(w.matchId, seq));
        }
      },
    };
  }

  /**
   * The players seated in the batch's matches that this writer has not yet written as they are now, one row
   * each, in id order (concurrent writers then lock them in one order). Almost always none: a player is
   * written when first seated, and again only when what names it (an LLM's endpoint) changes.
   */
  private unseenPlayers(batch: Batch): PlayerRow[] {
    const unseen = new Map<string, PlayerRow>();
    for (const match of batch.matches.values()) {
      for (const seat of match.seats) {
        const player = playerRow(seat);
        if (player && this.seenPlayers.get(player.id) !== JSON.stringify(player.details)) {
          unseen.set(player.id, player);
        }
      }
    }
    return [...unseen.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /**
   * COPYs decisions, then `then` (the batch's match rows) in the same transaction; false when some decisions were
   * already there (a unique violation), or `then` was refused, and nothing was written: the batch statement writes
   * it all then, skipping what is there, or refuses it again, saying why.
   */
  private async copySteps(
    rows: readonly StepRecordRow[],
    then: Parameters<NonNullable<Sql["copyIn"]>>[2],
  ): Promise<[{ inserted: number; owned: boolean }] | [] | false> {
    let text = "";
    try {
      for (const row of rows) text += STEPS.copyLine(row, this.writer);
    } catch (error) {
      if (error instanceof NotCopyable) return false;
      throw error;
    }
    try {
      return await this.sql.copyIn!<{ inserted: number; owned: boolean }>(`steps (${STEPS.written})`, text, then) as
        | [{ inserted: number; owned: boolean }]
        | [];
    } catch (error) {
      if (transient(error)) throw error;
      return false;
    }
  }

  /**
   * Rejects the batch's waiters, and drops what its matches queued behind it (rejecting those waiters too):
   * written after the refused record, it would leave a hole in the match's log.
   */
  private fail(batch: Batch, error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    for (const w of batch.waiters) w.reject(failure);
    const [behind, rest] = split(this.next, matchIds(batch));
    this.next = rest;
    for (const w of behind.waiters) w.reject(failure);
  }

  private recovered(): void {
    if (this.failing !== undefined || this.troubleSince !== undefined) {
      const seconds = ((performance.now() - (this.troubleSince ?? performance.now())) / 1000).toFixed(1);
      this.options.onStatus?.({ ok: true, message: `the replay store is writable again (after ${seconds} s)` });
    }
    this.failing = undefined;
    this.troubleSince = undefined;
    this.reportedAt = 0;
    this.retryMs = 0;
  }

  /** A write that has had no answer for a while: the database hangs (or its network does). */
  private hang(): string | undefined {
    if (this.inFlight.size === 0) return undefined;
    const seconds = (performance.now() - Math.min(...this.inFlight.values())) / 1000;
    return seconds >= REPORT_EVERY_MS / 1000
      ? `no answer from ${this.sql.where} for ${Math.round(seconds)} s`
      : undefined;
  }

  /** Says what the store waits for: at the first failure, then every REPORT_EVERY_MS while it lasts. */
  private report(): void {
    const trouble = this.failing ?? this.hang();
    if (trouble === undefined || this.closed) return;
    const now = performance.now();
    this.troubleSince ??= now;
    if (this.reportedAt !== 0 && now - this.reportedAt < REPORT_EVERY_MS) return;
    const first = this.reportedAt === 0;
    this.reportedAt = now;
    const seconds = Math.round((now - this.troubleSince) / 1000);
    this.options.onStatus?.({
      ok: false,
      message: first
        ? `replay store write failed (${trouble}); retrying — acks wait until it is written`
        : `still waiting for the replay store (${seconds} s): ${trouble}; ${this.buffered} records wait, ` +
          `acks are held${this.full ? " and new matches refused" : ""}`,
    });
  }

  /**
   * Puts a failed batch back in front of what gathered meanwhile (newer match rows win); one of an earlier life of
   * the process is dropped instead (see `owner`).
   */
  private requeue(batch: Batch): void {
    if (this.batchOwner.get(batch) !== this.life) {
      for (const w of batch.waiters) w.reject(new MatchMovedError(w.matchId));
      return;
    }
    this.next = merge(batch, this.next);
  }

  /**
   * Some steps were already there: ours from a commit whose reply was lost (fine), or another writer's
   * (the matches whose log is not ours, with the first such sequence number).
   */
  private async conflicts(steps: readonly StepRecordRow[]): Promise<Map<string, number>> {
    const keys = JSON.stringify(steps.map((s) => ({ id: s.matchId, seq: s.seq })));
    const foreign = await this.sql.query<{ id: string; seq: number }>(FOREIGN_STEPS, [keys, this.writer]);
    return new Map(foreign.map((row) => [row.id, row.seq]));
  }
}
