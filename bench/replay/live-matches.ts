import { GroupCommit } from "../../db/group-commit.ts";
import type { Sql } from "../../db/sql.ts";
import type { NodeLife } from "../../db/nodes.ts";
import { Histogram, type LatencySummary } from "../selfplay/histogram.ts";
import { type CoresBusy, measureCores } from "./cpu.ts";
import { matchRecord, type MatchScript, newMatchId, stepRow } from "./workload.ts";

export interface LiveMatchesResult {
  readonly windowMs: number;
  readonly stepsPerSecond: number;
  readonly matchesEndedPerSecond: number;
  /** appendStep → its promise resolved (durable), over the measured window. */
  readonly waitMs: LatencySummary;
  /** writeMatch (start and end rows) → durable. */
  readonly matchWriteWaitMs: LatencySummary;
  /** Statements the group commit ran, and step rows per statement. */
  readonly writes: number;
  readonly meanStepsPerWrite: number;
  /** Time inside `sql.query` for one batch (send → reply), and the share of the window spent there. */
  readonly writeMs: LatencySummary;
  readonly writeBusyShare: number;
  readonly coresBusy: CoresBusy;
}

/**
 * A Sql that counts and times the writes going through it (statements, prepared ones and COPYs), seen from
 * outside the group commit, which keeps no such counters. A batch is one write or two: on the embedded store
 * its decisions go with COPY and its match rows with a statement.
 */
class MeteredSql {
  readonly sql: Sql;
  writes = 0;
  busyMs = 0;
  readonly writeMs = new Histogram();

  constructor(inner: Sql) {
    const timed = <A extends unknown[], R>(write: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      const start = performance.now();
      try {
        return await write(...args);
      } finally {
        const ms = performance.now() - start;
        this.writes++;
        this.busyMs += ms;
        this.writeMs.record(ms);
      }
    };
    this.sql = {
      ...inner,
      query: timed(inner.query) as Sql["query"],
      prepared: timed(inner.prepared) as Sql["prepared"],
      ...(inner.copyIn && { copyIn: timed(inner.copyIn) as Sql["copyIn"] }),
    };
  }

  reset(): void {
    this.writes = 0;
    this.busyMs = 0;
    this.writeMs.reset();
  }
}

/**
 * `matches` live matches in one process, each a closed loop over the store's group commit (the same
 * class as `ReplayStore.writer`, here with the window under test): the match's start row, its decisions
 * one by one (each awaited until durable, as the server acknowledges a decision), its end row, then
 * the next match. It writes as `owner`, as a server process does (on PostgreSQL each write is then fenced by the
 * owner's lease, db/group-commit.ts). Measures `seconds` after `warmup` seconds.
 */
export async function runLiveMatches(options: {
  readonly sql: Sql;
  readonly writerId: string;
  readonly owner: NodeLife;
  readonly scripts: readonly MatchScript[];
  readonly matches: number;
  readonly windowMs: number;
  readonly warmup: number;
  readonly seconds: number;
}): Promise<LiveMatchesResult> {
  const metered = new MeteredSql(options.sql);
  const writer = new GroupCommit(metered.sql, options.writerId, { windowMs: options.windowMs });
  writer.owner = options.owner;
  const stepWait = new Histogram();
  const matchWait = new Histogram();
  let measuring = false;
  let stopping = false;
  let steps = 0;
  let ended = 0;

  const timed = async (write: () => Promise<void>, into: Histogram) => {
    const start = performance.now();
    await write();
    if (measuring) into.record(performance.now() - start);
  };

  const live = async (slot: number) => {
    for (let n = slot; !stopping; n += options.matches) {
      const script = options.scripts[n % options.scripts.length];
      const id = newMatchId();
      const createdAt = new Date();
      await timed(() => writer.writeMatch(matchRecord(script, id, createdAt, false)), matchWait);
      for (let i = 0; i < script.decisions.length; i++) {
        await timed(() => writer.appendStep(stepRow(script, id, i)), stepWait);
        if (measuring) steps++;
      }
      await timed(() => writer.writeMatch(matchRecord(script, id, createdAt, true)), matchWait);
      if (measuring) ended++;
    }
  };

  const loops = Array.from({ length: options.matches }, (_, slot) => live(slot));
  await sleep(options.warmup * 1000);
  metered.reset();
  measuring = true;
  const start = performance.now();
  const cores = measureCores();
  await sleep(options.seconds * 1000);
  measuring = false;
  const coresBusy = cores();
  const elapsed = (performance.now() - start) / 1000;
  const writes = metered.writes;
  const busyMs = metered.busyMs;
  const writeMs = metered.writeMs.summary();
  stopping = true;
  await Promise.all(loops);
  await writer.close();
  return {
    windowMs: options.windowMs,
    stepsPerSecond: Math.round(steps / elapsed),
    matchesEndedPerSecond: Math.round(ended / elapsed),
    waitMs: stepWait.summary(),
    matchWriteWaitMs: matchWait.summary(),
    writes,
    meanStepsPerWrite: Math.round((steps / Math.max(1, writes)) * 10) / 10,
    writeMs,
    writeBusyShare: Math.round((busyMs / (elapsed * 1000)) * 1000) / 1000,
    coresBusy,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
