import { describe, expect, it } from "vitest";
import { configure } from "../../../games/core/config.ts";
import { getGame } from "../../../games/registry.ts";
import { createStrategy } from "../../../policies/baselines/index.ts";
import type { MatchRecord, StepRecordRow } from "../../../db/records.ts";
import type { ServerFrame, TurnFrame } from "../../../protocol/frames.ts";
import {
  Match,
  type MatchJournal,
  type MatchOptions,
  type Participant,
  RestoreError,
  type SeatLink,
} from "../../../server/match/match.ts";
import { fakeTimers } from "./fake-timers.ts";

/** A match restored from its log (re-simulated through db/replay.ts) is the match that was played. */

function capturing() {
  const rows: StepRecordRow[] = [];
  let record: MatchRecord | undefined;
  const journal: MatchJournal = {
    writeMatch: (r) => Promise.resolve(void (record = structuredClone(r))),
    appendStep: (arrived) => Promise.resolve(void rows.push(...structuredClone([arrived].flat()))),
    behind: false,
    caughtUp: () => Promise.resolve(),
    closeInError: () => Promise.resolve(),
  };
  return { journal, rows, record: () => record! };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const link = (frames: ServerFrame[]): SeatLink => ({ text: false, send: (frame) => frames.push(frame) });
const lastTurn = (frames: ServerFrame[]) => frames.findLast((f): f is TurnFrame => f.type === "turn");

async function played(game: string, participants: Participant[], decisions: number, seed = "restore") {
  const g = getGame(game);
  const { config } = configure(g, {});
  const store = capturing();
  const options: MatchOptions = {
    id: "r",
    game: g,
    variant: "standard",
    config,
    seed,
    invite: "i",
    journal: store.journal,
    timers: fakeTimers(),
    participants,
  };
  const match = new Match(options);
  const frames = participants.map(() => [] as ServerFrame[]);
  const links = frames.map(link);
  participants.forEach((p, seat) => p.kind !== "builtin" && match.connect(seat, links[seat]));
  match.open();
  const answered = new Set<number>();
  for (let i = 0; i < decisions && !match.ended;) {
    await tick();
    for (const [seat, p] of participants.entries()) {
      const turn = lastTurn(frames[seat]);
      if (p.kind === "builtin" || !turn || answered.has(turn.seq) || i >= decisions) continue;
      answered.add(turn.seq);
      i++;
      const first = turn.legal[0];
      match.act(seat, turn.seq, first.kind === "fixed" ? first.action : "call", undefined, links[seat]);
    }
  }
  await tick();
  const again = new Match({ ...options, journal: capturing().journal });
  return { match, again, store, frames };
}

describe("restoring a match from its log", () => {
  it("rebuilds the state, the open decision and its number, built-ins agreeing with the log", async () => {
    const random = createStrategy("leduc-poker", "random");
    const { match, again, store, frames: before } = await played(
      "leduc-poker",
      [
        { kind: "bot", name: "remote", tokenId: "t" },
        { kind: "builtin", name: "random", strategy: random },
      ],
      2,
      "restore-me",
    );
    expect(match.ended).toBe(false);
    again.restore(store.record(), store.rows);
    expect(again.stepsPlayed).toBe(match.stepsPlayed);
    expect(again.observation(0)).toEqual(match.observation(0));
    expect(again.observation(1)).toEqual(match.observation(1));
    expect(again.toAct()).toEqual(match.toAct());
    const frames: ServerFrame[] = [];
    again.connect(0, link(frames));
    await tick();
    expect(frames[0]).toMatchObject({ type: "match_start", resumed: true });
    expect(lastTurn(frames)?.seq).toBe(lastTurn(before[0])?.seq);
    again.abort();
    match.abort();
  });

  it("leaves a simultaneous step's unlogged decision open with its own number", async () => {
    const { match, again, store } = await played("ipd", [{ kind: "bot", name: "a" }, { kind: "bot", name: "b" }], 5);
    // Seat 1 answered the last step's decision; seat 0's is still open.
    expect(store.rows.at(-1)!.seat).toBe(0);
    again.restore(store.record(), store.rows);
    expect(again.toAct()).toEqual(match.toAct());
    expect(again.decisionSeat(store.rows.at(-1)!.seq + 1)).toBe(1);
    expect(again.observation(0)).toEqual(match.observation(0));
    again.abort();
    match.abort();
  });

  it("refuses a log the game no longer plays the same way", async () => {
    const random = createStrategy("leduc-poker", "random");
    const { match, again, store } = await played("leduc-poker", [
      { kind: "bot", name: "remote" },
      { kind: "builtin", name: "random", strategy: random },
    ], 2);
    const changed = store.rows.map((row) => ({ ...row, action: { type: "fly" } }));
    expect(() => again.restore(store.record(), changed)).toThrow(RestoreError);
    match.abort();
  });
});
