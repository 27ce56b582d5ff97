import { afterEach, describe, expect, it } from "vitest";
import { GroupCommit, MatchMovedError } from "../../db/group-commit.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";
import { matchHeader, stepRow } from "../support/match-header.ts";

/**
 * The match directory (db/nodes.ts) with two server processes' writers on one store: a match changes hands
 * only once its owner's lease lapsed, the owner taken over can neither renew nor write to it afterwards (one that
 * nobody took over renews and writes on), and a restarted node takes back its own earlier life's matches at once,
 * never a live peer's.
 */

const LONG = 60_000;

for (const backend of BACKENDS) {
  describe(`the match directory (${backend})`, () => {
    const open: TestStore[] = [];
    afterEach(async () => {
      for (const store of open.splice(0)) await store.close();
    });

    /** A store with two nodes joined, `a` through the store's own writer and `b` through a second one. */
    const twoNodes = async () => {
      const test = await openTestStore(backend);
      open.push(test);
      const { store } = test;
      const a = await store.nodes.join("a", { url: "http://a", shared: true, leaseMs: LONG });
      const b = await store.nodes.join("b", { url: "http://b", shared: true, leaseMs: LONG });
      store.writer.owner = a;
      const other = new GroupCommit(store.sql, "writer-b");
      other.owner = b;
      const lapse = (node: string) =>
        store.sql.query("UPDATE nodes SET lease_until = clock_timestamp() - interval '1 second' WHERE id = $1", [node]);
      return { store, a, b, other, lapse };
    };

    // The embedded store admits one process, so no peer can take a match from it: its decisions go by COPY, unfenced.
    it.skipIf(backend === "pglite")(
      "moves a match only once its owner's lease lapsed, and fences the lapsed owner's writes",
      async () => {
        const { store, a, b, other, lapse } = await twoNodes();
        await store.writer.writeMatch(matchHeader("m1"));
        await store.writer.appendStep(stepRow("m1", 1));
        expect(await store.nodes.claim(b)).toEqual([]); // a's lease runs
        expect((await store.nodes.ownerOf("m1"))?.node).toBe("a");

        await lapse("a");
        expect(await store.nodes.claim(b)).toEqual(["m1"]);
        // The lapsed owner's next decision and its end are refused as moved, and nothing of them is written.
        await expect(store.writer.appendStep(stepRow("m1", 2, { type: "defect" }))).rejects.toThrow(MatchMovedError);
        await expect(store.writer.writeMatch(matchHeader("m1", { endedAt: new Date(), endReason: "completed" })))
          .rejects.toThrow(MatchMovedError);
        await other.appendStep(stepRow("m1", 2));
        expect((await store.steps("m1")).map((s) => [s.seq, s.action])).toEqual([
          [1, { type: "cooperate" }],
          [2, { type: "cooperate" }],
        ]);
        expect((await store.unfinished(["m1"])).map((m) => m.id)).toEqual(["m1"]);
        // A life taken over is never renewed: the node must join again, as a new life that takes nothing of b's.
        expect(await store.nodes.renew(a, LONG)).toBe("taken-over");
        expect(await store.nodes.renew(b, LONG)).toBe("renewed");
        const again = await store.nodes.join("a", { url: "http://a", shared: true, leaseMs: LONG });
        expect(again.epoch).toBe(a.epoch + 1);
        expect(await store.nodes.claim(again, { start: true })).toEqual([]);
        // The life before, still running somewhere with the same node id, learns that another took its name.
        expect(await store.nodes.renew(a, LONG)).toBe("superseded");
        await other.close();
      },
    );

    it.skipIf(backend === "pglite")(
      "lets an owner whose lease lapsed write and renew while no peer took it over: a store outage takes nothing",
      async () => {
        const { store, a, b, lapse } = await twoNodes();
        await store.writer.writeMatch(matchHeader("m1"));
        await lapse("a");
        await lapse("b"); // as after an outage of the store longer than the lease: every lease lapsed at once
        await store.writer.appendStep(stepRow("m1", 1));
        await store.writer.writeMatch(matchHeader("m2"));
        // Each renews before it looks for lapsed peers (membership's tick): neither takes the other's matches.
        expect(await store.nodes.renew(b, LONG)).toBe("revived");
        expect(await store.nodes.renew(a, LONG)).toBe("revived");
        expect(await store.nodes.renew(a, LONG)).toBe("renewed");
        expect(await store.nodes.claim(a)).toEqual([]);
        expect(await store.nodes.claim(b)).toEqual([]);
        expect((await store.steps("m1")).map((s) => s.seq)).toEqual([1]);
        expect((await store.unfinished(["m1", "m2"])).map((m) => m.id).sort()).toEqual(["m1", "m2"]);
        expect(await store.nodes.ownerOf("m2")).toMatchObject({ node: "a", epoch: a.epoch, live: true });
      },
    );

    it("drops what an earlier life of the process queued: a new life never writes it under its name", async () => {
      const { store, a } = await twoNodes();
      await store.writer.writeMatch(matchHeader("kept"));
      // Queued, not yet written, when the process joins again as a new life.
      const late = store.writer.appendStep(stepRow("kept", 1));
      store.writer.owner = { node: "a", epoch: a.epoch + 1 };
      await expect(late).rejects.toThrow(MatchMovedError);
      expect(await store.steps("kept")).toEqual([]);
    });

    it("gives a restarted node its earlier life's matches at once, and unowned ones, but no live peer's", async () => {
      const { store, a, other, lapse } = await twoNodes();
      await store.writer.writeMatch(matchHeader("mine"));
      await other.writeMatch(matchHeader("peers"));
      store.writer.owner = undefined; // a process that is not a server writes a match nobody owns
      await store.writer.writeMatch(matchHeader("nobodys"));
      await store.writer.writeMatch(matchHeader("ended", { endedAt: new Date(), endReason: "completed" }));
      const restarted = await store.nodes.join("a", { url: "http://a", shared: true, leaseMs: LONG });
      expect((await store.nodes.claim(restarted, { start: true })).sort()).toEqual(["mine", "nobodys"]);
      expect(await store.nodes.claim(restarted)).toEqual([]);
      const listed = await store.nodes.listing();
      expect(listed.map((n) => [n.node, n.epoch, n.live, n.matches])).toEqual([
        ["a", a.epoch + 1, true, 2],
        ["b", 1, true, 1],
      ]);
      // Leaving lets the lease lapse at once: a peer takes the matches at its next look.
      await store.nodes.leave(restarted);
      expect((await store.nodes.claim((await store.nodes.nodes())[1])).sort()).toEqual(["mine", "nobodys"]);
      // A process alone on its store (the embedded one) takes every unfinished match, whoever wrote it.
      await lapse("b");
      const alone = await store.nodes.join("c", { url: "http://c", shared: false, leaseMs: LONG });
      expect((await store.nodes.claim(alone, { start: true, alone: true })).sort()).toEqual([
        "mine",
        "nobodys",
        "peers",
      ]);
      await other.close();
    });
  });
}
