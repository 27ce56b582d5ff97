import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/python.ts";

/**
 * The layers of the house point one way (the README's architecture map, docs/architecture.md): the games
 * are pure and know nothing else, the store knows games and the protocol, and so on down the table below. An import
 * against the table fails here, naming the file and what it imported.
 */

/** Each layer, and the layers it may import from (its own always). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  games: [],
  // The protocol describes actions as the games define them.
  protocol: ["games"],
  db: ["games", "protocol"],
  // The policy runtime registers through the store's policy registry.
  policies: ["games", "protocol", "db"],
  server: ["games", "protocol", "db", "policies"],
  // The LLM client reads a game's rules and configs as the server does (it renders the prompts it sends).
  clients: ["games", "protocol"],
  cli: ["games", "protocol", "db", "policies", "server", "clients"],
};

/** Layers whose imports of these others may only be `import type` (erased from what runs). */
const TYPES_ONLY: Record<string, readonly string[]> = {
  // The web app is bundled for the browser: it reads the HTTP API's shapes, never the server's code.
  web: ["db", "server"],
};
const WEB_MAY_IMPORT = ["games", "protocol", "web"];

/** npm packages the games may import: none that does I/O, keeps time or draws randomness. */
const GAME_PACKAGES = ["zod"];

const SOURCE = /\.(ts|tsx|mjs)$/;
const isTable = (file: string) => /^games\/[^/]+\/table\.tsx$/.test(file);
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return ["node_modules", "dist", "build", "trainer"].includes(entry.name) ? [] : sources(path);
    }
    return SOURCE.test(entry.name) ? [path] : [];
  });
}

interface Import {
  readonly file: string;
  readonly spec: string;
  readonly typeOnly: boolean;
}

const IMPORT =
  /^\s*(import|export)\s+(type\s+)?(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;

function imports(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(IMPORT)].map((m) => ({ file, spec: m[3] ?? m[4], typeOnly: m[2] !== undefined }));
}

/** The top-level folder a relative import lands in; a package's name for a bare one. */
function target({ file, spec }: Import): { layer?: string; pkg?: string } {
  if (!spec.startsWith(".")) return { pkg: spec.replace(/^npm:/, "").split("/")[0] };
  return { layer: relative(ROOT, normalize(join(ROOT, dirname(file), spec))).split("/")[0] };
}

describe("the layers", () => {
  it("import only the layers below them, and the games nothing outside games/ but zod", () => {
    const wrong: string[] = [];
    for (const [layer, allowed] of Object.entries({ ...MAY_IMPORT, web: WEB_MAY_IMPORT })) {
      // A game's web table (games/<id>/table.tsx) is the web app's code, kept in the game's folder with the rest of
      // what is about the game: it is held to the web app's rules, and the rules beside it to the games'.
      const files = layer === "web"
        ? [...sources("web"), ...sources("games").filter(isTable)]
        : sources(layer).filter((file) => !isTable(file));
      expect(files.length, layer).toBeGreaterThan(0);
      for (const found of files.flatMap(imports)) {
        const { layer: to, pkg } = target(found);
        if (pkg !== undefined) {
          if (layer === "games" && !GAME_PACKAGES.includes(pkg)) wrong.push(`${found.file} imports ${found.spec}`);
          continue;
        }
        // The repository's own files at its root (package.json: the version) belong to no layer.
        if (to === layer || allowed.includes(to!) || !to!.match(/^[a-z-]+$/)) continue;
        if (found.typeOnly && TYPES_ONLY[layer]?.includes(to!)) continue;
        wrong.push(`${found.file} imports ${found.spec}${found.typeOnly ? " (types)" : ""}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
