import type { SeatRecord } from "../../db/records.ts";
import { playRecorded, type Recorded } from "./recorded-matches.ts";

/**
 * Ended matches that differ in who played, against whom and how they ended, for the export filters `model`,
 * `opponent` and `status` (docs/datasets.md): two models, the same model in both seats, the model in either seat,
 * a forfeit by the model's seat and one by its opponent's.
 */

const llm = (model: string, name = `seat-${model}`): SeatRecord => ({
  kind: "llm",
  name,
  tokenId: `tok-${name}`,
  model,
  endpoint: "http://127.0.0.1:8000/v1",
  sampling: { temperature: 0.5 },
});
const builtin = (strategy: string): SeatRecord => ({ kind: "builtin", name: strategy, strategy });

const createdAt = (i: number) => new Date(Date.parse("2026-06-01T00:00:00Z") + i * 1000);

function played(id: string, i: number, game: string, seats: SeatRecord[], ended?: Partial<Recorded["match"]>) {
  const recorded = playRecorded({
    id,
    game,
    strategies: seats.map((s) => s.strategy ?? "random"),
    seats,
    createdAt: createdAt(i),
  });
  return { match: { ...recorded.match, ...ended }, steps: recorded.steps };
}

export const SEAT_FILTER_MATCHES: Recorded[] = [
  played("a-vs-random", 0, "kuhn-poker", [llm("model-a"), builtin("random")]),
  played("b-vs-random", 1, "kuhn-poker", [llm("model-b"), builtin("random")]),
  played("a-vs-call", 2, "kuhn-poker", [llm("model-a"), builtin("always-call")]),
  played("a-times-out", 3, "ipd", [llm("model-a"), builtin("tit-for-tat")], {
    statuses: ["TIMEOUT", "DONE"],
    endReason: "forfeit",
    culprit: 0,
  }),
  played("random-times-out", 4, "ipd", [builtin("random"), llm("model-a")], {
    statuses: ["TIMEOUT", "DONE"],
    endReason: "forfeit",
    culprit: 0,
  }),
  played("a-vs-a", 5, "kuhn-poker", [llm("model-a", "twin"), llm("model-a", "twin")]),
];

/** What each filter selects of SEAT_FILTER_MATCHES, in the order they ended. */
export const SEAT_FILTER_EXPECTED: readonly { readonly filter: Record<string, string>; readonly ids: string[] }[] = [
  { filter: { model: "model-a" }, ids: ["a-vs-random", "a-vs-call", "a-times-out", "random-times-out", "a-vs-a"] },
  { filter: { model: "model-b" }, ids: ["b-vs-random"] },
  // In either seat: the model sits second in random-times-out.
  { filter: { model: "model-a", opponent: "builtin:random" }, ids: ["a-vs-random", "random-times-out"] },
  // Another seat than the model's: in a-vs-a the twin faces itself; nowhere else does the model face it.
  { filter: { model: "model-a", opponent: "llm:twin" }, ids: ["a-vs-a"] },
  { filter: { model: "model-a", opponent: "tok-seat-model-b" }, ids: [] },
  { filter: { opponent: "tok-seat-model-b" }, ids: ["b-vs-random"] },
  // A seat status is the model's seat's; without a seat named, any seat's.
  { filter: { model: "model-a", status: "TIMEOUT" }, ids: ["a-times-out"] },
  { filter: { status: "TIMEOUT" }, ids: ["a-times-out", "random-times-out"] },
  { filter: { model: "model-a", status: "DONE" }, ids: ["a-vs-random", "a-vs-call", "random-times-out", "a-vs-a"] },
  // An end reason is the match's.
  { filter: { model: "model-a", status: "forfeit" }, ids: ["a-times-out", "random-times-out"] },
  { filter: { status: "completed", opponent: "builtin:always-call" }, ids: ["a-vs-call"] },
  { filter: { player: "llm:seat-model-a", opponent: "builtin:tit-for-tat", status: "TIMEOUT" }, ids: ["a-times-out"] },
];
