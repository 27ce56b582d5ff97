import { describe, expect, it } from "vitest";
import { DEFAULT_CONDUCT, leftAs, loggedMisconduct, noRetriesLeft, onLeave } from "../../../server/match/conduct.ts";

const forfeit = { ...DEFAULT_CONDUCT, onTimeout: "forfeit" as const, onIllegal: "forfeit" as const };
const gone = { status: "DISCONNECTED" as const, waiting: false, open: true, nobodyLeft: false };

describe("the conduct policy", () => {
  it("plays a gone seat by default while anyone is left to play against", () => {
    expect(onLeave(DEFAULT_CONDUCT, gone)).toEqual({ kind: "default" });
    expect(onLeave(DEFAULT_CONDUCT, { ...gone, nobodyLeft: true })).toEqual({ kind: "end", reason: "aborted" });
    expect(leftAs("DISCONNECTED")).toBe("released");
    expect(leftAs("ERROR")).toBe("withdrawn");
  });

  it("ends the match for a gone seat under forfeit, logging a withdrawn seat's open decision", () => {
    expect(onLeave(forfeit, gone)).toEqual({ kind: "end", reason: "forfeit" });
    expect(onLeave(forfeit, { ...gone, status: "ERROR" })).toEqual({ kind: "misconduct", outcome: "forfeit" });
    expect(onLeave(forfeit, { ...gone, status: "ERROR", nobodyLeft: true })).toEqual({
      kind: "misconduct",
      outcome: "abort",
    });
    expect(onLeave(forfeit, { ...gone, status: "ERROR", open: false })).toEqual({ kind: "end", reason: "forfeit" });
  });

  it("aborts a match still waiting for seats when a seat is gone (forfeits it under forfeit)", () => {
    expect(onLeave(DEFAULT_CONDUCT, { ...gone, waiting: true })).toEqual({ kind: "end", reason: "aborted" });
    expect(onLeave(forfeit, { ...gone, waiting: true })).toEqual({ kind: "end", reason: "forfeit" });
  });

  it("reads a logged misconduct back, and says what follows the last retry", () => {
    expect(loggedMisconduct(forfeit, "timeout")).toEqual({ status: "TIMEOUT", outcome: "forfeit" });
    expect(loggedMisconduct(DEFAULT_CONDUCT, "withdrawn")).toEqual({ status: "ERROR", outcome: "default" });
    expect(loggedMisconduct(forfeit, "illegal_action")).toEqual({ status: "INVALID", outcome: "forfeit" });
    expect(noRetriesLeft(forfeit, "Not legal.")).toBe("Not legal. No retries are left: you forfeit the match.");
  });
});
