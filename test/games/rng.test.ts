import { describe, expect, it } from "vitest";
import { Rng, seedToBigInt } from "../../games/core/rng.ts";

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

  it("accepts 64-bit seeds as bigint, number or decimal string, and any other string", () => {
    expect(new Rng(42n).state()).toEqual(new Rng(42).state());
    expect(new Rng("42").state()).toEqual(new Rng(42).state());
    expect(seedToBigInt("18446744073709551615")).toBe(2n ** 64n - 1n);
    expect(seedToBigInt(-1)).toBe(2n ** 64n - 1n);
    expect(new Rng("tournament-7").state()).toEqual(new Rng("tournament-7").state());
    expect(new Rng("tournament-7").state()).not.toEqual(new Rng("tournament-8").state());
    expect(() => new Rng(0.5)).toThrow(/safe integer/);
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
