import { describe, expect, it } from "vitest";
import {
  ActionError,
  type ActionSpace,
  type AmountForm,
  describeSpace,
  parseInput,
  parseJsonAction,
  parseTextAction,
  readAmount,
} from "../../games/core/action.ts";
import { Rng } from "../../games/core/rng.ts";

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

describe("amounts written as text", () => {
  const donate = (min: number, max: number): ActionSpace => [
    { kind: "amount", type: "donate", min, max, integer: false },
  ];
  const awkward = [22.8756419, 22.87564, 1.005, 0.29, 0.1 + 0.2, 1 / 3, 2 / 3, 1e-7, 123456.7890125, 9.9999996];
  // Resources a large endowment reaches, past whole millionths in a double (rounding inward used to loop for ever).
  awkward.push(1.5e10 + 0.3, 2 ** 53 / 1e6 + 0.5, 4.2e12 + 0.7, 8e9 + 0.1234567);
  const rng = new Rng("awkward");
  for (let i = 0; i < 200; i++) awkward.push(rng.uniform(0, 10 ** rng.int(7)));

  it("print each bound rounded inward, so that a printed bound sent back is legal", () => {
    for (const x of awkward) {
      for (const s of [donate(0, x), donate(x, x + 10)]) {
        const form = s[0] as AmountForm;
        const printed = /\[(\S+), (\S+)\]/.exec(describeSpace(s))!.slice(1);
        expect(printed.every((p) => /^-?\d+(\.\d{1,6})?$/.test(p))).toBe(true);
        for (const p of printed) {
          expect(parseTextAction(s, `donate ${p}`), `${p} of [${form.min}, ${form.max}]`).toEqual({
            type: "donate",
            amount: Number(p),
          });
          expect(parseJsonAction(s, { type: "donate", amount: Number(p) })).not.toBeInstanceOf(ActionError);
        }
        // A refusal prints the same range, so its bounds are legal too.
        const refusal = error(parseJsonAction(s, { type: "donate", amount: form.max + 1 })).reason;
        expect(refusal).toContain(`[${printed[0]}, ${printed[1]}]`);
      }
    }
  });

  it("read all, everything and max as the largest legal amount", () => {
    const s = donate(0, 22.8756419);
    for (const text of ["donate all", "Donate ALL of it", "donate: everything", "donate max"]) {
      expect(parseTextAction(s, text)).toEqual({ type: "donate", amount: 22.8756419 });
    }
    const raise: ActionSpace = [{ kind: "amount", type: "raise", min: 200, max: 20000, integer: true }];
    expect(parseTextAction(raise, "raise max")).toEqual({ type: "raise", amount: 20000 });
    expect(parseTextAction(s, "donate maximal 3")).toEqual({ type: "donate", amount: 3 });
  });

  it("refuse a percentage where it has no meaning, and read a number whole", () => {
    const s = donate(0, 50);
    for (const text of ["donate 10%", "donate 10 %", "donate 10 percent"]) {
      const refused = error(parseTextAction(s, text));
      expect(refused.code).toBe("malformed_action");
      expect(refused.message).toMatch(/^a percentage has no meaning for `donate` here: write the amount itself/);
    }
    expect(parseTextAction(s, "donate 1e-3")).toEqual({ type: "donate", amount: 0.001 });
    expect(parseTextAction(s, "donate 2.5e1")).toEqual({ type: "donate", amount: 25 });
    expect(parseTextAction(s, "donate 2,5")).toEqual({ type: "donate", amount: 2.5 });
    expect(error(parseTextAction(s, "donate 1e3")).message).toMatch(/amount 1000 is outside \[0, 50\]/);
  });

  it("read a percentage of what the game says it is a share of", () => {
    const s = donate(0, 22.8756419);
    const form = s[0] as AmountForm;
    expect(readAmount(s, form, "100%", 22.8756419)).toEqual({ type: "donate", amount: 22.8756419 });
    expect(readAmount(s, form, "50 %", 22.8756419)).toEqual({ type: "donate", amount: 22.8756419 / 2 });
    expect(readAmount(s, form, "0%", 22.8756419)).toEqual({ type: "donate", amount: 0 });
    expect(error(readAmount(s, form, "101%", 22.8756419)).message).toMatch(/^101% of 22\.875641 is .*, outside/);
    expect(error(readAmount(s, form, "-5%", 22.8756419)).code).toBe("illegal_action");
  });
});

describe("the generic form and a talk phase's free text", () => {
  const talk: ActionSpace = [{ kind: "text", type: "message", maxLength: 20 }];
  const whole = (text: string) => ({ type: "message", text });
  const freeText = true;

  it("read `message hello` as the message hello, and other text as itself", () => {
    expect(parseInput(talk, "message hello", undefined, freeText)).toEqual(whole("hello"));
    expect(parseInput(talk, "  Message: hi there", undefined, freeText)).toEqual(whole("hi there"));
    expect(parseInput(talk, "MESSAGE", undefined, freeText)).toEqual(whole(""));
    expect(parseInput(talk, "messages are cheap", undefined, freeText)).toEqual(whole("messages are cheap"));
    expect(parseInput(talk, "hello", undefined, freeText)).toEqual(whole("hello"));
    expect(error(parseInput(talk, "message " + "x".repeat(21), undefined, freeText)).message).toMatch(/21 characters/);
  });

  it("still try a game's aliases first", () => {
    const tokens = (text: string) => (text.startsWith("<m>") ? whole(text.slice(3)) : undefined);
    expect(parseInput(talk, "<m>message hi", tokens, freeText)).toEqual(whole("message hi"));
    expect(parseInput(talk, "message hi", tokens, freeText)).toEqual(whole("hi"));
  });
});

describe("counts written as text", () => {
  it("are read whole: a sign or a fraction is refused, never dropped", () => {
    expect(error(parseTextAction(split, "split -3 hats 2 books")).message).toMatch(/hats count -3 is outside/);
    expect(error(parseTextAction(split, "split 3.5 hats 2 books")).message).toMatch(/hats count must be a whole/);
    expect(error(parseTextAction(split, "split 3,5 hats 2 books")).code).toBe("malformed_action");
    expect(error(parseTextAction(split, "split 3 hats 4 hats 2 books")).message).toMatch(/gives hats twice/);
    expect(error(parseTextAction(split, "split 4 5 6")).message).toMatch(/names 2 item count/);
    expect(parseTextAction(split, "split 3 hats,5 books")).toEqual({ type: "split", take: [3, 5] });
    expect(error(parseTextAction(trade, "offer -3 Wood -> 2 Gold")).message).toMatch(/Wood count must be a whole/);
    expect(error(parseTextAction(trade, "offer 1.5 Wood -> 2 Gold")).message).toMatch(/Wood count must be a whole/);
    expect(parseTextAction(trade, "offer 3 Wood,2 Wood -> 2 Gold")).toEqual({
      type: "offer",
      give: { Wood: 5 },
      get: { Gold: 2 },
    });
  });
});

describe("names in actions", () => {
  it("count only the form's own resources and items, never what an object inherits", () => {
    for (const name of ["constructor", "toString", "valueOf", "__proto__"]) {
      const bundle = JSON.parse(`{"${name}": 1}`);
      for (const side of ["give", "get"]) {
        const offer = { type: "offer", give: { Wood: 1 }, get: { Gold: 1 }, [side]: bundle };
        expect(error(parseJsonAction(trade, offer)).message).toMatch(
          /is not a resource here \(resources: Wood, Gold\)/,
        );
      }
      expect(error(parseTextAction(trade, `offer 1 ${name} -> 1 Gold`)).code).toBe("malformed_action");
    }
    const odd: ActionSpace = [{ kind: "split", type: "split", items: ["constructor", "books"], max: [5, 5] }];
    expect(parseJsonAction(odd, { type: "split", take: [1, 2] })).toEqual({ type: "split", take: [1, 2] });
    expect(parseJsonAction(odd, { type: "split", constructor: 1, books: 2 })).toEqual({ type: "split", take: [1, 2] });
    expect(error(parseJsonAction(odd, { type: "split", take: { books: 2 } })).message).toMatch(
      /no count for constructor/,
    );
    expect(error(parseJsonAction(odd, { type: "split", books: 2 })).message).toMatch(/no count for constructor/);
  });
});
