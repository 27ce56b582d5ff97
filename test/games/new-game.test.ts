import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderer } from "../../clients/llm/renderers.ts";
import { configure } from "../../games/core/config.ts";
import { twoPlayerZeroSum } from "../../games/core/game.ts";
import { games } from "../../games/registry.ts";
import { ticTacToe } from "../../games/tic-tac-toe/game.ts";
import { defaultMethod } from "../../policies/training.ts";
import { catalog } from "../../server/catalog.ts";
import { seatingFor } from "../../server/league/self-play.ts";
import { matchStartFrame } from "../../server/match/frames.ts";

/**
 * "The registry is the only list": a game's folder holds everything about it, and one registry entry makes
 * every layer offer it. A copy of tic-tac-toe under a new id is registered (in process, and as a folder in a
 * copy of the tree), and every list derived from the registry must pick it up; no source outside games/ and
 * test/ may name a game, but for the exceptions below.
 */

const ROOT = join(import.meta.dirname!, "..", "..");
const NEW_ID = "noughts";
const copy = { ...ticTacToe, id: NEW_ID, title: "Noughts and crosses" };

describe("a game registered beside the others", () => {
  const current = [...games, copy];

  it("is in the catalog (GET /games, `ludus games --json`) with its properties, caps and answer example", () => {
    const entry = catalog(current).find((g) => g.id === NEW_ID)!;
    expect(entry).toBeDefined();
    expect(entry).toMatchObject({
      utility: "zero-sum",
      chanceMode: "deterministic",
      information: "perfect",
      dynamics: "sequential",
      seats: { min: 2, max: 2 },
      answerExample: "mark 4",
      caps: {},
      versions: [1],
    });
    // What the trainer reads to pick its method (cli.py): the utility and the variant's seats.
    expect(entry.variants[entry.defaultVariant].seats).toBe(2);
    // Random play needs no strategy written for it.
    expect(entry.strategies.map((s) => s.name)).toContain("random");
    expect(JSON.parse(JSON.stringify(entry))).toEqual(entry);
  });

  it("is two-player zero-sum for the league and `ludus train`, as tic-tac-toe is", () => {
    for (const game of [copy, ticTacToe]) {
      expect(twoPlayerZeroSum(game, configure(game, {}).config)).toBe(true);
      expect(seatingFor(game, game.defaultVariant)).toEqual({});
      expect(defaultMethod(game, game.defaultVariant)).toBe(defaultMethod(ticTacToe, ticTacToe.defaultVariant));
    }
  });

  it("gives an LLM seat its own answer example, through match_start", () => {
    const { config } = configure(copy, {});
    const start = matchStartFrame({
      match: "m",
      game: copy,
      variant: copy.defaultVariant,
      config,
      seat: 0,
      participants: [],
      clock: { mainMs: 1000, overageMs: 0, incrementMs: 0 },
      conduct: {} as never,
      observation: {},
      resumed: false,
    });
    expect(start.answerExample).toBe("mark 4");
    expect(renderer("ludus", NEW_ID).instructions(start)).toContain("for example `Answer: mark 4`");
  });
});

/** Copies the tracked files under `folders` into `to`, with node_modules linked. */
function copyTree(to: string, folders: readonly string[]): void {
  const listed = spawnSync("git", ["ls-files", "-z", ...folders, "deno.json", "package.json"], { cwd: ROOT });
  for (const path of listed.stdout.toString().split("\0").filter(Boolean)) {
    if (!existsSync(join(ROOT, path))) continue;
    mkdirSync(dirname(join(to, path)), { recursive: true });
    cpSync(join(ROOT, path), join(to, path));
  }
  symlinkSync(join(ROOT, "node_modules"), join(to, "node_modules"));
}

describe("a game added as a folder and one registry entry", () => {
  it("appears in the catalog and its table in the web bundle, with nothing else touched", () => {
    const tree = mkdtempSync(join(tmpdir(), "ludus-new-game-"));
    try {
      copyTree(tree, ["games", "web", "protocol", "policies", "server", "db", "clients", "cli"]);
      // The new folder: tic-tac-toe's, its id changed.
      const folder = join(tree, "games", NEW_ID);
      cpSync(join(tree, "games", "tic-tac-toe"), folder, { recursive: true });
      const game = join(folder, "game.ts");
      writeFileSync(
        game,
        readFileSync(game, "utf8").replaceAll('"tic-tac-toe"', `"${NEW_ID}"`)
          .replace("export const ticTacToe", "export const noughts"),
      );
      // The one registry entry: its import and its place in the list.
      const registry = join(tree, "games", "registry.ts");
      writeFileSync(
        registry,
        readFileSync(registry, "utf8")
          .replace("\nexport const games", `\nimport { noughts } from "./${NEW_ID}/game.ts";\nexport const games`)
          .replace("  ticTacToe,\n];", "  ticTacToe,\n  noughts,\n];"),
      );

      const deno = join(ROOT, "node_modules", ".bin", "deno");
      const script = join(tree, "probe.ts");
      writeFileSync(
        script,
        'import { catalog } from "./server/catalog.ts";\n' +
          `console.log(JSON.stringify(catalog().find((g) => g.id === "${NEW_ID}")));\n`,
      );
      const probe = spawnSync(deno, ["run", "--quiet", "--allow-read", "--allow-env", script], { cwd: tree });
      expect(probe.status, probe.stderr.toString()).toBe(0);
      expect(JSON.parse(probe.stdout.toString())).toMatchObject({ id: NEW_ID, utility: "zero-sum" });

      const bundle = spawnSync(deno, ["task", "--quiet", "build:web"], { cwd: tree });
      expect(bundle.status, bundle.stderr.toString()).toBe(0);
      expect(readFileSync(join(tree, "web", "dist", "app.js"), "utf8")).toContain(`games/${NEW_ID}/table.tsx`);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  }, 300_000);

  it("games/ stays pure: its .ts files import only games/ and zod, and none imports a table", () => {
    const gamesDir = join(ROOT, "games");
    const rules = sources(gamesDir).filter((f) => f.endsWith(".ts"));
    expect(rules.length).toBeGreaterThan(20);
    let imports = 0;
    for (const file of rules) {
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)";/gm)) {
        imports++;
        if (!spec.startsWith(".")) {
          expect(spec, relative(ROOT, file)).toBe("zod");
          continue;
        }
        const target = relative(gamesDir, join(dirname(file), spec));
        expect(target.startsWith(".."), `${relative(ROOT, file)} imports ${spec}`).toBe(false);
        expect(target.endsWith(".tsx"), `${relative(ROOT, file)} imports ${spec}`).toBe(false);
      }
    }
    expect(imports).toBeGreaterThan(100);
  });

  it("every registered game's folder has its web table", () => {
    for (const game of games) {
      const table = readFileSync(join(ROOT, "games", game.id, "table.tsx"), "utf8");
      expect(table, game.id).toMatch(/^export const table: GameTable\b/m);
    }
  });
});

/**
 * Sources outside games/ and test/ that may name a game, and why: each is about that game alone, or an example.
 * Everything else reads games from the registry (or, across the wire, from GET /games).
 */
const EXCEPTIONS: Readonly<Record<string, string>> = {
  "policies/baselines/": "a game's own built-in strategies, keyed by its id (policies/ may import games/)",
  "server/league/evolution.ts": "the Donor Game's cultural evolution (Vallinder & Hughes), an experiment on that game",
  "cli/commands/evolve.ts": "`ludus evolve`, the command for that Donor Game experiment",
  "clients/llm/agent.ts": "the Donor Game's strategy step (clients/llm/strategy.ts) is on by default for that game",
  "clients/llm/renderers.ts":
    "TextArena's, SPIRAL's and AdAlign's published prompt formats, reproduced verbatim for the games they cover",
  "clients/python/": "the Python client's examples and default arguments name a game to play",
  "web/src/pages/league.tsx": "the league page opens on Kuhn poker's board when no game is asked for",
  "web/src/pages/players.tsx": "a player's chart falls back to Kuhn poker's ratings when the player has none",
};

const SCANNED = ["server", "cli", "policies", "clients", "web/src", "db", "protocol"];
const SOURCE = /\.(ts|tsx|mjs|js|py)$/;
/** A line that is only a comment: examples in documentation may name a game. */
const COMMENT = /^\s*(\/\/|\/\*|\*|#)/;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!["node_modules", "__pycache__", "dist", ".venv"].includes(entry.name)) out.push(...sources(path));
    } else if (SOURCE.test(entry.name)) out.push(path);
  }
  return out;
}

describe("the registry is the only list of games", () => {
  it("no source outside games/ and test/ names a game, but for the listed exceptions", () => {
    const ids = games.map((g) => g.id.replace(/-/g, "\\-")).join("|");
    const named = new RegExp(`["'\`](${ids})["'\`]|^\\s*(${ids})\\s*:`);
    const used = new Set<string>();
    const offenders: string[] = [];
    for (const file of SCANNED.flatMap((d) => sources(join(ROOT, d)))) {
      const path = relative(ROOT, file);
      const lines = readFileSync(file, "utf8").split("\n");
      const hits = lines.flatMap((line, i) => (!COMMENT.test(line) && named.test(line) ? [`${path}:${i + 1}`] : []));
      if (hits.length === 0) continue;
      const exception = Object.keys(EXCEPTIONS).find((prefix) => path.startsWith(prefix));
      if (exception) used.add(exception);
      else offenders.push(...hits);
    }
    expect(offenders).toEqual([]);
    // Each exception still names a game (an exception no longer needed is removed).
    expect([...used].sort()).toEqual(Object.keys(EXCEPTIONS).sort());
  });
});
