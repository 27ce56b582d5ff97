import { describe, expect, it } from "vitest";
import {
  defaultSwissRounds,
  fixedPairings,
  pairKey,
  slotsOf,
  swissPairings,
} from "../../server/league/tournament/schedule.ts";

describe("tournament schedules", () => {
  it("pairs every two players once in a round robin, and the first against the field in a gauntlet", () => {
    expect(fixedPairings("round-robin", 4)).toEqual([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]);
    expect(fixedPairings("duplicate", 3)).toEqual([[0, 1], [0, 2], [1, 2]]);
    expect(fixedPairings("gauntlet", 4)).toEqual([[0, 1], [0, 2], [0, 3]]);
  });

  it("alternates the seats, shares the k-th seed across pairings, and deals duplicate pairs on one seed", () => {
    const plain = [...slotsOf([[0, 1], [2, 3]], { matches: 4, duplicate: false, round: 0, firstSlot: 10, seed: "s" })];
    expect(plain.map((s) => s.slot)).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
    expect(plain.slice(0, 4).map((s) => s.seats)).toEqual([[0, 1], [1, 0], [0, 1], [1, 0]]);
    expect(plain.slice(0, 4).map((s) => s.seed)).toEqual(["s/0/0", "s/0/1", "s/0/2", "s/0/3"]);
    expect(plain.slice(4).map((s) => s.seed)).toEqual(["s/0/0", "s/0/1", "s/0/2", "s/0/3"]);
    const duplicate = [...slotsOf([[0, 1]], { matches: 4, duplicate: true, round: 2, firstSlot: 0, seed: "s" })];
    expect(duplicate.map((s) => [s.seats, s.seed])).toEqual([
      [[0, 1], "s/2/0"],
      [[1, 0], "s/2/0"],
      [[0, 1], "s/2/1"],
      [[1, 0], "s/2/1"],
    ]);
  });

  it("pairs Swiss rounds by points, avoiding rematches, with the bye going to the lowest without one", () => {
    const first = swissPairings([0, 0, 0, 0, 0], new Set(), new Set());
    expect(first).toEqual({ pairings: [[0, 1], [2, 3]], bye: 4 });
    const met = new Set([pairKey(0, 1), pairKey(2, 3)]);
    const second = swissPairings([1, 0, 1, 0, 1], met, new Set([4]));
    // Leaders 0, 2 and 4; 3 (lowest without a bye) sits out; 0 meets 2, 4 meets 1.
    expect(second).toEqual({ pairings: [[0, 2], [4, 1]], bye: 3 });
    // Top down, 0 would take 1 and leave 2 and 3 to meet again: the search pairs 0 with 2 instead.
    expect(swissPairings([3, 2, 1, 0], new Set([pairKey(2, 3)]), new Set())).toEqual({ pairings: [[0, 2], [1, 3]] });
    // Where every round repeats a pairing, the nearest is taken.
    expect(swissPairings([0, 0], new Set([pairKey(0, 1)]), new Set()).pairings).toEqual([[0, 1]]);
    expect([2, 3, 4, 8, 9].map(defaultSwissRounds)).toEqual([1, 2, 2, 3, 4]);
  });
});
