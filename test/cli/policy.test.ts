import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ludus } from "../support/cli.ts";
import { linearModel, mlpModel } from "../support/onnx-models.ts";
import { strategyAsNetwork } from "../support/policy-models.ts";

/** `ludus policy` and policy seats in the CLI, on an embedded store, as a researcher would use them. */

const dir = mkdtempSync(join(tmpdir(), "ludus-policy-cli-"));
const dataDir = join(dir, "data");
const file = (name: string, bytes: Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const json = async (...argv: string[]) => {
  const result = await ludus(...argv, "--data-dir", dataDir, "--json");
  expect(result.err, result.err).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.out);
};

describe("ludus policy and policy seats", () => {
  let nash: string;
  let uniform: string;
  beforeAll(() => {
    nash = file("kuhn-nash.onnx", strategyAsNetwork("kuhn-poker", "nash"));
    uniform = file("uniform.onnx", linearModel(11, 2, new Array(22).fill(0), [0, 0]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("registers versions with their lineage and shows them", async () => {
    const first = await json(
      "policy",
      "add",
      uniform,
      "--game",
      "kuhn-poker",
      "--name",
      "kuhn-net",
      "--notes",
      "uniform",
    );
    expect(first).toMatchObject({
      name: "kuhn-net",
      version: 1,
      game: "kuhn-poker",
      variant: "standard",
      encoderVersion: 1,
      inputShape: ["batch", 11],
      outputShape: ["batch", 2],
      parent: null,
      notes: "uniform",
    });
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    const second = await json(
      "policy",
      "add",
      nash,
      "--game",
      "kuhn-poker",
      "--name",
      "kuhn-net",
      "--parent",
      "kuhn-net@1",
      "--run",
      "run-7",
      "--cursor",
      "c123",
    );
    expect(second).toMatchObject({ version: 2, parent: first.id, run: "run-7", datasetCursor: "c123" });
    expect((await json("policy", "show", "kuhn-net")).id).toBe(second.id);
    expect((await json("policy", "show", "kuhn-net@1")).id).toBe(first.id);
    expect((await json("policy", "list")).map((r: { version: number }) => r.version)).toEqual([2, 1]);
    const text = await ludus("policy", "show", first.id, "--data-dir", dataDir);
    expect(text.out).toContain("kuhn-net@1");
    expect(text.out).toContain("input [batch, 11], output [batch, 2]");
  });

  it("evaluates a network exactly: the Kuhn Nash table scores < 1e-3, a uniform network 11/24", async () => {
    await json("policy", "add", nash, "--game", "kuhn-poker", "--name", "kuhn-nash");
    const exact = await json("exploitability", "--game", "kuhn-poker", "--policy", "policy:kuhn-nash");
    expect(exact.exploitability).toBeLessThan(1e-3);
    expect(exact.policy).toBe("policy:kuhn-nash@1");
    const flat = await json("exploitability", "--game", "kuhn-poker", "--policy", "policy:kuhn-net@1");
    expect(flat.exploitability).toBeCloseTo(11 / 24, 7);
    // The same figure the built-in table gives.
    const table = await ludus("exploitability", "--game", "kuhn-poker", "--policy", "nash", "--json");
    expect(exact.exploitability).toBeCloseTo(JSON.parse(table.out).exploitability, 6);
  });

  it("refuses bad uploads, each with its message, changing nothing", async () => {
    const before = await json("policy", "list");
    const refused = async (argv: string[], message: string | RegExp) => {
      const { code, out, err } = await ludus(...argv, "--data-dir", dataDir);
      expect(code, err).toBe(2);
      expect(out).toBe("");
      expect(err).toMatch(message);
    };
    const wide = file("wide.onnx", linearModel(12, 2, new Array(24).fill(0), [0, 0]));
    await refused(
      ["policy", "add", wide, "--game", "kuhn-poker", "--name", "wide"],
      "its input must be float32 [batch, 11] (a dynamic batch, then the observation shape), found float32 [batch, 12]",
    );
    const junk = file("junk.onnx", new TextEncoder().encode("not a model"));
    await refused(["policy", "add", junk, "--game", "kuhn-poker", "--name", "junk"], /not an ONNX model onnxruntime/);
    // A Leduc network offered as a Kuhn policy: the game's shapes say so.
    const leduc = file("leduc.onnx", mlpModel(30, 8, 3));
    await refused(
      ["policy", "add", leduc, "--game", "kuhn-poker", "--name", "leduc-net"],
      /found float32 \[batch, 30\]/,
    );
    await refused(
      ["policy", "add", uniform, "--game", "kuhn-poker", "--name", "kuhn-net", "--version-number", "1"],
      /already has version 1/,
    );
    await refused(["policy", "add", uniform, "--game", "kuhn-poker", "--name", "bad:name"], /name/);
    await refused(["policy", "add", uniform, "--game", "kuhn-poker", "--name", "x", "--parent", "nope"], /parent/);
    expect(await json("policy", "list")).toEqual(before);
  });

  it("seats policies in simulate, the same summary for the same seed, by exact version", async () => {
    const run = () =>
      json("simulate", "--game", "kuhn-poker", "--seats", "policy:kuhn-nash,random", "--matches", "300", "--seed", "5");
    const first = await run();
    expect(first.seats).toEqual(["policy:kuhn-nash@1", "random"]);
    expect(await run()).toEqual({ ...first, stepsPerSecond: expect.any(Number) });
    const greedy = await json(
      "simulate",
      "--game",
      "kuhn-poker",
      "--seats",
      "policy:kuhn-net@2:greedy",
      "--matches",
      "4",
    );
    expect(greedy.seats).toEqual(["policy:kuhn-net@2:greedy", "policy:kuhn-net@2:greedy"]);
    const missing = await ludus("simulate", "--game", "kuhn-poker", "--seats", "policy:nobody", "--data-dir", dataDir);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("no registered policy nobody");
    expect(missing.err).toContain("kuhn-nash");
    const wrongGame = await ludus(
      "simulate",
      "--game",
      "leduc-poker",
      "--seats",
      "policy:kuhn-nash",
      "--data-dir",
      dataDir,
    );
    expect(wrongGame.err).toContain("policy:kuhn-nash@1 plays kuhn-poker, not leduc-poker");
  });

  it("removes a version; a removed version no longer seats", async () => {
    const removed = await json("policy", "remove", "kuhn-net@1");
    expect(removed.version).toBe(1);
    const gone = await ludus(
      "exploitability",
      "--game",
      "kuhn-poker",
      "--policy",
      "policy:kuhn-net@1",
      "--data-dir",
      dataDir,
    );
    expect(gone.code).toBe(2);
    expect(gone.err).toContain("kuhn-net has versions 2");
  });
});
