import { randomBytes } from "node:crypto";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";
import type { MatchRecord, SeatRecord, StepRecordRow } from "../../db/records.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";

/**
 * The rows a live server writes, from real games: the IPD (classic, 20 decisions a match, observations
 * of 170–500 bytes) and Kuhn poker (textarena, three hands, ~250-byte observations), played by random
 * strategies. One match in four has an LLM seat whose rows carry a ~200-byte `meta` (model, response,
 * token counts), as the issue asks.
 */

/** One decision of a scripted match, without the match id and clock that each replay of it gets. */
interface Decision {
  readonly seq: number;
  readonly turn: number;
  readonly seat: number;
  readonly observation: unknown;
  readonly action: unknown;
  rewards: readonly number[] | null;
}

/** A played match, replayed under fresh ids by every live match of the benchmark. */
export interface MatchScript {
  readonly game: string;
  readonly gameVersion: number;
  readonly variant: string;
  readonly config: unknown;
  readonly seed: string;
  readonly seats: readonly SeatRecord[];
  readonly llmSeat: number | null;
  readonly returns: readonly number[];
  readonly decisions: readonly Decision[];
}

const GAMES = [{ game: "ipd", variant: "classic" }, { game: "kuhn-poker", variant: "textarena" }] as const;
const CONDUCT = { retries: 2, onIllegal: "default", onTimeout: "default", holdMs: 30_000 };
const LLM_RESPONSE = "Looking at the history, my opponent mirrored my last move, so I will keep cooperating " +
  "and see whether they reciprocate.";

function play(index: number, ipdRounds?: number): MatchScript {
  const { game: id, variant } = GAMES[index % GAMES.length];
  const game = getGame(id);
  const { config } = configure(game, id === "ipd" && ipdRounds ? { rounds: ipdRounds } : {}, variant);
  const seed = String(1_000_003 * (index + 1));
  const decisions: Decision[] = [];
  let turn = 0;
  const random = createStrategy(id, "random");
  const recording: Strategy = {
    name: "recording",
    act(context) {
      const action = random.act(context);
      decisions.push({
        seq: decisions.length + 1,
        turn,
        seat: context.seat,
        observation: context.observation(),
        action,
        rewards: null,
      });
      return action;
    },
  };
  const outcome = playMatch(game, config, [recording, recording], seed, (_moves, rewards) => {
    decisions[decisions.length - 1].rewards = [...rewards];
    turn++;
  });
  const llmSeat = index % 4 === 3 ? 1 : null;
  const seats: SeatRecord[] = [0, 1].map((seat) =>
    seat === llmSeat
      ? { kind: "llm", name: "claude-seat", tokenId: "tok_7f3a9c21", model: "claude-sonnet-4" }
      : { kind: "builtin", name: "random", strategy: "random" }
  );
  return {
    game: id,
    gameVersion: game.version,
    variant,
    config,
    seed,
    seats,
    llmSeat,
    returns: outcome.returns,
    decisions,
  };
}

/** `count` different matches, alternating the games; the IPD's `ipdRounds` long when given (its variant's otherwise). */
export function matchScripts(count: number, ipdRounds?: number): MatchScript[] {
  return Array.from({ length: count }, (_, i) => play(i, ipdRounds));
}

/** A fresh public match id, as server/match/live-matches.ts makes them. */
export const newMatchId = (): string => randomBytes(9).toString("base64url");

/** The match's row when it starts (`ended` false) or once it ended. */
export function matchRecord(script: MatchScript, id: string, createdAt: Date, ended: boolean): MatchRecord {
  return {
    id,
    game: script.game,
    gameVersion: script.gameVersion,
    variant: script.variant,
    config: script.config,
    seed: script.seed,
    seats: script.seats,
    conduct: CONDUCT,
    statuses: ended ? ["DONE", "DONE"] : ["ACTIVE", "ACTIVE"],
    returns: ended ? script.returns : null,
    endReason: ended ? "completed" : null,
    culprit: null,
    steps: ended ? script.decisions.at(-1)!.turn + 1 : 0,
    createdAt,
    startedAt: createdAt,
    endedAt: ended ? new Date() : null,
  };
}

/** The `i`-th decision of the script as the row the match writes for it now. */
export function stepRow(script: MatchScript, matchId: string, i: number): StepRecordRow {
  const d = script.decisions[i];
  const llm = d.seat === script.llmSeat;
  return {
    matchId,
    seq: d.seq,
    turn: d.turn,
    seat: d.seat,
    observation: d.observation,
    action: d.action,
    legal: true,
    error: null,
    attempts: [],
    defaulted: null,
    latencyMs: llm ? 850 + (i % 7) * 113.5 : 0.05 + (i % 5) * 0.01,
    meta: llm
      ? {
        model: "claude-sonnet-4",
        response: LLM_RESPONSE,
        usage: { prompt_tokens: 1_412 + i, completion_tokens: 38 },
      }
      : null,
    rewards: d.rewards,
    at: new Date(),
  };
}
