import { describe, expect, it } from "vitest";
import type { MatchRecord, StepRecordRow } from "../../../db/records.ts";
import { MatchMovedError } from "../../../db/group-commit.ts";
import { getGame } from "../../../games/registry.ts";
import { DecisionBook } from "../../../server/match/decisions.ts";
import {
  BULK_IN_FLIGHT,
  type DecisionFacts,
  Journal,
  type MatchFacts,
  type MatchJournal,
} from "../../../server/match/journal.ts";

/** A store whose writes become durable when the test says so, keeping each record as it arrived. */
function store() {
  const arrived: (MatchRecord | StepRecordRow | StepRecordRow[])[] = [];
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const write = (record: MatchRecord | StepRecordRow | readonly StepRecordRow[]) => {
    arrived.push(structuredClone(record) as MatchRecord);
    return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
  };
  const journal: MatchJournal & { behind: boolean } = {
    writeMatch: write,
    appendStep: write,
    behind: false,
    caughtUp: () => Promise.resolve(),
    closeInError: () => Promise.resolve(),
  };
  return {
    journal,
    arrived,
    /** Makes the oldest waiting write durable (or refuses it). */
    async settle(error?: Error) {
      const next = waiting.shift()!;
      if (error) next.reject(error);
      else next.resolve();
      await new Promise((resolve) => setImmediate(resolve));
    },
    get waiting() {
      return waiting.length;
    },
  };
}

function hooks() {
  const seen = { refused: [] as Error[], moved: 0 };
  return {
    seen,
    hooks: {
      guard: (_what: string, body: () => void) => body(),
      refused: (error: Error) => void seen.refused.push(error),
      moved: () => void seen.moved++,
    },
  };
}

const kuhn = getGame("kuhn-poker");
const match: MatchFacts = {
  id: "m",
  game: kuhn,
  variant: "standard",
  config: {},
  seed: "1",
  participants: [{ kind: "bot", name: "a", tokenId: "t" }, { kind: "builtin", name: "random" }],
  conduct: { retries: 2, onIllegal: "default", onTimeout: "default", holdMs: 1 },
  statuses: ["ACTIVE", "ACTIVE"],
  steps: 0,
  createdAt: new Date(0),
  startedAt: null,
  endedAt: null,
  error: null,
  invite: "i",
  group: null,
  rated: false,
  seatKeys: null,
};

const book = new DecisionBook(2);
function decision(seat: number, action: unknown = { type: "check" }): DecisionFacts {
  return {
    matchId: "m",
    decision: book.issue(seat, 0),
    turn: 0,
    action,
    defaulted: null,
    latencyMs: 1.23456,
    timedOut: false,
    input: null,
    meta: null,
    observation: { seat },
    offered: [],
    legalIds: null,
    at: new Date(0),
  };
}

describe("a match's journal", () => {
  it("builds the match's record and its decisions' rows", () => {
    const { journal, arrived } = store();
    const j = new Journal(journal, hooks().hooks);
    j.writeMatch(match);
    j.decision({ ...decision(0, { type: "bet" }), input: "bet" }, false);
    expect(arrived[0]).toMatchObject({
      id: "m",
      game: "kuhn-poker",
      seats: [{ kind: "bot", name: "a", tokenId: "t" }, { kind: "builtin", name: "random", strategy: "random" }],
      returns: null,
      endReason: null,
    });
    expect(arrived[1]).toMatchObject({ seat: 0, action: { type: "bet" }, input: "bet", legal: true, latencyMs: 1.235 });
  });

  it("sends nothing before what was written ahead of it is durable, in order", async () => {
    const s = store();
    const j = new Journal(s.journal, hooks().hooks);
    const out: string[] = [];
    j.deliver(() => out.push("at once"));
    j.writeMatch(match);
    j.deliver(() => out.push("after the record"));
    j.decision(decision(0), false);
    j.deliver(() => out.push("after the decision"));
    expect(out).toEqual(["at once"]);
    await s.settle();
    expect(out).toEqual(["at once"]); // one write still unwritten
    await s.settle();
    expect(out).toEqual(["at once", "after the record", "after the decision"]);
    j.writeMatch(match, false); // written, but nothing waits for it
    j.deliver(() => out.push("unheld"));
    expect(out.at(-1)).toBe("unheld");
  });

  it("never changes a row it handed over: a step's last decision arrives with the step's rewards", async () => {
    const s = store();
    const j = new Journal(s.journal, hooks().hooks);
    const out: string[] = [];
    j.decision(decision(0), false);
    j.decision(decision(1), true);
    j.deliver(() => out.push("ack"));
    expect(s.arrived).toHaveLength(1); // the completing decision waits for its rewards...
    j.stepApplied([1, -1]);
    expect(s.arrived).toHaveLength(2);
    expect((s.arrived as StepRecordRow[]).map((row) => row.rewards)).toEqual([null, [1, -1]]);
    await s.settle();
    expect(out).toEqual([]); // ...and the ack waited for it all along
    await s.settle();
    expect(out).toEqual(["ack"]);
  });

  it("hands a staged decision over without rewards when the step is never applied (the match ended first)", () => {
    const s = store();
    const j = new Journal(s.journal, hooks().hooks);
    j.decision(decision(0), true);
    j.writeMatch(match);
    expect(s.arrived.map((r) => "rewards" in r ? r.rewards : "match")).toEqual([null, "match"]);
  });

  it("writes an in-process match's decisions in bulk, each with its step's rewards, and makes it wait", async () => {
    const s = store();
    const j = new Journal(s.journal, hooks().hooks);
    j.bulkMode = true;
    j.decision(decision(0), false);
    j.decision(decision(1), true);
    j.stepApplied([2, -2]);
    j.decision(decision(0), true);
    j.stepApplied([0, 0]);
    expect(s.arrived).toHaveLength(0);
    j.flush();
    expect(s.arrived).toHaveLength(1);
    expect((s.arrived[0] as StepRecordRow[]).map((row) => row.rewards)).toEqual([null, [2, -2], [0, 0]]);
    for (let i = 1; i < BULK_IN_FLIGHT; i++) {
      j.decision(decision(0), false);
      j.flush();
    }
    expect(j.mustWait).toBe(true);
    let resumed = 0;
    j.wait(() => resumed++);
    await s.settle();
    expect(resumed).toBe(1);
    expect(j.mustWait).toBe(false);
    s.journal.behind = true;
    expect(j.mustWait).toBe(true);
    j.wait(() => resumed++);
    await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).toBe(2); // the store caught up
  });

  it("stops writing after a refused write, drops what waited, and tells the match; a moved match is handed over", async () => {
    const s = store();
    const { hooks: h, seen } = hooks();
    const j = new Journal(s.journal, h);
    const out: string[] = [];
    j.writeMatch(match);
    j.deliver(() => out.push("never"));
    await s.settle(new Error("disk full"));
    expect(seen.refused.map((e) => e.message)).toEqual(["disk full"]);
    expect(j.recording).toBe(false);
    j.writeMatch(match);
    expect(s.arrived).toHaveLength(1);
    expect(out).toEqual([]);

    const t = store();
    const moved = hooks();
    const k = new Journal(t.journal, moved.hooks);
    k.writeMatch(match);
    await t.settle(new MatchMovedError("m"));
    expect([moved.seen.moved, moved.seen.refused.length]).toEqual([1, 0]);
  });

  it("writes nothing while muted (a restore replays what is written already)", () => {
    const s = store();
    const j = new Journal(s.journal, hooks().hooks);
    j.muted = true;
    j.writeMatch(match);
    j.decision(decision(0), false);
    expect(s.arrived).toHaveLength(0);
  });
});
