import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MatchRecord, SeatRecord } from "../../db/records.ts";
import { ReplayStore } from "../../db/store.ts";
import { BACKENDS, openTestStore, type TestStore, UNDO_PLAYERS_SCHEMA } from "../support/stores.ts";
import { matchHeader } from "../support/match-header.ts";

const match = (id: string, seats: (SeatRecord | null)[], createdAt = new Date()): MatchRecord =>
  matchHeader(id, { game: "kuhn-poker", variant: "standard", seats: seats as SeatRecord[], createdAt });

const LLM: SeatRecord = { kind: "llm", name: "qwen", tokenId: "t2", model: "qwen3-8b", endpoint: "http://a/v1" };
const POLICY: SeatRecord = { kind: "policy", name: "policy:cfr@3", policyId: "pol_x", policyVersion: 3 };
const NASH: SeatRecord = { kind: "builtin", name: "nash", strategy: "nash" };

for (const backend of BACKENDS) {
  describe(`players and tokens (${backend})`, () => {
    const open: TestStore[] = [];
    const fresh = async () => {
      const store = await openTestStore(backend);
      open.push(store);
      return store;
    };
    /** Stores opened again on a test store's data: closed before it is removed. */
    const reopened: ReplayStore[] = [];
    const reopen = async (options: TestStore["options"]) => {
      const store = await ReplayStore.open(options);
      reopened.push(store);
      return store;
    };
    afterEach(async () => {
      for (const s of reopened.splice(0)) await s.close();
      for (const s of open.splice(0)) await s.close();
    });

    it("writes each seated player once, with what names it, and finds their matches", async () => {
      const { store } = await fresh();
      await store.writer.writeMatch(match("m1", [LLM, NASH]));
      await store.writer.writeMatch(match("m2", [POLICY, null])); // an open seat is nobody yet
      await store.writer.writeMatch(match("m3", [{ ...LLM, endpoint: "http://b/v1" }, POLICY]));
      expect((await store.players.list({}, 10)).map((p) => [p.id, p.kind, p.name, p.details])).toEqual([
        ["builtin:nash", "builtin", "nash", { strategy: "nash" }],
        ["llm:qwen", "llm", "qwen", { model: "qwen3-8b", endpoint: "http://b/v1" }], // as last seen
        ["policy:cfr@3", "policy", "policy:cfr@3", { policyId: "pol_x", policyVersion: 3 }],
      ]);
      expect((await store.players.list({ kind: "llm" }, 10)).map((p) => p.id)).toEqual(["llm:qwen"]);
      expect((await store.players.list({ search: "CFR" }, 10)).map((p) => p.id)).toEqual(["policy:cfr@3"]);
      expect((await store.players.list({}, 1, "builtin:nash")).map((p) => p.id)).toEqual(["llm:qwen"]);
      expect(await store.players.get("bot:nobody")).toBeUndefined();
      // A policy's seat name is already its id; a built-in's is not: both are found.
      const ids = async (player: string) => (await store.matches({ player }, 10)).map((m) => m.id);
      expect(await ids("policy:cfr@3")).toEqual(["m2", "m3"]);
      expect(await ids("builtin:nash")).toEqual(["m1"]);
      expect(await ids("bot:qwen")).toEqual([]); // the kind counts, not only the name
    });

    it("keeps tokens hashed, verifies them, refuses a second live name, revokes by name or id", async () => {
      const { store, options } = await fresh();
      const { token, record } = await store.tokens.create("alpha", "llm", 3);
      const secret = token.slice("ludus_".length + 13);
      const rows = await store.sql.query("SELECT * FROM tokens");
      expect(JSON.stringify(rows)).not.toContain(secret);
      expect(await store.tokens.verify(token)).toMatchObject({
        id: record.id,
        name: "alpha",
        kind: "llm",
        maxMatches: 3,
      });
      expect(await store.tokens.verify(token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"))).toBeUndefined();
      expect(await store.tokens.verify("ludus_nonsense")).toBeUndefined();
      await expect(store.tokens.create("alpha")).rejects.toThrow(/a bot named alpha already has a token/);
      // A bot's token makes its player; an admin's does not (it never plays).
      await store.tokens.create("root", "admin");
      expect((await store.players.list({}, 10)).map((p) => p.id)).toEqual(["llm:alpha"]);

      // Another process on the same store (a second server, or the CLI) revokes it: the next check sees that.
      await store.close();
      const other = await reopen(options);
      expect(await other.tokens.revoke(record.id)).toBe(true);
      expect(await other.tokens.revoke("alpha")).toBe(false);
      expect(await other.tokens.verify(token)).toBeUndefined();
      expect((await other.tokens.create("alpha")).record.name).toBe("alpha"); // the name is free again
      expect((await other.tokens.list()).map((t) => [t.name, t.kind, t.revoked ?? false])).toEqual([
        ["alpha", "llm", true],
        ["root", "admin", false],
        ["alpha", "bot", false],
      ]);
    });

    it("moves an older data directory's tokens.json into the store once, and the file out of the way", async () => {
      const { store, options, dataDir } = await fresh();
      await store.close();
      const secret = "s".repeat(32);
      const old = (id: string, name: string, revoked = false) => ({
        id,
        name,
        kind: "bot",
        hash: createHash("sha256").update(secret).digest("hex"),
        createdAt: "2026-11-01T00:00:00.000Z",
        maxMatches: 7,
        ...(revoked && { revoked: true }),
      });
      writeFileSync(
        join(dataDir, "tokens.json"),
        JSON.stringify({ tokens: [old("aaaaaaaaaaaa", "veteran"), old("bbbbbbbbbbbb", "gone", true)] }),
      );
      const upgraded = await reopen(options);
      expect(existsSync(join(dataDir, "tokens.json"))).toBe(false);
      expect(existsSync(join(dataDir, "tokens.json.imported"))).toBe(true);
      expect(await upgraded.tokens.verify(`ludus_aaaaaaaaaaaa_${secret}`)).toMatchObject({
        name: "veteran",
        maxMatches: 7,
      });
      expect(await upgraded.tokens.verify(`ludus_bbbbbbbbbbbb_${secret}`)).toBeUndefined();
      expect(await upgraded.players.get("bot:veteran")).toMatchObject({ kind: "bot", name: "veteran" });
    });

    it("lists the players of matches stored before the players table, as of their latest seat", async () => {
      const { store, options } = await fresh();
      await store.writer.writeMatch(match("old", [{ ...LLM, model: "older" }, NASH], new Date("2026-01-01T00:00:00Z")));
      await store.writer.writeMatch(match("new", [LLM, POLICY], new Date("2026-02-01T00:00:00Z")));
      await store.sql.exec(UNDO_PLAYERS_SCHEMA);
      await store.close();
      const upgraded = await reopen(options);
      const players = await upgraded.players.list({}, 10);
      expect(players.map((p) => [p.id, p.details])).toEqual([
        ["builtin:nash", { strategy: "nash" }],
        ["llm:qwen", { model: "qwen3-8b", endpoint: "http://a/v1" }],
        ["policy:cfr@3", { policyId: "pol_x", policyVersion: 3 }],
      ]);
      expect(players[1].createdAt.toISOString()).toBe("2026-01-01T00:00:00.000Z"); // since first seen
    });
  });
}
