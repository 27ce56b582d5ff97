import { describe, expect, it } from "vitest";
import { fnv1a64, Rng, seedToBigInt } from "../../games/core/rng.ts";

describe("Rng (xoshiro128** seeded by splitmix64)", () => {
  it("matches the reference C implementation from a raw state", () => {
    const rng = Rng.fromState([1, 2, 3, 4]);
    expect([1, 2, 3, 4, 5, 6].map(() => rng.next())).toEqual([11520, 0, 5927040, 70819200, 2031721883, 1637235492]);
  });

  it("seeds through splitmix64 exactly as the reference does", () => {
    // splitmix64(42) → 13679457532755275413, 2949826092126892291, split into low/high words.
    const rng = new Rng(42);
    expect(rng.state()).toEqual([
      Number(13679457532755275413n & 0xffffffffn),
      Number(13679457532755275413n >> 32n),
      Number(2949826092126892291n & 0xffffffffn),
      Number(2949826092126892291n >> 32n),
    ]);
    expect([1, 2, 3, 4].map(() => rng.next())).toEqual([1776835114, 4165204688, 17111135, 2317295270]);
  });

  it("seeds every stream exactly as a BigInt splitmix64 reference does", () => {
    const M = 2n ** 64n - 1n;
    const splitmix = (x: bigint): [bigint, bigint] => {
      const next = (x + 0x9e3779b97f4a7c15n) & M;
      let z = ((next ^ (next >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
      return [next, z ^ (z >> 31n)];
    };
    const reference = (seed: bigint, stream: number) => {
      const [next, a] = splitmix(seed ^ ((BigInt(stream) * 0xd1b54a32d192ed03n) & M));
      const [, b] = splitmix(next);
      return [a & 0xffffffffn, a >> 32n, b & 0xffffffffn, b >> 32n].map(Number);
    };
    const seeds = [0n, 1n, 42n, 2n ** 63n + 12345n, M, 0xdeadbeefcafef00dn];
    for (const seed of seeds) {
      for (const stream of [0, 1, 7, 2 ** 31 + 5]) {
        expect(new Rng(seed, stream).state()).toEqual(reference(seed, stream));
        expect(new Rng(`${seed}`, stream).state()).toEqual(reference(seed, stream));
      }
    }
    expect(new Rng(-5).state()).toEqual(reference(M - 4n, 0));
    expect(new Rng(2 ** 53 - 1).state()).toEqual(reference(2n ** 53n - 1n, 0));
  });

  it("accepts 64-bit seeds as bigint, number or decimal string, and any other string", () => {
    expect(new Rng(42n).state()).toEqual(new Rng(42).state());
    expect(new Rng("42").state()).toEqual(new Rng(42).state());
    expect(seedToBigInt("18446744073709551615")).toBe(2n ** 64n - 1n);
    expect(seedToBigInt(-1)).toBe(2n ** 64n - 1n);
    expect(new Rng("tournament-7").state()).toEqual(new Rng("tournament-7").state());
    expect(new Rng("tournament-7").state()).not.toEqual(new Rng("tournament-8").state());
    expect(() => new Rng(0.5)).toThrow(/safe integer/);
  });

  it("hashes string seeds with FNV-1a 64 (published vectors, and a BigInt reference for UTF-8)", () => {
    expect(fnv1a64("")).toBe(0xcbf29ce484222325n);
    expect(fnv1a64("a")).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64("foobar")).toBe(0x85944171f73967e8n);
    const reference = (text: string) => {
      let h = 0xcbf29ce484222325n;
      for (const b of new TextEncoder().encode(text)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & (2n ** 64n - 1n);
      return h;
    };
    for (const text of ["1/0", "tournament-7", "héllo wörld ☃", "x".repeat(300)]) {
      expect(fnv1a64(text)).toBe(reference(text));
    }
  });

  it("gives independent streams of one seed", () => {
    const a = new Rng(7, 0), b = new Rng(7, 1);
    expect(a.next()).not.toBe(b.next());
  });

  it("clones and restores its state", () => {
    const rng = new Rng(9);
    rng.next();
    const copy = rng.clone();
    const restored = Rng.fromState(rng.state());
    const ahead = [rng.next(), rng.next()];
    expect([copy.next(), copy.next()]).toEqual(ahead);
    expect([restored.next(), restored.next()]).toEqual(ahead);
    expect(() => Rng.fromState([0, 0, 0, 0])).toThrow(/all zero/);
    expect(() => Rng.fromState([1, 2, 3])).toThrow(/four/);
  });

  it("draws uniform integers without bias and floats in [0, 1)", () => {
    const rng = new Rng("uniform");
    const counts = [0, 0, 0];
    for (let i = 0; i < 30_000; i++) counts[rng.int(3)]++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(400);
    for (let i = 0; i < 1000; i++) {
      const f = rng.float();
      expect(f >= 0 && f < 1).toBe(true);
    }
    expect(() => rng.int(0)).toThrow(RangeError);
  });

  it("shuffles deterministically", () => {
    const a = new Rng(3).shuffle([1, 2, 3, 4, 5, 6]);
    expect(new Rng(3).shuffle([1, 2, 3, 4, 5, 6])).toEqual(a);
    expect([...a].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
