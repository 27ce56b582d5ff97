import { type Command, Option } from "commander";
import { games } from "../../games/registry.ts";
import { catalog } from "../../server/catalog.ts";
import type { Io } from "../io.ts";

interface ConfigProperty {
  default?: unknown;
  description?: string;
}

export function registerCatalog(program: Command, io: Io): void {
  program
    .command("games")
    .description("list the games Ludus hosts, with their variants")
    .option("--json", "print the registry as JSON (the same as GET /games)")
    .action((flags: { json?: boolean }) => {
      const all = catalog();
      if (flags.json) return io.out(JSON.stringify({ games: all }, null, 2) + "\n");
      for (const g of all) {
        const seats = g.seats.min === g.seats.max ? `${g.seats.min}` : `${g.seats.min}-${g.seats.max}`;
        io.out(`${g.id} v${g.version} — ${g.title} (${seats} seats)\n  ${g.summary}\n`);
        // OpenSpiel's GameType, as the catalog publishes it (what the trainer and the league read).
        io.out(`  ${g.utility}, ${g.chanceMode}, ${g.information} information, ${g.dynamics}\n  variants:\n`);
        for (const [name, v] of Object.entries(g.variants)) {
          io.out(`    ${name}${name === g.defaultVariant ? " (default)" : ""}: ${v.description}\n`);
          io.out(
            "observationShape" in v
              ? `      tensors: observation [${v.observationShape.join(", ")}], ${v.actionCount} action ids\n`
              : `      tensors: none (${v.numericFace})\n`,
          );
        }
        io.out("  config (--config JSON; defaults before any variant's preset):\n");
        for (const [key, p] of Object.entries(g.config.properties ?? {}) as [string, ConfigProperty][]) {
          const fallback = p.default === undefined ? "optional" : `default ${JSON.stringify(p.default)}`;
          io.out(`    ${key} (${fallback}): ${p.description ?? ""}\n`);
        }
      }
    });

  program
    .command("strategies")
    .description("list the built-in strategies that can take a seat")
    .addOption(new Option("--game <id>", "only this game's strategies").choices(games.map((g) => g.id)))
    .option("--json", "print JSON")
    .action((flags: { game?: string; json?: boolean }) => {
      const chosen = catalog().filter((g) => !flags.game || g.id === flags.game);
      if (flags.json) {
        const out = Object.fromEntries(chosen.map((g) => [g.id, g.strategies]));
        return io.out(JSON.stringify(out, null, 2) + "\n");
      }
      for (const g of chosen) {
        io.out(`${g.id}:\n`);
        for (const s of g.strategies) {
          const arg = s.arg ? `[:${s.arg.name}]` : "";
          const detail = s.arg
            ? ` (${s.arg.name}: ${s.arg.description}${s.arg.default ? `; default ${s.arg.default}` : ""})`
            : "";
          io.out(`  ${s.name}${arg} — ${s.description}${detail}\n`);
        }
      }
    });
}
