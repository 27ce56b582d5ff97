/**
 * The only source of chance a game may use: xoshiro128** (Blackman & Vigna, 2018), a small,
 * fast, well-studied generator, seeded through splitmix64 so that any 64-bit seed or string
 * gives a well-mixed state. Its whole state is four 32-bit words, so it clones and
 * serialises cheaply (replays, restores, search).
 */

/** A seed: a 64-bit integer (bigint, safe integer, or decimal string) or any other string. */
export type Seed = bigint | number | string;

const MASK64 = (1n << 64n) - 1n;
const TWO_POW_32 = 4294967296;

/** splitmix64 (Steele, Lea & Flood), the seeding generator the xoshiro authors recommend. */
function splitmix64(state: bigint): [next: bigint, output: bigint] {
  const next = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [next, z ^ (z >> 31n)];
}

/** FNV-1a, 64-bit, over the UTF-8 bytes of a string: turns a name into a 64-bit seed. */
function fnv1a64(text: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & MASK64;
  }
  return hash;
}

/** Reduces a seed to 64 bits: integers as themselves (mod 2^64), other strings by FNV-1a. */
export function seedToBigInt(seed: Seed): bigint {
  if (typeof seed === "bigint") return seed & MASK64;
  if (typeof seed === "number") {
    if (!Number.isSafeInteger(seed)) {
      throw new RangeError(`a numeric seed must be a safe integer, got ${seed}`);
    }
    return BigInt(seed) & MASK64;
  }
  if (/^-?\d{1,20}$/.test(seed)) return BigInt(seed) & MASK64;
  return fnv1a64(seed);
}

export class Rng {
  // Four 32-bit words (as signed int32); never all zero.
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /**
   * @param seed the match seed
   * @param stream an independent stream of the same seed (e.g. 0 for the game's chance,
   *   1 for the strategies of a simulated match), so one does not shift the other
   */
  constructor(seed: Seed, stream = 0) {
    const state = seedToBigInt(seed) ^ ((BigInt(stream) * 0xd1b54a32d192ed03n) & MASK64);
    const [afterFirst, a] = splitmix64(state);
    const [, b] = splitmix64(afterFirst);
    this.s0 = Number(BigInt.asIntN(32, a));
    this.s1 = Number(BigInt.asIntN(32, a >> 32n));
    this.s2 = Number(BigInt.asIntN(32, b));
    this.s3 = Number(BigInt.asIntN(32, b >> 32n));
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Restores a generator from `state()`. */
  static fromState(words: readonly number[]): Rng {
    if (words.length !== 4 || words.some((w) => !Number.isInteger(w) || w < 0 || w >= TWO_POW_32)) {
      throw new RangeError("an Rng state is four unsigned 32-bit integers");
    }
    if (words.every((w) => w === 0)) throw new RangeError("an Rng state cannot be all zero");
    const rng = new Rng(0);
    [rng.s0, rng.s1, rng.s2, rng.s3] = words.map((w) => w | 0);
    return rng;
  }

  /** The four state words, for snapshots. */
  state(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  clone(): Rng {
    return Rng.fromState(this.state());
  }

  /** The next unsigned 32-bit output. */
  next(): number {
    // The state words are kept as signed int32 so V8 stores them unboxed; only the output is unsigned.
    const s1 = this.s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** A float in [0, 1) with 32 bits of resolution. */
  float(): number {
    return this.next() / TWO_POW_32;
  }

  /** An integer uniform in [0, n), unbiased (rejection sampling), for 1 ≤ n ≤ 2^32. */
  int(n: number): number {
    if (!(n >= 1 && n <= TWO_POW_32 && Number.isInteger(n))) {
      throw new RangeError(`Rng.int needs an integer in [1, 2^32], got ${n}`);
    }
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    let x = this.next();
    while (x >= limit) x = this.next();
    return x % n;
  }

  /** A float uniform in [min, max]. */
  uniform(min: number, max: number): number {
    return min + this.float() * (max - min);
  }

  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Shuffles in place (Fisher–Yates) and returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i];
      items[i] = items[j];
      items[j] = tmp;
    }
    return items;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
