import { describe, expect, it } from "vitest";
import { Recent } from "../../server/league/recent.ts";

describe("Recent", () => {
  it("computes once for every asker within its time, per key, and again after a failure", async () => {
    let calls = 0;
    const recent = new Recent<number>(60_000);
    const compute = () => Promise.resolve(++calls);
    expect(await Promise.all([recent.get("a", compute), recent.get("a", compute)])).toEqual([1, 1]);
    expect(await recent.get("b", compute)).toBe(2);
    await expect(recent.get("c", () => Promise.reject(new Error("store away")))).rejects.toThrow("store away");
    expect(await recent.get("c", compute)).toBe(3);
    const expired = new Recent<number>(0);
    expect([await expired.get("a", compute), await expired.get("a", compute)]).toEqual([4, 5]);
  });
});
