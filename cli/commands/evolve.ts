import type { Command } from "commander";
import {
  checkEvolution,
  EvolutionError,
  type EvolutionReport,
  evolutionReport,
  runEvolution,
} from "../../server/league/evolution.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import type { Io } from "../io.ts";
import { integerIn, jsonObject, nameList, numberIn, storeLocation } from "../options.ts";
import { withPolicies } from "../policies.ts";
import { resumeOrStart } from "../resumable.ts";

interface EvolveFlags {
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
  program
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
    .action(async (flags: EvolveFlags, command: Command) => {
      const report = await withPolicies(storeLocation(flags, command), async (policies, store) => {
        const live = new LiveMatches({ store, policies, lingerMs: 0 });
        const evolution = await resumeOrStart(io, {
          noun: "evolution",
          resume: flags.resume,
          where: store.where,
          find: (id) => store.league.evolution(id),
          latest: () => store.league.evolutions(5),
          refuse: (message) => new EvolutionError(message),
          start: () =>
            store.league.createEvolution(checkEvolution({
              population: flags.population,
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
          ));
      });
      io.out(flags.json ? JSON.stringify(report) + "\n" : table(report));
    });
}
