import { setImmediate } from "node:timers";
import type { MatchRecord, StepRecordRow } from "./records.ts";
import type { Sql } from "./sql.ts";
import { yieldToEventLoop } from "./sql.ts";

export interface GroupCommitOptions {
  /**
   * How long the first write of a batch waits for others before the batch is written (ms); 0 writes
   * on the next turn of the event loop. While a batch is being written the next one gathers anyway.
   */
  readonly windowMs?: number;
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
  maxBatch: 4000,
  maxBuffer: 100_000,
  retryMinMs: 50,
  retryMaxMs: 2000,
} as const;

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
  readonly waiters: Waiter[];
}

const emptyBatch = (): Batch => ({ matches: new Map(), steps: [], waiters: [] });

const MATCH_COLUMNS = "id text, game text, game_version integer, variant text, config jsonb, seed text, " +
  "seats jsonb, conduct jsonb, statuses jsonb, returns jsonb, end_reason text, culprit integer, steps integer, " +
  "created_at timestamptz, started_at timestamptz, ended_at timestamptz";
const STEP_COLUMNS = "match_id text, seq integer, turn integer, seat integer, observation json, action json, " +
  "legal boolean, error json, attempts json, defaulted text, latency_ms real, meta json, rewards json, " +
  "writer text, at timestamptz";
const names = (columns: string) => columns.split(", ").map((c) => c.split(" ")[0]).join(", ");

/**
 * One statement writes a whole batch: match rows upserted, step rows appended. A single statement is
 * atomic without BEGIN/COMMIT round trips, and both backends parse the JSON parameters the same way.
 * Steps already present are skipped (a retry after a lost reply); the count tells if any were.
 */
const WRITE_BATCH = `
WITH m AS (
  INSERT INTO matches (${names(MATCH_COLUMNS)})
  SELECT * FROM json_to_recordset($1::text::json) AS r(${MATCH_COLUMNS})
  ON CONFLICT (id) DO UPDATE SET seats = EXCLUDED.seats, statuses = EXCLUDED.statuses,
    returns = EXCLUDED.returns, end_reason = EXCLUDED.end_reason, culprit = EXCLUDED.culprit,
    steps = EXCLUDED.steps, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at
  RETURNING 1
), s AS (
  INSERT INTO steps (${names(STEP_COLUMNS)})
  SELECT * FROM json_to_recordset($2::text::json) AS r(${STEP_COLUMNS})
  ON CONFLICT (match_id, seq) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM s)::integer AS inserted`;

function matchRow(m: MatchRecord): Record<string, unknown> {
  return {
    id: m.id,
    game: m.game,
    game_version: m.gameVersion,
    variant: m.variant,
    config: m.config,
    seed: m.seed,
    seats: m.seats,
    conduct: m.conduct,
    statuses: m.statuses,
    returns: m.returns,
    end_reason: m.endReason,
    culprit: m.culprit,
    steps: m.steps,
    created_at: m.createdAt,
    started_at: m.startedAt,
    ended_at: m.endedAt,
  };
}

function stepRow(s: StepRecordRow, writer: string): Record<string, unknown> {
  return {
    match_id: s.matchId,
    seq: s.seq,
    turn: s.turn,
    seat: s.seat,
    observation: s.observation,
    action: s.action ?? null,
    legal: s.legal,
    error: s.error,
    attempts: s.attempts,
    defaulted: s.defaulted,
    latency_ms: s.latencyMs,
    meta: s.meta,
    rewards: s.rewards,
    writer,
    at: s.at,
  };
}

/** Connection failures worth retrying; anything else is the batch's own fault. */
function transient(error: unknown): boolean {
  const code = String((error as { code?: unknown })?.code ?? "");
  return /^(08|57P0[123]|53)/.test(code) ||
    /^(CONNECTION_|CONNECT_TIMEOUT|ECONN|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)/.test(code) ||
    /connection|terminat|closed/i.test(String((error as Error)?.message));
}

/**
 * Group commit for every live match of a server: writes wait a short window, then go to the database
 * together in one statement, and each write's promise resolves once its batch is durable. One batch is
 * in flight at a time, so a match's writes land in order and the next batch gathers while one commits.
 * While the database is unreachable the batch is retried with backoff and new writes keep gathering;
 * past `maxBuffer` the store reports itself `full` so the server refuses new matches.
 */
export class GroupCommit {
  private readonly options: Required<Omit<GroupCommitOptions, "onStatus">> & Pick<GroupCommitOptions, "onStatus">;
  private next: Batch = emptyBatch();
  private inFlight?: Batch;
  private scheduled = false;
  private retryMs = 0;
  private failing?: string;
  private closed = false;
  private idle: (() => void)[] = [];

  constructor(private readonly sql: Sql, readonly writer: string, options: GroupCommitOptions = {}) {
    this.options = { ...DEFAULT_GROUP_COMMIT, ...options };
  }

  /** Writes (or rewrites) a match's row; resolves once it is durable. */
  writeMatch(match: MatchRecord): Promise<void> {
    this.next.matches.set(match.id, match);
    return this.wait(match.id);
  }

  /** Appends a decision; resolves once it is durable. */
  appendStep(step: StepRecordRow): Promise<void> {
    this.next.steps.push(step);
    return this.wait(step.matchId);
  }

  /** Records not yet durable. */
  get buffered(): number {
    const size = (b?: Batch) => (b ? b.steps.length + b.matches.size : 0);
    return size(this.next) + size(this.inFlight);
  }

  /** True while the buffer is past its bound: new matches must be refused. */
  get full(): boolean {
    return this.buffered >= this.options.maxBuffer;
  }

  /** Why writes are failing right now, or undefined when they are not. */
  get failure(): string | undefined {
    return this.failing;
  }

  /** Resolves when everything written so far is durable. */
  drain(): Promise<void> {
    if (!this.inFlight && this.next.waiters.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Writes what is waiting (retrying as usual), then refuses further writes. */
  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
  }

  private wait(matchId: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the replay store is closed"));
    const done = new Promise<void>((resolve, reject) => this.next.waiters.push({ matchId, resolve, reject }));
    this.schedule();
    return done;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      void this.flush();
    };
    if (this.options.windowMs <= 0) setImmediate(go);
    else setTimeout(go, this.options.windowMs);
  }

  private take(): Batch {
    const all = this.next;
    if (all.steps.length <= this.options.maxBatch) {
      this.next = emptyBatch();
      return all;
    }
    // Too many steps for one statement: split them, keeping the waiters with the last part.
    const batch: Batch = {
      matches: new Map(all.matches),
      steps: all.steps.splice(0, this.options.maxBatch),
      waiters: [],
    };
    all.matches.clear();
    return batch;
  }

  private async flush(): Promise<void> {
    if (this.inFlight || (this.next.waiters.length === 0 && this.next.steps.length === 0)) return;
    const batch = this.take();
    this.inFlight = batch;
    let error: unknown;
    let conflicts = new Map<string, number>();
    try {
      const matches = JSON.stringify([...batch.matches.values()].map(matchRow));
      const steps = JSON.stringify(batch.steps.map((s) => stepRow(s, this.writer)));
      const [{ inserted }] = await this.sql.query<{ inserted: number }>(WRITE_BATCH, [matches, steps]);
      if (inserted < batch.steps.length) conflicts = await this.conflicts(batch);
    } catch (caught) {
      error = caught;
    }
    if (this.sql.backend === "pglite") await yieldToEventLoop();
    this.inFlight = undefined;
    if (error === undefined) {
      if (this.failing) this.options.onStatus?.({ ok: true, message: "the replay store is writable again" });
      this.failing = undefined;
      this.retryMs = 0;
      for (const w of batch.waiters) {
        const seq = conflicts.get(w.matchId);
        if (seq === undefined) w.resolve();
        else w.reject(new SequenceConflictError(w.matchId, seq));
      }
    } else if (transient(error) && !this.closed) {
      this.requeue(batch);
      this.failing = (error as Error).message ?? String(error);
      this.options.onStatus?.({ ok: false, message: `replay store write failed (${this.failing}); retrying` });
      this.retryMs = Math.min(this.options.retryMaxMs, Math.max(this.options.retryMinMs, this.retryMs * 2));
      setTimeout(() => void this.flush(), this.retryMs);
      return;
    } else {
      const failure = error instanceof Error ? error : new Error(String(error));
      for (const w of batch.waiters) w.reject(failure);
    }
    if (this.next.waiters.length > 0) void this.flush();
    else if (!this.inFlight) this.idle.splice(0).forEach((resolve) => resolve());
  }

  /** Puts a failed batch back in front of what gathered meanwhile (newer match rows win). */
  private requeue(batch: Batch): void {
    const later = this.next;
    for (const [id, match] of later.matches) batch.matches.set(id, match);
    this.next = {
      matches: batch.matches,
      steps: [...batch.steps, ...later.steps],
      waiters: [...batch.waiters, ...later.waiters],
    };
  }

  /**
   * Some steps were already there: ours from a commit whose reply was lost (fine), or another writer's
   * (the matches whose log is not ours, with the first such sequence number).
   */
  private async conflicts(batch: Batch): Promise<Map<string, number>> {
    const keys = JSON.stringify(batch.steps.map((s) => ({ match_id: s.matchId, seq: s.seq })));
    const foreign = await this.sql.query<{ match_id: string; seq: number }>(
      `SELECT s.match_id, min(s.seq) AS seq FROM steps s
       JOIN json_to_recordset($1::text::json) AS k(match_id text, seq integer) ON s.match_id = k.match_id AND s.seq = k.seq
       WHERE s.writer <> $2 GROUP BY s.match_id`,
      [keys, this.writer],
    );
    return new Map(foreign.map((row) => [row.match_id, row.seq]));
  }
}
