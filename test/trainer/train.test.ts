import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import { ludus } from "../support/cli.ts";
import { linearModel } from "../support/onnx-models.ts";
import { projectPython } from "../support/python.ts";
import { runLudus } from "../support/server-process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The training loop as a researcher runs it: `ludus train` on CPU, and the Python trainer alone against a
 * server that plays its policy's self-play (`--self-play`), killed and resumed. Needs the project's .venv with
 * the trainer's packages (`.ci/run` makes it); without it the suite says so and skips.
 */

const { python, ready, suite } = projectPython(["torch", "pyarrow", "onnx", "matplotlib"], "training");
const TRAINER = resolve("policies/trainer");

/** The trainer alone, its JSON lines read as they come. */
function trainer(url: string, token: string, ...args: string[]) {
  const child = spawn(python, ["-m", "ludus_trainer", "--server", url, ...args], {
    cwd: TRAINER,
    env: { ...process.env, LUDUS_TOKEN: token, PYTHONPATH: TRAINER, PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(JSON.parse(line));
    waiters.splice(0).forEach((wake) => wake());
  });
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  /** Resolves with the first line `test` accepts, from those seen so far or to come. */
  const line = (test: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((found, failed) => {
      const look = () => {
        const hit = lines.find(test);
        if (hit) return found(hit);
        if (child.exitCode !== null) return failed(new Error(`the trainer exited (${child.exitCode}): ${err}`));
        waiters.push(look);
      };
      exited.then(() => waiters.push(look) && look());
      look();
    });
  return { child: child as ChildProcess, lines, line, exited, err: () => err };
}

/**
 * `expression` of what the trainer keeps under `key` in a model's ONNX metadata (`value`, bytes or None), evaluated
 * by the trainer's own reader, as a resumed run reads it.
 */
function trainerMetadata(model: Uint8Array, key: string, expression: string): string {
  const folder = mkdtempSync(join(tmpdir(), "ludus-model-"));
  const file = join(folder, "model.onnx");
  writeFileSync(file, model);
  const run = spawnSync(python, [
    "-c",
    "import sys, io, numpy as np; from ludus_trainer.network import metadata_of; " +
    `value = metadata_of(open(sys.argv[1], 'rb').read(), sys.argv[2]); print(${expression})`,
    file,
    key,
  ], { cwd: TRAINER, encoding: "utf8" });
  rmSync(folder, { recursive: true, force: true });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

describe.skipIf(!ready)(suite, () => {
  let dir: string;
  /**
   * `ludus train` of `game` for `versions` steps (at most `minutes`), policy `<game>-ci` (`<game>-<method>` with a
   * method named), in a store of its own: its result and curve file.
   */
  const train = async <Point>(game: string, versions: number, minutes: number, method?: string) => {
    const name = `${game}-${method ?? "ci"}`;
    const dataDir = join(dir, name);
    const run = await ludus(
      "train",
      "--game",
      game,
      "--name",
      name,
      ...(method ? ["--method", method] : []),
      "--versions",
      String(versions),
      "--minutes",
      String(minutes),
      "--data-dir",
      dataDir,
      "--json",
    );
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out);
    const file = JSON.parse(readFileSync(result.curve, "utf8"));
    return { dataDir, result, file, curve: file.curve as Point[] };
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "ludus-train-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    "ludus train takes Kuhn poker from the uniform policy's 0.458 to < 0.05 on CPU, and leaves it registered",
    async () => {
      // A hundred learning steps (about two minutes here), however loaded the machine: the curve is in steps.
      const { dataDir, result, curve } = await train<{ version: number; matches: number; exploitability: number }>(
        "kuhn-poker",
        100,
        15,
      );
      // Every one of the first 20 versions is evaluated, then one each time the number grows by 5 %, and the last.
      expect(curve.slice(0, 20).map((p) => p.version)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(curve.at(-1)!.version).toBe(101);
      expect(curve[0].exploitability).toBeGreaterThan(0.4);
      // CFR's average strategy at the default 100 matches a step: 10,000 sampled matches take it to about 0.02; it
      // stays below 0.05 after 5,000.
      expect(curve.at(-1)!.matches).toBeGreaterThanOrEqual(10_000);
      expect(result.last.exploitability).toBeLessThan(0.05);
      expect(curve.filter((p) => p.matches >= 5_000).every((p) => p.exploitability < 0.05)).toBe(true);
      expect(existsSync(result.plot)).toBe(true);
      // The figure the exact evaluator gives the registered policy is the run's last point.
      const exact = await ludus(
        "exploitability",
        "--game",
        "kuhn-poker",
        "--policy",
        "policy:kuhn-poker-ci",
        "--data-dir",
        dataDir,
        "--json",
      );
      expect(exact.code, exact.err).toBe(0);
      expect(JSON.parse(exact.out).exploitability).toBeCloseTo(result.last.exploitability, 9);
      const versions = await ludus("policy", "list", "--name", "kuhn-poker-ci", "--data-dir", dataDir, "--json");
      const records = JSON.parse(versions.out) as {
        version: number;
        parent: string | null;
        run: string;
        datasetCursor: string | null;
      }[];
      expect(records[0].version).toBe(result.last.version);
      expect(records[0].parent).not.toBeNull();
      expect(records[0].run).toBe(result.run);
      expect(records[0].datasetCursor).toBeTruthy();
      // The average is what is evaluated; self-play samples with the behaviour, registered beside it step by step.
      const behaviour = await ludus("policy", "show", "kuhn-poker-ci.behaviour", "--data-dir", dataDir, "--json");
      expect(JSON.parse(behaviour.out).version).toBe(result.last.version);
    },
    15 * 60_000,
  );

  it(
    "ludus train teaches the prisoner's dilemma's two seats to cooperate, above always-defect's 1 a round",
    async () => {
      const { dataDir, curve, file } = await train<{ version: number; welfare: number; againstExploiter: number }>(
        "ipd",
        25,
        10,
      );
      expect(curve.at(-1)!.version).toBe(26);
      // The exploiter and what it earns against itself: the bar a trained seat meets against it.
      expect(file.exploiter).toEqual({ name: "always-defect", againstItself: 1 });
      // Mutual defection, the game's equilibrium, pays 1 a round; mutual cooperation 3.
      expect(Math.max(...curve.map((p) => p.welfare))).toBeGreaterThan(2.5);
      expect(curve.every((p) => p.againstExploiter <= 1)).toBe(true);
      // A policy per seat, registered in the store under <name>.0 and <name>.1.
      const listed = await ludus("policy", "list", "--game", "ipd", "--data-dir", dataDir, "--json");
      expect(new Set(JSON.parse(listed.out).map((r: { name: string }) => r.name))).toEqual(
        new Set(["ipd-ci.0", "ipd-ci.1"]),
      );
    },
    10 * 60_000,
  );

  it("ludus train --method ppo trains the same seats without the alignment term, for comparison", async () => {
    const { dataDir, curve } = await train<{ version: number; welfare: number }>("ipd", 3, 5, "ppo");
    expect(curve.map((p) => p.version)).toEqual([1, 2, 3, 4]);
    expect(curve.every((p) => p.welfare >= 0 && p.welfare <= 5)).toBe(true);
    const listed = await ludus("policy", "list", "--game", "ipd", "--data-dir", dataDir, "--json");
    const fourth = JSON.parse(listed.out).filter((r: { version: number }) => r.version === 4);
    expect(fourth.map((r: { name: string }) => r.name).sort()).toEqual(["ipd-ppo.0", "ipd-ppo.1"]);
    // Each seat's model carries its critic, so a resumed run does not start its critics afresh.
    const store = await ReplayStore.open({ dataDir });
    const model = (await store.policies.model(fourth[0].id))!;
    await store.close();
    expect(Number(trainerMetadata(model, "ludus.adalign.critic", "len(value or b'')"))).toBeGreaterThan(1000);
  }, 5 * 60_000);

  it("ludus train of the twelve-seat Donor Game registers every seat's policy and evaluates each version", async () => {
    const dataDir = join(dir, "donor");
    // The real process: an evaluation that failed used to surface as an unhandled rejection that ended it.
    const run = await runLudus(
      [
        ...["train", "--game", "donor-game", "--name", "dg", "--versions", "1", "--matches-per-version", "10"],
        ...["--live", "10", "--data-dir", dataDir, "--json"],
      ],
      { LUDUS_PYTHON: python },
    );
    expect(run.code, run.err).toBe(0);
    const curve = JSON.parse(readFileSync(JSON.parse(run.out).curve, "utf8")).curve as { version: number }[];
    expect(curve.map((p) => p.version)).toEqual([1, 2]);
    const listed = await ludus("policy", "list", "--game", "donor-game", "--data-dir", dataDir, "--json");
    const records = JSON.parse(listed.out) as { name: string; version: number }[];
    const seats = Array.from({ length: 12 }, (_, s) => `dg.${s}`);
    for (const version of [1, 2]) {
      expect(records.filter((r) => r.version === version).map((r) => r.name).sort()).toEqual([...seats].sort());
    }
  }, 10 * 60_000);

  it("ludus train --device cuda where PyTorch sees no GPU says so in one sentence, naming train's --device", async () => {
    const cuda = spawnSync(python, ["-c", "import torch; print(torch.cuda.is_available())"], { encoding: "utf8" });
    if (cuda.stdout.trim() === "True") return; // a machine with a GPU trains there: nothing to refuse
    const dataDir = join(dir, "no-cuda");
    const run = await ludus("train", "--game", "kuhn-poker", "--name", "x", "--device", "cuda", "--data-dir", dataDir);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^ludus: error: --device cuda: this PyTorch \(.*\) sees no CUDA device; use --device cpu/);
    expect(run.err).not.toMatch(/--policy-device|Traceback/);
    expect(run.err.trim().split("\n")).toHaveLength(1);
    // Decided before a server started on the store.
    expect(existsSync(dataDir)).toBe(false);
  });

  it("ludus train stops on Ctrl-C as at its time limit: the last version, the curve and its plot stand", async () => {
    const dataDir = join(dir, "interrupted");
    // The real process, through the README's launcher: a Ctrl-C reaches it as a signal, not through an Io.
    const child = spawn("node", [
      "cli/launch.mjs",
      ...["ludus", "train", "--game", "kuhn-poker", "--name", "kuhn-int", "--minutes", "10"],
      ...["--matches-per-version", "200", "--data-dir", dataDir],
    ], { cwd: resolve("."), env: { ...process.env, LUDUS_PYTHON: python, DATABASE_URL: "" } });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => (out += d));
    const third = new Promise<void>((reached) =>
      child.stderr!.on("data", (d) => {
        err += d;
        if (err.includes("ludus train: kuhn-int@3 after")) reached();
      })
    );
    const exited = once(child, "exit");
    await Promise.race([third, exited]);
    child.kill("SIGINT");
    const [code] = await exited;
    // Deno's child_process may report the signal it sent in place of the exit code: the proof is what it wrote.
    expect(code ?? 0, err).toBe(0);
    expect(err).toContain("stopping before the trainer's next step");
    const [, version, curveFile] = /kuhn-int@(\d+) registered, exploitability [\d.]+; curve in (\S+)/.exec(out) ?? [];
    expect(version, `${out}\n${err}`).toBeDefined();
    expect(JSON.parse(readFileSync(curveFile, "utf8")).curve.at(-1).version).toBe(Number(version));
    expect(existsSync(curveFile.replace(/json$/, "png"))).toBe(true);
    const shown = await ludus("policy", "show", "kuhn-int", "--data-dir", dataDir, "--json");
    expect(JSON.parse(shown.out).version).toBe(Number(version));
  }, 5 * 60_000);

  it("cfr restored from a version's state takes the next step exactly as the run that wrote it would have", () => {
    // Kuhn-shaped rows (seeded): three steps, a checkpoint, then the same fourth step in the writer and the restored.
    const script = `
import numpy as np
from ludus_trainer.cfr import CfrConfig, CfrLearner
def batch(seed):
    r = np.random.default_rng(seed)
    n = 3 * 40
    obs = np.zeros((n, 6)); obs[np.arange(n), r.integers(0, 6, n)] = 1
    state = np.zeros((n, 12)); state[np.arange(n), r.integers(0, 12, n)] = 1
    match = np.repeat(np.arange(40).astype(str), 3).astype(object)
    seat = np.tile([0, 1, 0], 40); seq = np.tile([0, 1, 2], 40)
    ret = np.repeat(r.choice([-2.0, -1.0, 1.0, 2.0], 40), 3) * np.where(seat == 0, 1, -1)
    return obs, np.ones((n, 2), bool), r.integers(0, 2, n), ret, match, seat, seq, state
writer = CfrLearner(6, 2, CfrConfig())
for step in range(3):
    writer.update(*batch(step))
restored = CfrLearner(6, 2, CfrConfig(), writer.state())
writer.update(*batch(3)); restored.update(*batch(3))
same = all(np.array_equal(a, b) for a, b in [(writer.regret, restored.regret), (writer.average, restored.average), (writer.baseline, restored.baseline)])
print(same)`;
    const run = spawnSync(python, ["-c", script], { cwd: TRAINER, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("True");
  });

  describe("the trainer alone, against a server playing its self-play", () => {
    let server: TestServer;
    let admin: string;
    beforeAll(async () => {
      server = await startTestServer({ selfPlay: [{ game: "kuhn-poker", name: "kuhn-solo", live: 16 }] });
      admin = await server.token("trainer", "admin");
    });
    afterAll(() => server.close());

    it("resumes after a SIGKILL from its last registered version and cursor", async () => {
      const args = ["--game", "kuhn-poker", "--name", "kuhn-solo", "--minutes", "5", "--matches-per-version", "200"];
      const first = trainer(server.url, admin, ...args);
      const third = await first.line((l) => l.event === "registered" && l.version === 3);
      first.child.kill("SIGKILL");
      await first.exited;
      const second = trainer(server.url, admin, ...args);
      const resumed = await second.line((l) => l.event === "resumed" && l.name === "kuhn-solo");
      expect(resumed).toMatchObject({ version: 3, id: third.id });
      expect(resumed.cursor).toBeTruthy();
      const next = await second.line((l) => l.event === "registered");
      expect(next.version).toBe(4);
      second.child.kill("SIGTERM");
      await second.exited;
      const four = await (await fetch(`${server.url}/policies/kuhn-solo@4`)).json();
      expect(four.parent).toBe(third.id);
      // The learner's tables came back from version 3's model: version 4 is its fourth iteration, not a fresh first.
      const model = new Uint8Array(await (await fetch(`${server.url}/policies/kuhn-solo@4/model`)).arrayBuffer());
      expect(trainerMetadata(model, "ludus.cfr.state", "int(np.load(io.BytesIO(value))['iterations'])")).toBe("3");
      // And its baseline: every history version 3 knew is still known, with what was learned of it since.
      const three = new Uint8Array(await (await fetch(`${server.url}/policies/kuhn-solo@3/model`)).arrayBuffer());
      const histories = "len(np.load(io.BytesIO(value))['baseline_histories'])";
      const known = Number(trainerMetadata(three, "ludus.cfr.state", histories));
      expect(known).toBeGreaterThan(0);
      expect(Number(trainerMetadata(model, "ludus.cfr.state", histories))).toBeGreaterThanOrEqual(known);
    }, 5 * 60_000);

    it("plays cfr's behaviour against itself only: every match it counts is one it learns from", async () => {
      // The server's self-play was asked for the default share of snapshot matches (0.2); cfr can use none of them.
      const ended = await server.server.store.endedMatches({ game: "kuhn-poker" }, 100_000);
      const seated = ended.map((m) => m.seats.map((s) => s?.name));
      expect(seated.length).toBeGreaterThan(600);
      expect(seated.filter(([a, b]) => a !== b)).toEqual([]);
    });

    it("says in one sentence what is wrong, and exits non-zero", async () => {
      // A policy of the right shapes that the trainer did not write cannot be resumed.
      await server.server.policies.register(
        { name: "foreign", game: "kuhn-poker" },
        linearModel(11, 2, new Array(22).fill(0), [0, 0]),
      );
      // A network the trainer wrote, but without cfr's tables: cfr cannot go on from it.
      await server.server.policies.register(
        { name: "tableless", game: "kuhn-poker" },
        new Uint8Array(await (await fetch(`${server.url}/policies/kuhn-solo.behaviour/model`)).arrayBuffer()),
      );
      // Its cursor from another store.
      await server.server.policies.register(
        { name: "elsewhere", game: "kuhn-poker", datasetCursor: "eyJxIjoiYWJjIiwiZSI6MTJ9" },
        new Uint8Array(await (await fetch(`${server.url}/policies/kuhn-solo/model`)).arrayBuffer()),
      );
      const player = await server.token();
      const refusals: [url: string, token: string, args: string[], message: RegExp][] = [
        [
          "http://127.0.0.1:9",
          admin,
          ["--game", "kuhn-poker", "--name", "x"],
          /cannot reach the Ludus server at http:\/\/127\.0\.0\.1:9/,
        ],
        [server.url, admin, ["--game", "chess", "--name", "x"], /the server has no game chess/],
        [server.url, admin, ["--game", "kuhn-poker", "--name", "x", "--device", "cuda"], /--device cuda: this PyTorch/],
        [server.url, player, ["--game", "kuhn-poker", "--name", "x"], /takes an admin token/],
        [
          server.url,
          admin,
          ["--game", "ipd", "--name", "x", "--method", "cfr"],
          /cfr trains two-player zero-sum games, and ipd \(classic\) is not one \(it is general-sum\); use adalign or ppo/,
        ],
        [
          server.url,
          admin,
          ["--game", "kuhn-poker", "--name", "foreign"],
          /cannot resume foreign@1: not a network the Ludus trainer wrote/,
        ],
        [
          server.url,
          admin,
          ["--game", "kuhn-poker", "--name", "tableless"],
          /the policy was not trained with cfr \(its model carries no cfr tables\); resume it with its own method/,
        ],
        [
          server.url,
          admin,
          ["--game", "kuhn-poker", "--name", "elsewhere"],
          /dataset cursor .* is not one of this server's/,
        ],
      ];
      // Each trainer its own process, all at once: most of their time is PyTorch's import.
      await Promise.all(refusals.map(async ([url, token, args, message]) => {
        const t = trainer(url, token, ...args);
        expect(await t.exited, t.err()).toBe(1);
        expect(t.err()).toMatch(message);
        expect(t.err()).not.toMatch(/Traceback/);
      }));
    }, 5 * 60_000);
  });
});

describe("ludus train refusing what it cannot run", () => {
  it("says so in one sentence: a Python that is not there, a bad share, a missing name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ludus-train-bad-"));
    try {
      const noPython = await ludus(
        "train",
        "--game",
        "kuhn-poker",
        "--name",
        "x",
        "--python",
        join(dir, "no-python"),
        "--data-dir",
        dir,
      );
      expect(noPython.code).toBe(1);
      expect(noPython.err).toMatch(/cannot run the trainer's Python \(.*no-python\): .*give --python/);
      const share = await ludus("train", "--game", "kuhn-poker", "--name", "x", "--snapshots", "2", "--data-dir", dir);
      expect(share.code).toBe(2);
      expect(share.err).toContain("expected a number in [0, 1]");
      const unnamed = await ludus("train", "--game", "kuhn-poker", "--data-dir", dir);
      expect(unnamed.code).toBe(2);
      expect(unnamed.err).toContain("--name <name>");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("decides from the game's properties, before a server starts, whether a method can train it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ludus-train-method-"));
    try {
      const refused = async (game: string, method: string, message: RegExp) => {
        const dataDir = join(dir, `${game}-${method}`);
        const run = await ludus("train", "--game", game, "--name", "x", "--method", method, "--data-dir", dataDir);
        expect(run.code).toBe(1);
        expect(run.err).toMatch(message);
        expect(run.err.trim().split("\n")).toHaveLength(1);
        expect(existsSync(dataDir)).toBe(false); // no server, no store
      };
      const tabular =
        /cfr trains two-player zero-sum games whose whole tree it can tabulate \(one seat acting at a time, finite choices, at most 20,000 nodes\)/;
      await refused(
        "holdem",
        "cfr",
        new RegExp(
          `${tabular.source}; holdem \\(hunl\\) does not qualify \\(exact analysis needs finite choices; .*\\); the games that qualify \\(default variants\\): kuhn-poker, leduc-poker$`,
          "m",
        ),
      );
      await refused("tic-tac-toe", "cfr", /tic-tac-toe \(textarena\) does not qualify \(.*more than 20000 nodes.*\)/);
      await refused(
        "ipd",
        "mmd",
        /mmd trains two-player zero-sum games \(one network in both seats\); ipd \(classic\) does not qualify \(it is general-sum\); the games that qualify \(default variants\): kuhn-poker, leduc-poker, holdem, tic-tac-toe$/m,
      );
      await refused("donor-game", "cfr", /donor-game \(standard\) does not qualify \(it is general-sum\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says what to run where the trainer's Python is not set up (no .venv, a python3 without its packages)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ludus-train-novenv-"));
    try {
      // A machine as a fresh clone finds it: no .venv where `ludus train` runs, the system's python3 on the PATH.
      const bin = join(dir, "bin");
      mkdirSync(bin);
      symlinkSync("/usr/bin/python3", join(bin, "python3"));
      const bare = spawnSync(join(bin, "python3"), ["-c", "import torch, pyarrow"]);
      if (bare.status === 0) return; // this machine's python3 has the trainer's packages: nothing to set up
      const { LUDUS_PYTHON: _, ...withoutPython } = process.env;
      const deno = resolve("node_modules/@deno/linux-x64-glibc/deno");
      const task = JSON.parse(readFileSync("deno.json", "utf8")).tasks.ludus.split(/\s+/).slice(1, -1);
      const child = spawn(
        deno,
        [
          ...task,
          "--config",
          resolve("deno.json"),
          resolve("cli/main.ts"),
          "train",
          "--game",
          "kuhn-poker",
          "--name",
          "x",
        ],
        { cwd: dir, env: { ...withoutPython, PATH: bin, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let err = "";
      child.stderr!.on("data", (d) => (err += d));
      const [code] = await once(child, "exit");
      expect(code).toBe(1);
      expect(err).toMatch(
        /^ludus: error: the trainer's Python \(python3\) lacks .*pyarrow.*; set it up with `node cli\/python-env\.mjs` in \S+, or give --python\n$/,
      );
      expect(err).not.toMatch(/Traceback|ModuleNotFoundError/);
      expect(existsSync(join(dir, "data"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
