import { describe, expect, it } from "vitest";
import type { Action } from "../../../games/core/action.ts";
import { DecisionBook } from "../../../server/match/decisions.ts";

describe("the decision book", () => {
  it("numbers decisions in the order they are issued, one open per seat", () => {
    const book = new DecisionBook(2);
    const a = book.issue(0, 10);
    const b = book.issue(1, 11);
    expect([a.seq, b.seq, book.issued, book.openCount]).toEqual([1, 2, 2, 2]);
    expect(book.openFor(1)).toBe(b);
    expect(book.seatOf(2)).toBe(1);
    book.close(a);
    expect(book.isOpen(a)).toBe(false);
    expect(book.openCount).toBe(1);
    expect(book.issue(0, 12).seq).toBe(3);
  });

  it("recognises a resend by its input or by the action it was read as, and tells apart stale and foreign acts", () => {
    const book = new DecisionBook(2);
    const d = book.issue(0, 0);
    book.close(d);
    const raise: Action = { type: "raise", amount: 3 } as Action;
    book.remember(d.seq, { seat: 0, action: raise, input: "raise 3" });
    expect(book.answering(0, 1, "raise 3")).toEqual({ kind: "resend", action: { type: "raise", amount: 3 } });
    expect(book.answering(0, 1, { type: "raise", amount: 3 })).toMatchObject({ kind: "resend" });
    expect(book.answering(0, 1, "call")).toMatchObject({ kind: "stale" });
    expect(book.answering(1, 1, "raise 3")).toEqual({ kind: "foreign", seat: 0 });
    expect(book.answering(0, 2, "call")).toEqual({ kind: "new" });
    expect(book.seatOf(1)).toBe(0);
    book.forget();
    expect(book.remembers(1)).toBe(false);
  });

  it("says whose an unknown sequence number is", () => {
    const book = new DecisionBook(0);
    book.issue(1, 0);
    expect(book.misdirected(1)).toBe("decision 1 belongs to seat 1");
    expect(book.misdirected(9)).toBe("no decision 9 has been issued");
  });

  it("counts retries down with each refused attempt, keeping the attempts", () => {
    const book = new DecisionBook(1);
    const d = book.issue(0, 0);
    expect(book.refuse(d, { input: "x", code: "illegal_action", message: "no" })).toBe(0);
    expect(book.refuse(d, { input: "y", code: "illegal_action", message: "no" })).toBe(-1);
    expect(d.attempts.map((a) => a.input)).toEqual(["x", "y"]);
  });
});
