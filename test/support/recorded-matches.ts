import type { Action } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { GAME_STREAM, Rng, STRATEGY_STREAM } from "../../games/core/rng.ts";
import { getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import type { MatchRecord, SeatRecord, StepRecordRow } from "../../db/records.ts";
import type { ReplayStore } from "../../db/store.ts";

/**
 * Matches as the server records them (a row per decision, rewards on the row that completed each step),
 * played in-process by built-in strategies: store tests write them without running a server.
 */

export interface Recorded {
  readonly match: MatchRecord;
  readonly steps: StepRecordRow[];
}

export interface PlayOptions {
  readonly id: string;
  readonly game: string;
  readonly variant?: string;
  readonly config?: Record<string, unknown>;
  /** One strategy per seat, or one for every seat. */
  readonly strategies: readonly string[];
  readonly seed?: string;
  readonly createdAt: Date;
  /** Who sat where (default: the strategies as built-in seats). */
  readonly seats?: readonly SeatRecord[];
}

/** Plays a whole match and records it as ended ("completed"). */
export function playRecorded(options: PlayOptions): Recorded {
  const game = getGame(options.game);
  const { variant, config } = configure(game, options.config ?? {}, options.variant);
  const count = game.seatCount(config);
  const specs = options.strategies.length === 1 ? new Array(count).fill(options.strategies[0]) : options.strategies;
  const strategies = specs.map((spec) => createStrategy(game.id, spec));
  const seed = options.seed ?? options.id;
  const rng = new Rng(seed, GAME_STREAM);
  const strategyRng = new Rng(seed, STRATEGY_STREAM);
  const state = game.init(config, rng);
  const steps: StepRecordRow[] = [];
  let turn = 0;
  for (let toAct = game.toAct(state); toAct.length > 0; toAct = game.toAct(state), turn++) {
    const moves: (Action | undefined)[] = new Array(count).fill(undefined);
    let last: StepRecordRow | undefined;
    for (const seat of toAct) {
      const observation = game.observe(state, seat);
      moves[seat] = strategies[seat].act({
        seat,
        legal: game.legal(state, seat),
        observation: () => observation,
        rng: strategyRng,
      });
      last = {
        matchId: options.id,
        seq: steps.length + 1,
        turn,
        seat,
        observation,
        action: JSON.parse(JSON.stringify(moves[seat])),
        legal: true,
        error: null,
        attempts: [],
        defaulted: null,
        latencyMs: 1.5,
        meta: null,
        rewards: null,
        at: options.createdAt,
      };
      steps.push(last);
    }
    steps[steps.length - 1] = { ...last!, rewards: [...game.apply(state, moves, rng)] };
  }
  const match: MatchRecord = {
    id: options.id,
    game: game.id,
    gameVersion: game.version,
    variant,
    config,
    seed,
    seats: options.seats ?? specs.map((spec): SeatRecord => ({ kind: "builtin", name: spec, strategy: spec })),
    conduct: { retries: 2, onIllegal: "default", onTimeout: "default", holdMs: 30_000 },
    statuses: new Array(count).fill("DONE"),
    returns: [...game.returns(state)],
    endReason: "completed",
    culprit: null,
    steps: turn,
    createdAt: options.createdAt,
    startedAt: options.createdAt,
    endedAt: new Date(options.createdAt.getTime() + 1000),
  };
  return { match, steps };
}

/** Writes matches (and their decisions) through the store's group-commit writer. */
export async function writeRecorded(store: ReplayStore, recorded: readonly Recorded[]): Promise<void> {
  const writes: Promise<void>[] = [];
  for (const { match, steps } of recorded) {
    writes.push(store.writer.writeMatch(match));
    for (const step of steps) writes.push(store.writer.appendStep(step));
  }
  await Promise.all(writes);
}
