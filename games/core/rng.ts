/**
 * The only source of chance a game may use: xoshiro128** (Blackman & Vigna, 2018), a small,
 * fast, well-studied generator, seeded through splitmix64 so that any 64-bit seed or string
 * gives a well-mixed state. Its whole state is four 32-bit words, so it clones and
 * serialises cheaply (replays, restores, search).
 */

/**
 * The streams of a match's seed, one per source of chance, so that none draws from another's numbers: the game's
 * chance, the built-in strategies', and each seat's sampling policy's.
 */
export const GAME_STREAM = 0;
export const STRATEGY_STREAM = 1;
export const policyStream = (seat: number): number => 2 + seat;

/** A seed: a 64-bit integer (bigint, safe integer, or decimal string) or any other string. */
export type Seed = bigint | number | string;

const MASK64 = (1n << 64n) - 1n;
const TWO_POW_32 = 4294967296;

// Seeding runs once per match, so it works on 64-bit words held as two uint32 halves [hi, lo]
// rather than BigInt, which costs about a microsecond per seed.
type Word = [hi: number, lo: number];

/** The high 32 bits of the 64-bit product of two uint32. */
function mulHigh(a: number, b: number): number {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const t = a1 * b0 + ((a0 * b0) >>> 16);
  const w = (t & 0xffff) + a0 * b1;
  return (a1 * b1 + Math.floor(t / 65536) + Math.floor(w / 65536)) >>> 0;
}

function mul(a: Word, b: Word): Word {
  const hi = mulHigh(a[1], b[1]) + Math.imul(a[0], b[1]) + Math.imul(a[1], b[0]);
  return [hi >>> 0, Math.imul(a[1], b[1]) >>> 0];
}

function add(a: Word, b: Word): Word {
  const lo = a[1] + b[1];
  return [(a[0] + b[0] + (lo >= TWO_POW_32 ? 1 : 0)) >>> 0, lo >>> 0];
}

/** z ^ (z >>> k), for 0 < k < 32. */
function xorShift(z: Word, k: number): Word {
  return [(z[0] ^ (z[0] >>> k)) >>> 0, (z[1] ^ ((z[1] >>> k) | (z[0] << (32 - k)))) >>> 0];
}

const GOLDEN: Word = [0x9e3779b9, 0x7f4a7c15];
const MIX1: Word = [0xbf58476d, 0x1ce4e5b9];
const MIX2: Word = [0x94d049bb, 0x133111eb];
const STREAM: Word = [0xd1b54a32, 0xd192ed03];

/** splitmix64 (Steele, Lea & Flood), the seeding generator the xoshiro authors recommend. */
function splitmix64(state: Word): [next: Word, output: Word] {
  const next = add(state, GOLDEN);
  const z = mul(xorShift(mul(xorShift(next, 30), MIX1), 27), MIX2);
  return [next, xorShift(z, 31)];
}

/**
 * FNV-1a, 64-bit, over the UTF-8 bytes of a string: turns a name into a 64-bit seed. Computed on
 * two 32-bit halves rather than BigInt, since every simulated match hashes its seed string.
 */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

function fnv1a64Word(text: string): Word {
  // ASCII strings are their own UTF-8 bytes; anything else is encoded first.
  const bytes = isAscii(text) ? undefined : new TextEncoder().encode(text);
  const length = bytes ? bytes.length : text.length;
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < length; i++) {
    lo = (lo ^ (bytes ? bytes[i] : text.charCodeAt(i))) >>> 0;
    // × 0x100000001b3 = × 2^40 + × 0x1b3, mod 2^64; every partial product stays below 2^53.
    const low = lo * 0x1b3;
    hi = (hi * 0x1b3 + Math.floor(low / TWO_POW_32) + ((lo << 8) >>> 0)) % TWO_POW_32;
    lo = low % TWO_POW_32;
  }
  return [hi, lo];
}

function toBigInt(word: Word): bigint {
  return (BigInt(word[0]) << 32n) | BigInt(word[1]);
}

function fromBigInt(value: bigint): Word {
  const v = value & MASK64;
  return [Number(v >> 32n), Number(v & 0xffffffffn)];
}

export function fnv1a64(text: string): bigint {
  return toBigInt(fnv1a64Word(text));
}

/** Reduces a seed to 64 bits: integers as themselves (mod 2^64), other strings by FNV-1a. */
function seedWord(seed: Seed): Word {
  if (typeof seed === "bigint") return fromBigInt(seed);
  if (typeof seed === "number") {
    if (!Number.isSafeInteger(seed)) {
      throw new RangeError(`a numeric seed must be a safe integer, got ${seed}`);
    }
    return seed >= 0 ? [Math.floor(seed / TWO_POW_32), seed % TWO_POW_32] : fromBigInt(BigInt(seed));
  }
  if (/^-?\d{1,20}$/.test(seed)) return fromBigInt(BigInt(seed));
  return fnv1a64Word(seed);
}

export function seedToBigInt(seed: Seed): bigint {
  return toBigInt(seedWord(seed));
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
    const seed64 = seedWord(seed);
    const mix = mul([0, stream >>> 0], STREAM);
    const [afterFirst, a] = splitmix64([(seed64[0] ^ mix[0]) >>> 0, (seed64[1] ^ mix[1]) >>> 0]);
    const [, b] = splitmix64(afterFirst);
    this.s0 = a[1] | 0;
    this.s1 = a[0] | 0;
    this.s2 = b[1] | 0;
    this.s3 = b[0] | 0;
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
