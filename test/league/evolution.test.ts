import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../../games/core/rng.ts";
import { ReplayStore, type StoreOptions } from "../../db/store.ts";
import { type EvolutionReport, mutate } from "../../server/league/evolution.ts";
import { runLudus, spawnLudus, startServerProcess } from "../support/server-process.ts";
import { emptyStoreOptions } from "../support/stores.ts";
import { ludus } from "../support/cli.ts";
import { lastUser, legalAnswer, startFakeOpenAI } from "../support/openai-server.ts";

/** `ludus evolve` as a person runs it, on the embedded store: played, stored, killed half-way and resumed. */

describe("the Donor Game's cultural evolution", () => {
  let options: StoreOptions;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ options, cleanup } = await emptyStoreOptions("pglite")));
  afterAll(() => cleanup?.());

  it("moves a strategy's argument a little, within [0, 1], the same way for the same seed", () => {
    const moved = Array.from({ length: 200 }, (_, i) => mutate("donate:0.5", new Rng(`m${i}`, 0), 0.05));
    const values = moved.map((s) => Number(s.split(":")[1]));
    expect(moved.every((s) => s.startsWith("donate:"))).toBe(true);
    expect(values.every((v) => v >= 0 && v <= 1)).toBe(true);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.02);
    expect(Math.max(...values) - Math.min(...values)).toBeGreaterThan(0.1);
    expect(mutate("donate:0.5", new Rng("x", 0), 0.05)).toBe(mutate("donate:0.5", new Rng("x", 0), 0.05));
    expect(mutate("donate:1", new Rng("y", 0), 5)).toMatch(/^donate:(0|1)$/);
    expect(mutate("random", new Rng("z", 0), 0.05)).toBe("random");
  });

  it(
    "plays ten generations over two runs, keeps the better half, and resumes after SIGKILL as if never stopped",
    async () => {
      const args = ["evolve", "--generations", "10", "--seeds", "2", "--seed", "evo", "--json", "--data-dir"];
      const child = spawnLudus([...args, options.dataDir]);
      let err = "";
      const id = await new Promise<string>((resolve, reject) => {
        child.stderr!.on("data", (chunk: Buffer) => {
          err += chunk.toString("utf8");
          const started = /evolution (e_\S+)/.exec(err);
          if (started && /run 0 generation 6:/.test(err)) resolve(started[1]);
        });
        child.on("exit", () => reject(new Error(`the evolution ended before it was killed:\n${err}`)));
      });
      child.kill("SIGKILL");
      await once(child, "exit");
      const resumed = await runLudus(["evolve", "--resume", id, "--json", "--data-dir", options.dataDir]);
      expect(resumed.code, resumed.err).toBe(0);
      const report = JSON.parse(resumed.out) as EvolutionReport;
      expect(report.evolution.id).toBe(id);
      expect(report.generations).toHaveLength(20);
      expect(report.curve.map((c) => c.generation)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      for (const g of report.generations) {
        expect(g.agents).toHaveLength(12);
        expect(g.agents.filter((a) => a.survived)).toHaveLength(6);
        // The survivors are the better half by resources.
        const worstSurvivor = Math.min(...g.agents.filter((a) => a.survived).map((a) => a.resources));
        const bestLoser = Math.max(...g.agents.filter((a) => !a.survived).map((a) => a.resources));
        expect(worstSurvivor).toBeGreaterThanOrEqual(bestLoser);
        expect(g.donationFraction).toBeGreaterThanOrEqual(0);
        expect(g.donationFraction).toBeLessThanOrEqual(1);
      }
      // Each generation is the survivors of the one before, and as many copies of their strategies.
      for (const g of report.generations.filter((g) => g.generation > 1)) {
        const before = report.generations.find((p) => p.run === g.run && p.generation === g.generation - 1)!;
        const survivors = before.agents.filter((a) => a.survived);
        expect(g.agents.slice(0, 6).map((a) => [a.name, a.strategy])).toEqual(
          survivors.map((a) => [a.name, a.strategy]),
        );
        for (const child of g.agents.slice(6)) {
          expect(child.name).toMatch(new RegExp(`^agent-g${g.generation}\\.\\d$`));
          expect(survivors.map((a) => a.strategy.split(":")[0])).toContain(child.strategy.split(":")[0]);
        }
      }
      const store = await ReplayStore.open(options);
      try {
        const first = await store.match(report.generations[0].matchId);
        expect(first).toMatchObject({ game: "donor-game", rated: false, endReason: "completed" });
        expect((first!.config as { names: string[] }).names[0]).toBe("agent-1");
        // A cut-off generation left nothing for a later server start to restore.
        expect(await store.unfinished()).toEqual([]);
      } finally {
        await store.close();
      }
      // The same seed, never stopped: the same evolution.
      const fresh = await emptyStoreOptions("pglite");
      try {
        const whole = await runLudus([...args, fresh.options.dataDir]);
        expect(whole.code, whole.err).toBe(0);
        const strip = (r: EvolutionReport) => r.generations.map(({ matchId: _, ...g }) => g);
        expect(strip(JSON.parse(whole.out))).toEqual(strip(report));
      } finally {
        await fresh.cleanup();
      }
    },
    300_000,
  );

  it(
    "evolves twelve LLM agents for ten generations against a local model: survivors keep their strategies, newcomers write theirs with the survivors' advice",
    async () => {
      const model = await startFakeOpenAI({
        script: (request, index) => {
          const asked = lastUser(request);
          if (!asked.includes("The game has not started yet")) {
            return { content: legalAnswer(request, (n) => index % n) };
          }
          return { content: `I think it over.\nMy strategy will be to give ${index % 7} tenths of what I have.` };
        },
      });
      const store = await emptyStoreOptions("pglite");
      try {
        const run = await ludus(
          ...["evolve", "--model", "tiny", "--base-url", model.baseUrl, "--generations", "10", "--seed", "llm"],
          ...["--json", "--data-dir", store.options.dataDir],
        );
        expect(run.code, run.err).toBe(0);
        const report = JSON.parse(run.out) as EvolutionReport;
        expect(report.generations.map((g) => g.generation)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        for (const g of report.generations) {
          expect(g.agents).toHaveLength(12);
          for (const a of g.agents) {
            expect(a.llm).toBe(true);
            expect(a.strategy).toMatch(/^My strategy will be to give \d tenths of what I have\.$/);
          }
          if (g.generation === 1) continue;
          const before = report.generations[g.generation - 2].agents.filter((a) => a.survived);
          expect(g.agents.slice(0, 6).map((a) => [a.name, a.strategy])).toEqual(
            before.map((a) => [a.name, a.strategy]),
          );
        }
        // Twelve strategies at first, then six a generation: the newcomers', each prompt carrying the survivors' advice.
        const prompts = model.requests.map(lastUser).filter((text) => text.includes("The game has not started yet"));
        expect(prompts).toHaveLength(12 + 9 * 6);
        const advised = prompts.slice(12);
        for (const prompt of advised) expect(prompt).toMatch(/advice of the best-performing agents/);
        const survivor = report.generations[0].agents.find((a) => a.survived)!;
        expect(advised[0]).toContain(`- ${survivor.strategy} (final score ${survivor.resources})`);
        const opened = await ReplayStore.open(store.options);
        try {
          const first = await opened.match(report.generations[0].matchId);
          expect(first).toMatchObject({ game: "donor-game", rated: false, endReason: "completed" });
          expect(first!.seats.every((seat) => seat?.kind === "llm" && seat.model === "tiny")).toBe(true);
          expect(await opened.tokens.list()).toEqual([expect.objectContaining({ kind: "llm", revoked: true })]);
        } finally {
          await opened.close();
        }
      } finally {
        await model.close();
        await store.cleanup();
      }
    },
    300_000,
  );

  it("serves evolutions over HTTP and refuses what it cannot run", async () => {
    const refusals: [string[], RegExp][] = [
      [["--population", "donate:0.5,bluff"], /unknown strategy `bluff` for donor-game/],
      [["--population", "donate:0.1,donate:0.2,donate:0.3", "--agents", "2"], /3 strategies for 2 agents/],
      [["--agents", "3"], /agents must be even, got 3/],
      [["--config", '{"names":["a","b"]}'], /sets names itself/],
      [["--resume", "e_nothere"], /no evolution e_nothere in /],
      [["--generations", "0"], /expected a whole number in \[1, 1000\]/],
      [["--population", "llm,donate:0.5"], /the population's `llm` agents need a model: give --model/],
      [
        ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--population", "donate:0.5"],
        /--model plays the population's `llm` agents, and this population has none/,
      ],
    ];
    for (const [flags, message] of refusals) {
      const run = await runLudus(["evolve", ...flags, "--data-dir", options.dataDir]);
      expect(run.code, `${flags.join(" ")}: ${run.err}`).toBe(2);
      expect(run.err).toMatch(message);
    }
    const server = await startServerProcess(["--data-dir", options.dataDir]);
    try {
      const get = async (path: string) => {
        const res = await fetch(`${server.url}${path}`);
        return { status: res.status, body: await res.json() };
      };
      const list = await get("/evolutions");
      expect(list.status).toBe(200);
      expect(list.body.evolutions).toHaveLength(1); // the refusals stored nothing
      const one = await get(`/evolutions/${list.body.evolutions[0].id}`);
      expect(one.body.curve).toHaveLength(10);
      const missing = await get("/evolutions/e_nothere");
      expect(missing).toMatchObject({ status: 404, body: { error: { code: "unknown_evolution" } } });
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  }, 120_000);
});
