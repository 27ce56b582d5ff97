/**
 * A fast poker hand evaluator for up to seven cards (cards as in cards.ts: rank * 4 + suit).
 *
 * A hand's value is an integer, higher is better, equal for hands that tie (hands of the same size
 * compare by it): the category times 2^20, then five 4-bit tie-break ranks. Two lookup tables,
 * built once at module load (about 30 ms), hold every value:
 *
 * - Flushes by the 13-bit rank mask of the flush suit (8,192 entries). With seven cards or fewer a
 *   flush rules out quads and full houses, so a hand with five cards of a suit is valued by them.
 * - Everything else by the multiset of ranks. Each rank has a key such that the sums of up to seven
 *   keys (at most four alike) are all distinct, so a hand's key is the plain sum of its cards' keys;
 *   the 76,155 sums map to table slots through a perfect hash (hash and displace: a bucket from one
 *   multiply, a slot from another, xor a per-bucket displacement found at build time).
 *
 * Evaluating seven cards is then seven adds, two multiplies and three table reads.
 */

import { MAX_RANKS, RANK_CHARS } from "./cards.ts";

/** Hand categories, weakest first; `handCategory` gives a value's. */
export const CATEGORIES = [
  "high card",
  "pair",
  "two pair",
  "three of a kind",
  "straight",
  "flush",
  "full house",
  "four of a kind",
  "straight flush",
] as const;

const HIGH_CARD = 0;
const PAIR = 1;
const TWO_PAIR = 2;
const TRIPS = 3;
const STRAIGHT = 4;
const FLUSH = 5;
const FULL_HOUSE = 6;
const QUADS = 7;
const STRAIGHT_FLUSH = 8;

/**
 * Greedy: each key is the smallest above the previous one that keeps every sum of up to seven keys
 * (at most four alike) distinct from every other. The table build fails loudly if that ever breaks.
 */
const RANK_KEYS = [1, 5, 24, 112, 521, 2247, 9244, 30823, 103066, 250154, 667453, 1526359, 3453520];

/** Per card: its rank's key. */
const CARD_KEY = Int32Array.from({ length: 52 }, (_, c) => RANK_KEYS[c >> 2]);

// Suit counts live in four 4-bit fields that start at 3, so a fifth card of a suit sets the field's top bit.
const SUIT_START = 0x3333;
const FLUSH_BITS = 0x8888;

// The perfect hash: 2^15 buckets, 2^17 slots (load 0.58); the multipliers are two fixed odd constants.
const BUCKET_BITS = 15;
const SLOT_BITS = 17;
const BUCKET_MULT = 0x85ebca6b | 0;
const SLOT_MULT = 0xc2b2ae35 | 0;

/**
 * Builds a value: the category, then five rank digits (each rank + 1, 0 for "no card") that break
 * ties, most significant first. `value` holds the category and the first `have` digits; the top
 * `n` ranks of `mask` follow, then zeros.
 */
function pack(value: number, have: number, mask: number, n: number): number {
  for (let r = 12; r >= 0 && n > 0; r--) {
    if (mask & (1 << r)) {
      value = value * 16 + r + 1;
      have++;
      n--;
    }
  }
  for (; have < 5; have++) value *= 16;
  return value;
}

/** The top rank of the best straight in a 13-bit rank mask (3 for the five-high wheel), or -1. */
function straightTop(mask: number): number {
  for (let top = 12; top >= 4; top--) {
    const run = 0x1f << (top - 4);
    if ((mask & run) === run) return top;
  }
  const wheel = 0x100f; // A, 2, 3, 4, 5
  return (mask & wheel) === wheel ? 3 : -1;
}

function highest(mask: number): number {
  return 31 - Math.clz32(mask);
}

/**
 * The best hand that does not use a flush, from the rank masks of the ranks held once, twice,
 * three and four times (up to seven cards).
 */
function multisetValue(singles: number, pairs: number, trips: number, quads: number): number {
  const present = singles | pairs | trips | quads;
  if (quads) {
    const q = highest(quads);
    return pack(QUADS * 16 + q + 1, 1, present & ~(1 << q), 1);
  }
  if (trips) {
    const t = highest(trips);
    const rest = (trips & ~(1 << t)) | pairs;
    if (rest) return pack((FULL_HOUSE * 16 + t + 1) * 16 + highest(rest) + 1, 2, 0, 0);
  }
  const top = straightTop(present);
  if (top >= 0) return pack(STRAIGHT * 16 + top + 1, 1, 0, 0);
  if (trips) return pack(TRIPS * 16 + highest(trips) + 1, 1, singles, 2);
  if (pairs) {
    const p = highest(pairs);
    const second = pairs & ~(1 << p);
    if (!second) return pack(PAIR * 16 + p + 1, 1, singles, 3);
    const q = highest(second);
    return pack((TWO_PAIR * 16 + p + 1) * 16 + q + 1, 2, present & ~(1 << p) & ~(1 << q), 1);
  }
  return pack(HIGH_CARD, 0, singles, 5);
}

/** The best hand of five or more cards of one suit, from their rank mask. */
function flushValue(mask: number): number {
  const top = straightTop(mask);
  return top >= 0 ? pack(STRAIGHT_FLUSH * 16 + top + 1, 1, 0, 0) : pack(FLUSH, 0, mask, 5);
}

interface Tables {
  /** Value by perfect-hash slot of the rank-key sum. */
  readonly ranks: Int32Array;
  /** Slot displacement by bucket. */
  readonly displacement: Int32Array;
  /** Value by flush rank mask (0 where fewer than five ranks). */
  readonly flushes: Int32Array;
}

function bucketOf(key: number): number {
  return Math.imul(key, BUCKET_MULT) >>> (32 - BUCKET_BITS);
}

function slotBase(key: number): number {
  return Math.imul(key, SLOT_MULT) >>> (32 - SLOT_BITS);
}

/** How many multisets of ranks have up to seven cards with at most four alike. */
const MULTISETS = 76_155;

function buildTables(): Tables {
  // Every multiset of ranks with up to seven cards, at most four alike, in odometer order (rank 0
  // turning fastest): its key sum and value.
  const keys = new Int32Array(MULTISETS);
  const values = new Int32Array(MULTISETS);
  const counts = new Int32Array(MAX_RANKS);
  // byCount[c]: the ranks held c times, kept up to date as the odometer turns.
  const byCount = new Int32Array(5);
  byCount[0] = (1 << MAX_RANKS) - 1;
  let cards = 0;
  let key = 0;
  for (let i = 0;; i++) {
    keys[i] = key;
    values[i] = multisetValue(byCount[1], byCount[2], byCount[3], byCount[4]);
    let r = 0;
    while (r < MAX_RANKS && (counts[r] === 4 || cards === 7)) {
      cards -= counts[r];
      key -= counts[r] * RANK_KEYS[r];
      byCount[counts[r]] ^= 1 << r;
      byCount[0] |= 1 << r;
      counts[r++] = 0;
    }
    if (r === MAX_RANKS) break;
    byCount[counts[r]] ^= 1 << r;
    byCount[++counts[r]] |= 1 << r;
    cards++;
    key += RANK_KEYS[r];
  }
  const flushes = new Int32Array(1 << MAX_RANKS);
  for (let mask = 0; mask < flushes.length; mask++) {
    if (popcount(mask) >= 5) flushes[mask] = flushValue(mask);
  }

  // Hash and displace: keys grouped by bucket (a counting sort), fullest buckets placed first,
  // each at the first displacement that sends all its keys to empty slots.
  const bucketCount = 1 << BUCKET_BITS;
  const start = new Int32Array(bucketCount + 1);
  for (let i = 0; i < MULTISETS; i++) start[bucketOf(keys[i]) + 1]++;
  let largest = 0;
  for (let b = 0; b < bucketCount; b++) {
    largest = Math.max(largest, start[b + 1]);
    start[b + 1] += start[b];
  }
  const next = start.slice(0, bucketCount);
  const base = new Int32Array(MULTISETS);
  const value = new Int32Array(MULTISETS);
  for (let i = 0; i < MULTISETS; i++) {
    const at = next[bucketOf(keys[i])]++;
    base[at] = slotBase(keys[i]);
    value[at] = values[i];
  }
  const ranks = new Int32Array(1 << SLOT_BITS).fill(-1);
  const displacement = new Int32Array(bucketCount);
  for (let size = largest; size > 0; size--) {
    for (let b = 0; b < bucketCount; b++) {
      const from = start[b];
      const to = start[b + 1];
      if (to - from !== size) continue;
      let d = 0;
      while (!fits(base, from, to, d, ranks)) {
        if (++d === ranks.length) throw new Error("hand evaluator: no displacement fits a bucket");
      }
      displacement[b] = d;
      for (let j = from; j < to; j++) ranks[base[j] ^ d] = value[j];
    }
  }
  return { ranks, displacement, flushes };
}

/** True when the keys at [from, to) land, displaced by `d`, on distinct empty slots. */
function fits(base: Int32Array, from: number, to: number, d: number, table: Int32Array): boolean {
  for (let j = from; j < to; j++) {
    if (table[base[j] ^ d] !== -1) return false;
    for (let k = from; k < j; k++) if (base[k] === base[j]) return false;
  }
  return true;
}

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

const { ranks: RANKS, displacement: DISPLACEMENT, flushes: FLUSHES } = buildTables();

/** The rank mask of the cards of `suit` among the seven. */
function suitMask(suit: number, a: number, b: number, c: number, d: number, e: number, f: number, g: number): number {
  let mask = 0;
  if ((a & 3) === suit) mask |= 1 << (a >> 2);
  if ((b & 3) === suit) mask |= 1 << (b >> 2);
  if ((c & 3) === suit) mask |= 1 << (c >> 2);
  if ((d & 3) === suit) mask |= 1 << (d >> 2);
  if ((e & 3) === suit) mask |= 1 << (e >> 2);
  if ((f & 3) === suit) mask |= 1 << (f >> 2);
  if ((g & 3) === suit) mask |= 1 << (g >> 2);
  return mask;
}

function lookup(key: number): number {
  return RANKS[
    (Math.imul(key, SLOT_MULT) >>> (32 - SLOT_BITS)) ^ DISPLACEMENT[Math.imul(key, BUCKET_MULT) >>> (32 - BUCKET_BITS)]
  ];
}

/** The value of seven distinct cards: the best five-card hand among them. */
export function evaluate7(a: number, b: number, c: number, d: number, e: number, f: number, g: number): number {
  const suits = SUIT_START + (1 << ((a & 3) << 2)) + (1 << ((b & 3) << 2)) + (1 << ((c & 3) << 2)) +
    (1 << ((d & 3) << 2)) + (1 << ((e & 3) << 2)) + (1 << ((f & 3) << 2)) + (1 << ((g & 3) << 2));
  const flush = suits & FLUSH_BITS;
  if (flush !== 0) return FLUSHES[suitMask((31 - Math.clz32(flush)) >> 2, a, b, c, d, e, f, g)];
  return lookup(CARD_KEY[a] + CARD_KEY[b] + CARD_KEY[c] + CARD_KEY[d] + CARD_KEY[e] + CARD_KEY[f] + CARD_KEY[g]);
}

/**
 * The value of `count` distinct cards from `cards[start]` (0 to 7 of them): the best hand of up to
 * five among them. Hands with fewer than five cards compare by pairs and high cards only.
 */
export function evaluate(cards: ArrayLike<number>, count = cards.length, start = 0): number {
  if (count > 7) throw new RangeError(`the evaluator takes at most 7 cards, got ${count}`);
  let suits = SUIT_START;
  let key = 0;
  const end = start + count;
  for (let i = start; i < end; i++) {
    suits += 1 << ((cards[i] & 3) << 2);
    key += CARD_KEY[cards[i]];
  }
  const flush = suits & FLUSH_BITS;
  if (flush === 0) return lookup(key);
  const suit = (31 - Math.clz32(flush)) >> 2;
  let mask = 0;
  for (let i = start; i < end; i++) if ((cards[i] & 3) === suit) mask |= 1 << (cards[i] >> 2);
  return FLUSHES[mask];
}

/** The category of a value, an index into CATEGORIES. */
export function handCategory(value: number): number {
  return value >>> 20;
}

const RANK_NAMES = [
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "jack",
  "queen",
  "king",
  "ace",
];
const RANK_PLURALS = RANK_NAMES.map((n) => (n === "six" ? "sixes" : `${n}s`));

/** A value in words, e.g. `full house, kings over fives` or `pair of sevens, kickers A J 4`. */
export function describeHand(value: number): string {
  const category = value >>> 20;
  // The tie-break ranks, most significant first (each stored + 1).
  const r = [16, 12, 8, 4, 0].map((shift) => ((value >>> shift) & 15) - 1).filter((x) => x >= 0);
  const name = CATEGORIES[category];
  const kickers = (from: number) => {
    const rest = r.slice(from).map((x) => RANK_CHARS[x]);
    return rest.length === 0 ? "" : `, kicker${rest.length > 1 ? "s" : ""} ${rest.join(" ")}`;
  };
  switch (category) {
    case STRAIGHT_FLUSH:
    case STRAIGHT:
      return `${name}, ${RANK_NAMES[r[0]]} high`;
    case FLUSH:
    case HIGH_CARD:
      return `${name}, ${r.map((x) => RANK_CHARS[x]).join(" ")}`;
    case QUADS:
    case TRIPS:
      return `${name}, ${RANK_PLURALS[r[0]]}${kickers(1)}`;
    case FULL_HOUSE:
      return `${name}, ${RANK_PLURALS[r[0]]} over ${RANK_PLURALS[r[1]]}`;
    case TWO_PAIR:
      return `${name}, ${RANK_PLURALS[r[0]]} and ${RANK_PLURALS[r[1]]}${kickers(2)}`;
    default:
      return `pair of ${RANK_PLURALS[r[0]]}${kickers(1)}`;
  }
}

/** The published number of seven-card hands in each category, weakest first: what `countSevenCardHands` must give. */
export const SEVEN_CARD_CATEGORY_COUNTS: readonly number[] = Object.freeze([
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

/** Evaluates every one of the 133,784,560 seven-card hands and counts them by category (about a second). */
export function countSevenCardHands(): number[] {
  const counts = new Array<number>(CATEGORIES.length).fill(0);
  for (let a = 0; a < 52; a++) {
    for (let b = a + 1; b < 52; b++) {
      for (let c = b + 1; c < 52; c++) {
        for (let d = c + 1; d < 52; d++) {
          for (let e = d + 1; e < 52; e++) {
            for (let f = e + 1; f < 52; f++) {
              for (let g = f + 1; g < 52; g++) counts[handCategory(evaluate7(a, b, c, d, e, f, g))]++;
            }
          }
        }
      }
    }
  }
  return counts;
}
