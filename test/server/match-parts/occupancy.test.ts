import { describe, expect, it } from "vitest";
import { MatchRequestError, Occupancy, type SeatLink } from "../../../server/match/occupancy.ts";
import { fakeTimers } from "./fake-timers.ts";

const link = (): SeatLink => ({ text: false, send: () => {} });
const noSeat = { decide: () => ({ type: "pass" }) };

describe("seat occupancy", () => {
  it("seats participants in open seats only, and knows tokens, keys and who plays in-process", () => {
    const seats = new Occupancy(3, "m");
    seats.take(0, { kind: "bot", name: "a", tokenId: "t" });
    seats.take(2, { kind: "builtin", name: "random" }, noSeat);
    expect(() => seats.take(0, { kind: "bot", name: "b" })).toThrow(MatchRequestError);
    expect(seats.open()).toEqual([1]);
    expect(seats.tokens()).toEqual(["t"]);
    expect(seats.seatsOf("t")).toEqual([0]);
    expect(seats.keys()).toBe(null);
    expect(seats.key(1, "h")).toBe(false); // an open seat takes no key
    expect(seats.key(0, "h")).toBe(true);
    expect(seats.key(0, "h")).toBe(false);
    expect([seats.withKey("h"), seats.keys()]).toEqual([0, ["h", null, null]]);
    expect(seats.allInProcess()).toBe(false);
    expect([seats.resumable(0), seats.resumable(2)]).toEqual([true, false]);
    expect(seats.views().map((v) => [v.open, v.connected])).toEqual([[false, false], [true, false], [false, true]]);
  });

  it("holds a dropped seat, ends the hold on a resume, and releases it once the hold expires", () => {
    const timers = fakeTimers();
    const seats = new Occupancy(2, "m", timers);
    seats.take(0, { kind: "bot", name: "a" });
    seats.take(1, { kind: "human", name: "b" });
    const first = link();
    expect(seats.attach(0, first)).toBe(false);
    expect(seats.detach(0, link())).toBe(false); // not the seat's link
    expect(seats.detach(0, first)).toBe(true);
    const expired: number[] = [];
    seats.hold(0, 1_000, () => expired.push(0));
    expect(seats.attach(0, link())).toBe(true); // a resume
    timers.advance(2_000);
    expect(expired).toEqual([]);
    seats.hold(1, 1_000, () => expired.push(1));
    timers.advance(1_000);
    expect(expired).toEqual([1]);
    expect(seats.at(1)!.hold).toBeUndefined();
    seats.release(1, "DISCONNECTED");
    expect(seats.nobodyLeft()).toBe(false);
    seats.release(0, "ERROR");
    expect(seats.nobodyLeft()).toBe(true);
    seats.end(false);
    expect(seats.statuses()).toEqual(["ERROR", "DISCONNECTED"]);
    seats.end(true);
    expect(seats.statuses()).toEqual(["ERROR", "ERROR"]);
  });
});
