import { describe, expect, it } from "vitest";
import { Rng } from "../../games/core/rng.ts";
import { parseCards } from "../../games/holdem/cards.ts";
import {
  CATEGORIES,
  countSevenCardHands,
  describeHand,
  evaluate,
  evaluate7,
  handCategory,
  SEVEN_CARD_CATEGORY_COUNTS,
} from "../../games/holdem/evaluator.ts";

/** The value of a hand written as text. */
function value(text: string): number {
  return evaluate(parseCards(text));
}

function category(text: string): string {
  return CATEGORIES[handCategory(value(text))];
}

/**
 * An independent, slow reference for exactly five cards: sort, count, and compare as a poker
 * player would. Gives [category, tie-break ranks...], compared lexicographically.
 */
function reference5(cards: readonly number[]): number[] {
  const ranks = cards.map((c) => c >> 2).sort((a, b) => b - a);
  const flush = cards.every((c) => (c & 3) === (cards[0] & 3));
  const distinct = [...new Set(ranks)];
  let straightTop = -1;
  if (distinct.length === 5 && ranks[0] - ranks[4] === 4) straightTop = ranks[0];
  if (distinct.join() === "12,3,2,1,0") straightTop = 3;
  // Ranks grouped by how often they appear, most often first, then highest first.
  const groups = distinct.map((r) => [ranks.filter((x) => x === r).length, r]).sort((a, b) =>
    b[0] - a[0] || b[1] - a[1]
  );
  const shape = groups.map((g) => g[0]).join("");
  const order = groups.map((g) => g[1]);
  if (straightTop >= 0 && flush) return [8, straightTop];
  if (shape === "41") return [7, ...order];
  if (shape === "32") return [6, ...order];
  if (flush) return [5, ...ranks];
  if (straightTop >= 0) return [4, straightTop];
  if (shape === "311") return [3, ...order];
  if (shape === "221") return [2, ...order];
  if (shape === "2111") return [1, ...order];
  return [0, ...ranks];
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? -1) - (b[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/** The best five of the cards, by the reference. */
function referenceBest(cards: readonly number[]): number[] {
  let best: number[] = [];
  const n = cards.length;
  for (let mask = 0; mask < 1 << n; mask++) {
    if (popcount(mask) !== 5) continue;
    const hand = reference5(cards.filter((_, i) => mask & (1 << i)));
    if (compare(hand, best) > 0) best = hand;
  }
  return best;
}

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

function deal(rng: Rng, n: number): number[] {
  const deck = Array.from({ length: 52 }, (_, i) => i);
  rng.shuffle(deck);
  return deck.slice(0, n);
}

describe("holdem hand evaluator", () => {
  it("counts every five-card hand into the nine categories", () => {
    const counts = new Array(9).fill(0);
    const hand = new Uint8Array(5);
    for (let a = 0; a < 52; a++) {
      hand[0] = a;
      for (let b = a + 1; b < 52; b++) {
        hand[1] = b;
        for (let c = b + 1; c < 52; c++) {
          hand[2] = c;
          for (let d = c + 1; d < 52; d++) {
            hand[3] = d;
            for (let e = d + 1; e < 52; e++) {
              hand[4] = e;
              counts[handCategory(evaluate(hand))]++;
            }
          }
        }
      }
    }
    expect(counts).toEqual([1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40]);
  });

  it("orders and ties random hands exactly as a slow reference does, for 5, 6 and 7 cards", () => {
    const rng = new Rng("evaluator-reference");
    for (const n of [5, 6, 7]) {
      const hands = Array.from({ length: 3000 }, () => deal(rng, n));
      const fast = hands.map((h) => (n === 7 ? evaluate7(h[0], h[1], h[2], h[3], h[4], h[5], h[6]) : evaluate(h)));
      const slow = hands.map(referenceBest);
      for (let i = 0; i < hands.length; i++) {
        expect(handCategory(fast[i])).toBe(slow[i][0]);
        if (n === 7) expect(evaluate(hands[i])).toBe(fast[i]);
        const j = (i * 7919 + 1) % hands.length;
        expect(Math.sign(fast[i] - fast[j])).toBe(Math.sign(compare(slow[i], slow[j])));
      }
    }
  });

  it("ranks hand-picked hands in order", () => {
    const ladder = [
      "AsKsQsJsTs2c3d", // royal flush
      "9h8h7h6h5h2c2d", // straight flush, nine high
      "5d4d3d2dAd9c9s", // steel wheel: the lowest straight flush
      "AhAdAcAsKd2c3d", // four aces, king kicker
      "AhAdAcAsQd2c3d", // four aces, queen kicker
      "KhKdKcAsAd2c3d", // kings full of aces
      "KhKdKcQsQdQc3d", // kings full of queens (two sets)
      "QhQdQcAsAd2c3d", // queens full
      "Ah9h7h5h3h2c2d", // ace-high flush
      "Kh9h7h5h3hAcAd", // king-high flush beats a pair of aces
      "AsKdQhJcTs2c2d", // broadway
      "6s5d4h3c2s9c9d", // six-high straight
      "5s4d3h2cAs9c9d", // the wheel, five-high
      "7h7d7cAsKd2c3d", // trip sevens
      "AhAdKcKsQd2c3d", // aces and kings, queen kicker
      "AhAdKcKsJd2c3d", // aces and kings, jack kicker
      "AhAdQcQsKd2c3d", // aces and queens
      "AhAdKcQsJd2c3d", // pair of aces
      "AhKdQcJs9d2c3d", // ace high
      "AhKdQcJs8d2c3d", // ace high, lower fifth card
    ];
    const values = ladder.map(value);
    for (let i = 1; i < values.length; i++) expect(values[i - 1]).toBeGreaterThan(values[i]);
  });

  it("ties hands that differ only in cards that do not play", () => {
    expect(value("AsKsQsJsTs2c3d")).toBe(value("AsKsQsJsTs4h5h"));
    expect(value("2c3dAhAdKcQsJd")).toBe(value("4c5dAhAdKcQsJd"));
    expect(value("AhAdKcKsQdQh2c")).toBe(value("AhAdKcKsQd3c3h")); // third pair never plays
    expect(value("7h7d7c2s2c3d3h")).toBe(value("7h7d7c3s3c4d2h")); // best pair under the set plays
    expect(value("AhKh9h7h5h4h2h")).toBe(value("AhKh9h7h5hQc2d"));
    expect(value("AhKh9h7h5h4h2h")).toBeLessThan(value("AhKh9h7h6h4h2h"));
  });

  it("values a flush by its best five cards and finds straights in any seven", () => {
    expect(category("AhKh9h7h5h4h2h")).toBe("flush");
    expect(category("2h3h4h5h6hAh7c")).toBe("straight flush");
    expect(category("Ts9d8h7c6s5s4s")).toBe("straight");
    expect(category("AhAdAc2s3d4h5c")).toBe("straight"); // a straight beats the set it contains
    expect(category("2c2d2h2sAcAdAh")).toBe("four of a kind");
    expect(category("2c2d2hAcAdAhKs")).toBe("full house");
  });

  it("values hands of fewer than five cards by pairs and high cards", () => {
    expect(category("AhKd")).toBe("high card");
    expect(category("5c5d")).toBe("pair");
    expect(value("5c5d")).toBeGreaterThan(value("AhKd"));
    expect(value("Ah2d")).toBeGreaterThan(value("KhQd"));
    expect(value("7c")).toBeGreaterThan(value("6c"));
    expect(value("7c")).toBe(value("7d"));
    expect(category("2c3c4c5c")).toBe("high card");
    expect(() => evaluate(parseCards("2c3c4c5c6c7c8c9c"))).toThrow(/at most 7 cards, got 8/);
  });

  it("says what a hand is", () => {
    expect(describeHand(value("AsKsQsJsTs2c3d"))).toBe("straight flush, ace high");
    expect(describeHand(value("5s4d3h2cAs9c9d"))).toBe("straight, five high");
    expect(describeHand(value("KhKdKcQsQdQc3d"))).toBe("full house, kings over queens");
    expect(describeHand(value("AhAdKcKsJd2c3d"))).toBe("two pair, aces and kings, kicker J");
    expect(describeHand(value("6h6d9c4s2d"))).toBe("pair of sixes, kickers 9 4 2");
    expect(describeHand(value("Ah9h7h5h3h2c2d"))).toBe("flush, A 9 7 5 3");
    expect(describeHand(value("AhAdAcAsKd2c3d"))).toBe("four of a kind, aces, kicker K");
  });

  it("states the published seven-card category counts (games.md)", () => {
    // Straight flush 41,584 … high card 23,294,460, weakest first as CATEGORIES orders them.
    expect(SEVEN_CARD_CATEGORY_COUNTS).toEqual([
      23_294_460,
      58_627_800,
      31_433_400,
      6_461_620,
      6_180_020,
      4_047_644,
      3_473_184,
      224_848,
      41_584,
    ]);
    expect(SEVEN_CARD_CATEGORY_COUNTS.reduce((a, b) => a + b, 0)).toBe(133_784_560);
  });

  it.runIf(process.env.LUDUS_SLOW === "1")("counts all 133,784,560 seven-card hands into the nine categories", () => {
    expect(countSevenCardHands()).toEqual(SEVEN_CARD_CATEGORY_COUNTS);
  });
});
