import { describe, expect, it } from "vitest";
import { storableText, unstorable } from "../../db/storable.ts";

describe("what the replay store can keep", () => {
  it("names the first part it could not keep by its path", () => {
    expect(unstorable({ names: ["a", "b", "c", "x\u0000"] }, "config")).toBe(
      "`config.names.3` contains a NUL character (U+0000)",
    );
    expect(unstorable({ meta: { note: "\uD800" } })).toBe("`meta.note` contains an unpaired surrogate (U+D800)");
    expect(unstorable({ ["k\u0000"]: 1 }, "meta")).toBe("a key in `meta` contains a NUL character (U+0000)");
    expect(unstorable(NaN)).toBe("the value is NaN, which JSON cannot hold");
    expect(unstorable({ at: new Date(0) }, "act")).toBe("`act.at` is a Date, not a JSON object");
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(unstorable(deep)).toMatch(/is nested more than 64 levels deep$/);
  });

  it("keeps what is plain JSON, paired surrogates (emoji) included", () => {
    expect(unstorable({ text: "a 🎲 b", n: [1, 2.5, -3], ok: true, none: null })).toBeUndefined();
  });

  it("makes server-made text storable without touching what was already fine", () => {
    expect(storableText("dice 🎲, NUL \u0000, lone \uDC00")).toBe("dice 🎲, NUL \uFFFD, lone \uFFFD");
    expect(storableText("🎲".repeat(3).slice(0, 5))).toBe("🎲🎲\uFFFD");
  });
});
