import { createHash, randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type NewPolicy, PolicyRegistryError } from "../../db/policies.ts";
import type { MatchRecord, SeatRecord } from "../../db/records.ts";
import { ReplayStore } from "../../db/store.ts";
import { BACKENDS, openTestStore, type TestStore, UNDO_LEAGUE_SCHEMA } from "../support/stores.ts";
import { matchHeader } from "../support/match-header.ts";
import { SCHEMA_VERSION } from "../../db/migrate.ts";

const policy = (name: string, extra: Partial<NewPolicy> = {}): NewPolicy => ({
  name,
  game: "kuhn-poker",
  gameVersion: 1,
  variant: "classic",
  config: { ante: 1 },
  encoderVersion: 1,
  inputShape: ["batch", 11],
  outputShape: ["batch", 2],
  ...extra,
});

/** Random bytes with every byte value in them, 0 and 255 at the ends (what a text path would mangle). */
const modelBytes = (size = 100 * 1024): Uint8Array => {
  const bytes = new Uint8Array(randomBytes(size));
  for (let i = 0; i < 256; i++) bytes[i + 1] = i;
  bytes[0] = 0;
  bytes[size - 1] = 255;
  return bytes;
};

const policySeat = (policyId: string, policyVersion: number): SeatRecord => ({
  kind: "policy",
  name: `policy:x@${policyVersion}`,
  policyId,
  policyVersion,
});

const match = (id: string, seats: (SeatRecord | null)[], endedAt: Date | null = null): MatchRecord =>
  matchHeader(id, {
    game: "kuhn-poker",
    seats: seats as SeatRecord[],
    returns: endedAt ? [1, -1] : null,
    endReason: endedAt ? "completed" : null,
    endedAt,
  });

/** The error a promise rejects with, which must be a registry refusal. */
async function refusal(promise: Promise<unknown>): Promise<PolicyRegistryError> {
  const error = await promise.then(() => undefined, (e) => e);
  expect(error).toBeInstanceOf(PolicyRegistryError);
  return error as PolicyRegistryError;
}

for (const backend of BACKENDS) {
  describe(`the policy registry (${backend})`, () => {
    const open: TestStore[] = [];
    const fresh = async () => {
      const t = await openTestStore(backend);
      open.push(t);
      return t;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it("keeps a policy's metadata and its ONNX bytes exactly, found by id, name and name@version", async () => {
      const { store } = await fresh();
      const bytes = modelBytes();
      const added = await store.policies.add(
        policy("kuhn-ppo", { run: "run-7", datasetCursor: "c:42", notes: "first try" }),
        bytes,
      );
      expect(added).toMatchObject({
        name: "kuhn-ppo",
        version: 1,
        game: "kuhn-poker",
        gameVersion: 1,
        variant: "classic",
        config: { ante: 1 },
        encoderVersion: 1,
        inputShape: ["batch", 11],
        outputShape: ["batch", 2],
        sha256: createHash("sha256").update(bytes).digest("hex"),
        bytes: bytes.byteLength,
        parent: null,
        run: "run-7",
        datasetCursor: "c:42",
        notes: "first try",
      });
      expect(added.id).toMatch(/^pol_[A-Za-z0-9_-]{12}$/);
      expect(added.createdAt).toBeInstanceOf(Date);
      expect(Object.keys(added)).not.toContain("model");

      const second = await store.policies.add(policy("kuhn-ppo", { parent: added.id }), modelBytes(2048));
      expect(second.version).toBe(2);
      expect(second.parent).toBe(added.id);
      expect(second.id).not.toBe(added.id);

      expect(await store.policies.get(added.id)).toEqual(added);
      expect(await store.policies.get("kuhn-ppo@1")).toEqual(added);
      expect(await store.policies.get("kuhn-ppo")).toEqual(second);
      for (const none of ["kuhn-ppo@3", "kuhn-ppo@0", "kuhn-ppo@x", "kuhn-ppo@", "nobody", "pol_nothing12", "@1"]) {
        expect(await store.policies.get(none)).toBeUndefined();
      }

      const model = await store.policies.model(added.id);
      expect(model?.constructor).toBe(Uint8Array);
      expect(model).toEqual(bytes);
      expect(await store.policies.model("pol_nothing12")).toBeUndefined();
    });

    it("lists by name then newest version first, filtered by game or name", async () => {
      const { store } = await fresh();
      await store.policies.add(policy("b-leduc", { game: "leduc-poker" }), modelBytes(64));
      await store.policies.add(policy("a-kuhn"), modelBytes(64));
      await store.policies.add(policy("a-kuhn"), modelBytes(64));
      await store.policies.add(policy("b-leduc", { game: "leduc-poker" }), modelBytes(64));
      const refs = (list: { name: string; version: number }[]) => list.map((p) => `${p.name}@${p.version}`);
      expect(refs(await store.policies.list())).toEqual(["a-kuhn@2", "a-kuhn@1", "b-leduc@2", "b-leduc@1"]);
      expect(refs(await store.policies.list({ game: "leduc-poker" }))).toEqual(["b-leduc@2", "b-leduc@1"]);
      expect(refs(await store.policies.list({ name: "a-kuhn" }))).toEqual(["a-kuhn@2", "a-kuhn@1"]);
      expect(await store.policies.list({ game: "leduc-poker", name: "a-kuhn" })).toEqual([]);
    });

    it("numbers versions on from the highest, takes a free explicit one, and refuses a taken one changing nothing", async () => {
      const { store } = await fresh();
      expect((await store.policies.add(policy("p"), modelBytes(64))).version).toBe(1);
      expect((await store.policies.add(policy("p", { version: 5 }), modelBytes(64))).version).toBe(5);
      expect((await store.policies.add(policy("p", { version: 3 }), modelBytes(64))).version).toBe(3);
      expect((await store.policies.add(policy("p"), modelBytes(64))).version).toBe(6);
      const before = await store.policies.list();

      const error = await refusal(store.policies.add(policy("p", { version: 3, notes: "again" }), modelBytes(64)));
      expect(error.code).toBe("duplicate");
      expect(error.message).toMatch(/already has version 3 \(versions 1, 3, 5, 6\); the next free version is 7/);
      expect(await store.policies.list()).toEqual(before);
      expect((await store.policies.get("p@3"))!.notes).toBeNull();
    });

    it("gives adds of one name at the same time one version each", async () => {
      const { store } = await fresh();
      const added = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.policies.add(policy("raced", { notes: `${i}` }), modelBytes(256))),
      );
      expect(added.map((p) => p.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(await store.policies.list({ name: "raced" })).toHaveLength(12);
    });

    it("refuses a parent that is not registered, a bad name and bad fields, with what is allowed", async () => {
      const { store } = await fresh();
      const unknownParent = await refusal(
        store.policies.add(policy("child", { parent: "pol_missing1234" }), modelBytes(64)),
      );
      expect(unknownParent.code).toBe("bad_policy");
      expect(unknownParent.message).toMatch(/`parent` "pol_missing1234" is not a registered policy id/);

      for (const name of ["", "a:b", "a@1", "-lead", ".hidden", "x".repeat(65), "with space", "pol_like_an_id", "é"]) {
        const error = await refusal(store.policies.add(policy(name), modelBytes(64)));
        expect(error.code).toBe("bad_policy");
        expect(error.message).toMatch(/is not allowed: (a name is 1-64 characters|names starting with pol_)/);
      }
      expect((await store.policies.add(policy("x".repeat(64)), modelBytes(64))).name).toHaveLength(64);

      const bad: [Partial<NewPolicy>, Uint8Array, RegExp][] = [
        [{ version: 0 }, modelBytes(64), /`version` is 0: it must be an integer from 1/],
        [{ version: 1.5 }, modelBytes(64), /`version` is 1.5/],
        [{ game: "" }, modelBytes(64), /`game` must be a non-empty string/],
        [{ gameVersion: -1 }, modelBytes(64), /`gameVersion` is -1/],
        [{ inputShape: [] }, modelBytes(64), /`inputShape` is \[\]: a shape is a non-empty array/],
        [{ outputShape: ["batch", 0] }, modelBytes(64), /`outputShape` is \["batch",0\]/],
        [{ config: { n: Number.NaN } }, modelBytes(64), /`config.n` is NaN/],
        [{ notes: "a\u0000b" }, modelBytes(64), /`notes` contains a NUL character/],
        [{}, new Uint8Array(0), /the model must be the ONNX file's bytes, 1 byte to 128 MiB, not 0 bytes/],
      ];
      for (const [extra, bytes, message] of bad) {
        const error = await refusal(store.policies.add(policy("fields", extra), bytes));
        expect(error.code).toBe("bad_policy");
        expect(error.message).toMatch(message);
      }
      expect((await store.policies.list()).map((p) => p.name)).toEqual(["x".repeat(64)]);
    });

    it("removes one version, named as get names it, and refuses an unknown one", async () => {
      const { store } = await fresh();
      const v1 = await store.policies.add(policy("r"), modelBytes(64));
      const v2 = await store.policies.add(policy("r"), modelBytes(64));
      const v3 = await store.policies.add(policy("r"), modelBytes(64));
      expect(await store.policies.remove("r@2")).toEqual(v2);
      expect(await store.policies.remove(v1.id)).toEqual(v1);
      expect(await store.policies.model(v1.id)).toBeUndefined();
      expect(await store.policies.get("r@2")).toBeUndefined();
      expect(await store.policies.remove("r")).toEqual(v3);
      expect(await store.policies.list()).toEqual([]);
      for (const ref of ["r", "r@2", v1.id, "r@x"]) {
        const error = await refusal(store.policies.remove(ref));
        expect(error.code).toBe("unknown_policy");
        expect(error.message).toMatch(/no registered policy is .*; name one by a policy id \(pol_\.\.\.\), a name/);
      }
    });

    it("refuses to remove a policy an unfinished match seats, and removes it once that match ends", async () => {
      const { store } = await fresh();
      const seated = await store.policies.add(policy("seated"), modelBytes(64));
      const other = await store.policies.add(policy("other"), modelBytes(64));
      const seats = [{ kind: "builtin", name: "random", strategy: "random" } as SeatRecord, policySeat(seated.id, 1)];
      await store.writer.writeMatch(match("running", seats));
      await store.writer.writeMatch(match("open-seat", [null, policySeat(seated.id, 1)]));
      // Seating another policy, or having ended, does not hold it.
      await store.writer.writeMatch(match("elsewhere", [policySeat(other.id, 1), null]));
      await store.writer.writeMatch(match("over", [policySeat(other.id, 1), policySeat(other.id, 1)], new Date()));

      const error = await refusal(store.policies.remove("seated"));
      expect(error.code).toBe("in_use");
      expect(error.message).toMatch(
        /policy seated@1 \(pol_.+\) seats 2 unfinished matches \((running, open-seat|open-seat, running)\)/,
      );
      expect(await store.policies.get(seated.id)).toEqual(seated);

      await store.writer.writeMatch(match("running", seats, new Date()));
      await store.writer.writeMatch(match("open-seat", [null, policySeat(seated.id, 1)], new Date()));
      expect(await store.policies.remove("seated")).toEqual(seated);
      expect((await refusal(store.policies.remove("other"))).code).toBe("in_use");
    });

    it("is added to a store of schema 3, whose matches stay", async () => {
      const { store, options } = await fresh();
      await store.writer.writeMatch(match("kept", [null, null], new Date()));
      // Back to schema 3: what migrations 4, 5 and 6 add, removed.
      await store.sql.exec(`
        ${UNDO_LEAGUE_SCHEMA}
        DROP TABLE policies;
        DELETE FROM ludus_schema WHERE version = 4;`);
      await store.close();
      const upgraded = await ReplayStore.open(options);
      try {
        const versions = await upgraded.sql.query<{ version: number }>("SELECT version FROM ludus_schema ORDER BY 1");
        expect(versions.map((v) => v.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
        expect((await upgraded.match("kept"))?.endSeq).toBe(1);
        const added = await upgraded.policies.add(policy("after-upgrade"), modelBytes(64));
        expect(await upgraded.policies.get("after-upgrade@1")).toEqual(added);
      } finally {
        await upgraded.close();
      }
    });
  });
}
