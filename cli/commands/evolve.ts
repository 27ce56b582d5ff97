import type { Command } from "commander";
import { seatGeneration } from "../../clients/llm/index.ts";
import type { ReplayStore } from "../../db/store.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import {
  checkEvolution,
  EvolutionError,
  type EvolutionReport,
  evolutionReport,
  LLM_AGENT,
  type LlmSeats,
  runEvolution,
} from "../../server/league/evolution.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import type { Io } from "../io.ts";
import { endpointOf, endpointOptions, type ModelFlags } from "../model-options.ts";
import { integerIn, jsonObject, nameList, numberIn, storeLocation } from "../options.ts";
import { withLiveMatches } from "../live-matches.ts";
import { resumeOrStart } from "../resumable.ts";
import { cliWebSocket } from "./bot.ts";

interface EvolveFlags extends ModelFlags {
  temperature?: number;
  maxTokens?: number;
  population?: string[];
  agents?: number;
  config?: Record<string, unknown>;
  generations: number;
  seeds: number;
  mutation: number;
  seed: string;
  resume?: string;
  dataDir: string;
  databaseUrl?: string;
  json?: boolean;
}

function table(report: EvolutionReport): string {
  const e = report.evolution;
  const lines = report.curve.map((c) =>
    `${String(c.generation).padStart(10)}  ${c.meanResources.toFixed(2).padStart(14)}  ${
      (100 * c.donationFraction).toFixed(1).padStart(13)
    } %`
  );
  const last = report.generations.filter((g) => g.generation === e.generations);
  return [
    `evolution ${e.id}: the Donor Game, ${e.generations} generation(s), ${e.seeds} run(s), mutation ${e.mutation}, ` +
    `seed ${e.seed}`,
    "generation  mean resources  donated share",
    ...lines,
    ...last.map((g) =>
      `run ${g.run}, last generation's survivors: ${
        g.agents.filter((a) => a.survived).map((a) => a.strategy).join(", ")
      }`
    ),
  ].join("\n") + "\n";
}

export function registerEvolve(program: Command, io: Io): void {
  const command = program
    .command("evolve")
    .description(
      "the Donor Game's cultural evolution: a population plays, the better half survives, new agents copy the " +
        "survivors' strategies; stored generation by generation",
    )
    .option(
      "--population <strategies>",
      "the first generation's built-in strategies, repeated to fill the agents",
      nameList,
    )
    .option("--agents <n>", "agents in the population (even)", integerIn(2, 100))
    .option("--config <json>", "Donor Game config overrides as a JSON object, or @file.json", jsonObject)
    .option("--generations <n>", "generations in each run", integerIn(1, 1000), 10)
    .option("--seeds <n>", "independent runs, each on its own seeds", integerIn(1, 1000), 1)
    .option(
      "--mutation <sigma>",
      "how far a copied strategy's argument moves (a normal step's deviation)",
      numberIn(0, 1),
      0.05,
    )
    .option("--seed <seed>", "fixes every match and every copy", "1")
    .option("--resume <id>", "go on with a stored evolution an interruption stopped")
    .option("--data-dir <dir>", "the data directory whose store records it", "data")
    .option("--database-url <url>", "a PostgreSQL store instead (default: $DATABASE_URL)")
    .option("--json", "print exactly one JSON object on stdout")
    .option("--model <name>", "a model to play the population's `llm` agents (every agent, without --population)");
  endpointOptions(command)
    .option("--temperature <t>", "the model's sampling temperature", numberIn(0, 2))
    .option("--max-tokens <n>", "the model's longest reply, in tokens", integerIn(1, 1_000_000))
    .addHelpText(
      "after",
      "\nWith --model, each LLM agent writes its strategy before its generation plays, with the survivors' strategies\n" +
        "and scores as advice (Vallinder & Hughes 2024); a surviving agent keeps its own. A server on a free loopback\n" +
        "port seats the model, so the store must be free (no `ludus serve` on the same embedded store).",
    )
    .action(async (flags: EvolveFlags, command: Command) => {
      const population = flags.population ?? (flags.model ? [LLM_AGENT] : undefined);
      const llm = population?.includes(LLM_AGENT) ?? false;
      if (llm && !flags.model) command.error("error: the population's `llm` agents need a model: give --model");
      if (flags.model && !llm) {
        command.error("error: --model plays the population's `llm` agents, and this population has none");
      }
      const chat = llm
        ? { ...endpointOf(flags, command), temperature: flags.temperature, maxTokens: flags.maxTokens }
        : undefined;
      const inProcess = (store: ReplayStore, policies: PolicyRuntime) =>
        new LiveMatches({ store, policies, lingerMs: 0 });
      const location = storeLocation(flags, command);
      const report = await withLiveMatches(location, chat !== undefined, inProcess, async (store, live, gateway) => {
        // The model's client: one connection a generation creates its match and plays every LLM seat of it.
        const token = gateway?.token();
        const seats: LlmSeats | undefined = gateway && (async (generation) =>
          seatGeneration({
            url: gateway.url,
            token: (await token!).token,
            game: "donor-game",
            ...generation,
            agent: { chat: chat!, log: (line) => io.err(`ludus: ${line}\n`) },
            WebSocket: cliWebSocket,
          }));
        const evolution = await resumeOrStart(io, {
          noun: "evolution",
          resume: flags.resume,
          where: store.where,
          find: (id) => store.league.evolution(id),
          latest: () => store.league.evolutions(5),
          refuse: (message) => new EvolutionError(message),
          start: () =>
            store.league.createEvolution(checkEvolution({
              population,
              config: { ...flags.config, ...(flags.agents !== undefined ? { agents: flags.agents } : {}) },
              generations: flags.generations,
              seeds: flags.seeds,
              mutation: flags.mutation,
              seed: flags.seed,
            }, live)),
        });
        if (evolution.endedAt) return await evolutionReport(store, evolution);
        return await runEvolution(store, live, evolution, (g) =>
          io.err(
            `run ${g.run} generation ${g.generation}: mean resources ${g.meanResources.toFixed(2)}, ` +
              `donated ${(100 * g.donationFraction).toFixed(1)} %\n`,
          ), seats);
      });
      io.out(flags.json ? JSON.stringify(report) + "\n" : table(report));
    });
}
