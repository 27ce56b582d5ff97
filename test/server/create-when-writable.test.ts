import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveMatches, StoreUnavailableError } from "../../server/match/live-matches.ts";
import { openTestStore, type TestStore } from "../support/stores.ts";

/** Runs that make their own matches (tournaments, evolutions, scenarios) wait for a full store instead of failing. */
describe("creating a match when the store's buffer is full", () => {
  let test: TestStore;
  beforeAll(async () => (test = await openTestStore("pglite", { groupCommit: { maxBuffer: 1 } })));
  afterAll(() => test?.close());

  it("is refused to a request, and waited for by a run", async () => {
    const live = new LiveMatches({ store: test.store, lingerMs: 0 });
    const spec = { game: "kuhn-poker", seats: [{ strategy: "nash" }, { strategy: "random" }] };
    const first = live.create(spec); // its record fills the one-record buffer until written
    expect(test.store.writer.full).toBe(true);
    expect(() => live.create(spec)).toThrow(StoreUnavailableError);
    const second = await live.createWhenWritable(spec);
    expect(second.id).not.toBe(first.id);
    expect((await second.durableEnd()).reason).toBe("completed");
    live.stopAccepting();
    await expect(live.createWhenWritable(spec)).rejects.toMatchObject({ code: "server_stopping" });
  });
});
