import { describe, expect, it } from "vitest";
import {
  ActionError,
  type ActionSpace,
  describeSpace,
  parseInput,
  parseJsonAction,
  parseTextAction,
} from "../../games/core/action.ts";

const space: ActionSpace = [
  { kind: "fixed", action: { type: "refuse" } },
  { kind: "amount", type: "donate", min: 0, max: 12.5, integer: false },
  { kind: "text", type: "message", maxLength: 10 },
];
const split: ActionSpace = [{ kind: "split", type: "split", items: ["hats", "books"], max: [10, 5] }];
const coins: ActionSpace = [{ kind: "split", type: "split", items: ["coins"], max: [10] }];
const trade: ActionSpace = [
  { kind: "exchange", type: "offer", give: { Wood: 10, Gold: 0 }, get: { Wood: 20, Gold: 20 }, maxText: 5 },
];

function error(result: unknown): ActionError {
  expect(result).toBeInstanceOf(ActionError);
  return result as ActionError;
}

describe("action forms", () => {
  it("describe what is legal in one line", () => {
    expect(describeSpace(space)).toBe(
      "refuse | donate <number in [0, 12.5]> | message <text of at most 10 characters>",
    );
    expect(describeSpace(split)).toBe("split <hats: integer in [0, 10]> <books: integer in [0, 5]>");
  });

  it("accept legal JSON and return the canonical action", () => {
    expect(parseJsonAction(space, { type: "refuse" })).toEqual({ type: "refuse" });
    expect(parseJsonAction(space, { type: "donate", amount: 12.5 })).toEqual({ type: "donate", amount: 12.5 });
    expect(parseJsonAction(space, { type: "message", text: "hi" })).toEqual({ type: "message", text: "hi" });
    expect(parseJsonAction(split, { type: "split", take: [3, 5] })).toEqual({ type: "split", take: [3, 5] });
    expect(parseJsonAction(split, { type: "split", take: { books: 1, hats: 2 } })).toEqual({
      type: "split",
      take: [2, 1],
    });
    expect(parseJsonAction(coins, { type: "split", coins: 7 })).toEqual({ type: "split", take: [7] });
  });

  it("refuse bad JSON with a code and the legal forms", () => {
    const outOfRange = error(parseJsonAction(space, { type: "donate", amount: 13 }));
    expect(outOfRange.code).toBe("illegal_action");
    expect(outOfRange.message).toBe(
      "the donate amount 13 is outside [0, 12.5]. Legal now: refuse | donate <number in [0, 12.5]> | " +
        "message <text of at most 10 characters>.",
    );
    expect(error(parseJsonAction(space, { type: "donate", amount: -1 })).code).toBe("illegal_action");
    expect(error(parseJsonAction(space, { type: "donate", amount: "3" })).code).toBe("malformed_action");
    expect(error(parseJsonAction(space, { type: "donate", amount: NaN })).code).toBe("malformed_action");
    expect(error(parseJsonAction(space, { type: "donate", amount: 1, note: "x" })).message).toMatch(
      /unexpected field `note`/,
    );
    expect(error(parseJsonAction(space, { type: "fly" })).message).toMatch(/^`fly` is not a legal action now/);
    expect(error(parseJsonAction(space, "donate")).code).toBe("malformed_action");
    expect(error(parseJsonAction(space, [1])).code).toBe("malformed_action");
    expect(error(parseJsonAction(space, { amount: 1 })).message).toMatch(/no string field `type`/);
    expect(error(parseJsonAction(space, { type: "message", text: "x".repeat(11) })).message).toMatch(
      /11 characters long; at most 10/,
    );
    expect(error(parseJsonAction(space, { type: "refuse", why: 1 })).code).toBe("illegal_action");
    expect(error(parseJsonAction(split, { type: "split", take: [11, 0] })).message).toMatch(
      /hats count 11 is outside \[0, 10\]/,
    );
    expect(error(parseJsonAction(split, { type: "split", take: [1.5, 0] })).code).toBe("malformed_action");
    expect(error(parseJsonAction(split, { type: "split", take: [1] })).message).toMatch(/names 2 item count/);
    expect(error(parseJsonAction(split, { type: "split", take: { hats: 1 } })).message).toMatch(/no count for books/);
    expect(error(parseJsonAction(split, { type: "split", take: { hats: 1, books: 1, balls: 1 } })).message)
      .toMatch(/`balls` is not an item/);
    expect(error(parseJsonAction(split, { type: "split", hats: 1, take: [1, 1] })).message).toMatch(/either/);
    expect(error(parseJsonAction([], { type: "refuse" })).code).toBe("not_your_turn");
  });

  it("read the generic text form `type args`", () => {
    expect(parseTextAction(space, "refuse")).toEqual({ type: "refuse" });
    expect(parseTextAction(space, "  Donate 3,5 ")).toEqual({ type: "donate", amount: 3.5 });
    expect(parseTextAction(space, "donate: 4")).toEqual({ type: "donate", amount: 4 });
    expect(parseTextAction(space, "message hello")).toEqual({ type: "message", text: "hello" });
    expect(parseTextAction(split, "split 3 hats, 5 books")).toEqual({ type: "split", take: [3, 5] });
    expect(parseTextAction(split, "split books 2 hats 1")).toEqual({ type: "split", take: [1, 2] });
    expect(parseTextAction(split, "split 4 5")).toEqual({ type: "split", take: [4, 5] });
    expect(parseTextAction(space, '{"type":"donate","amount":2}')).toEqual({ type: "donate", amount: 2 });
    expect(error(parseTextAction(space, "{oops")).message).toMatch(/not valid JSON/);
    expect(error(parseTextAction(space, "donate lots")).message).toMatch(/needs an amount/);
    expect(error(parseTextAction(space, "dance")).message).toMatch(/could not read an action in "dance"/);
  });

  it("check trades: both sides named, within what may be given and asked", () => {
    expect(describeSpace(trade)).toBe("offer <give: Wood 1-10> -> <get: Wood 1-20, Gold 1-20>");
    expect(parseJsonAction(trade, { type: "offer", give: { Wood: 3 }, get: { Gold: 2 } })).toEqual({
      type: "offer",
      give: { Wood: 3 },
      get: { Gold: 2 },
    });
    expect(parseJsonAction(trade, { type: "offer", give: { Wood: 1 }, get: { Gold: 1 }, text: "hi" })).toEqual({
      type: "offer",
      give: { Wood: 1 },
      get: { Gold: 1 },
      text: "hi",
    });
    expect(parseTextAction(trade, "offer 3 wood -> 2 Gold, 1 woods")).toEqual({
      type: "offer",
      give: { Wood: 3 },
      get: { Gold: 2, Wood: 1 },
    });
    expect(error(parseTextAction(trade, "offer 3 Wood -> ")).message).toMatch(
      /^a trade gives at least one resource and asks for at least one/,
    );
    expect(error(parseTextAction(trade, "offer 3 Wood")).message).toMatch(/write a trade as `offer 3 Wood -> 2 Gold`/);
    expect(error(parseJsonAction(trade, { type: "offer", give: { Gold: 1 }, get: { Wood: 1 } })).message).toMatch(
      /the Gold count in `give` is 1; at most 0 is possible now/,
    );
    expect(error(parseJsonAction(trade, { type: "offer", give: { Wood: 11 }, get: { Wood: 1 } })).code).toBe(
      "illegal_action",
    );
    expect(error(parseJsonAction(trade, { type: "offer", give: { Iron: 1 }, get: { Wood: 1 } })).message).toMatch(
      /`Iron` is not a resource here \(resources: Wood, Gold\)/,
    );
    expect(error(parseJsonAction(trade, { type: "offer", give: { Wood: 0.5 }, get: { Wood: 1 } })).code).toBe(
      "malformed_action",
    );
    expect(error(parseJsonAction(trade, { type: "offer", give: [1], get: { Wood: 1 } })).message).toMatch(
      /`give` must be an object of counts by resource/,
    );
    expect(
      error(parseJsonAction(trade, { type: "offer", give: { Wood: 1 }, get: { Wood: 1 }, text: "toolong" }))
        .message,
    ).toMatch(/at most 5 are allowed/);
  });

  it("try a game's aliases first and still check their legality", () => {
    const aliases = (text: string) => (text === "give all" ? { type: "donate", amount: 99 } : undefined);
    expect(error(parseInput(space, "give all", aliases)).message).toMatch(/99 is outside/);
    expect(parseInput(space, "donate 1", aliases)).toEqual({ type: "donate", amount: 1 });
    expect(parseInput(space, { type: "refuse" }, aliases)).toEqual({ type: "refuse" });
  });
});
