import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { playthrough } from "../../games/core/playthrough.ts";
import { games, registry } from "../../games/registry.ts";

/**
 * Golden playthroughs (as OpenSpiel's integration_tests/playthroughs): one committed file per game version
 * and variant. A change of behaviour shows as a diff here: if it is meant, bump the game's version (keeping
 * the old one registered, with its files) and write the new files with `deno task playthroughs`.
 */

const DIR = new URL("./playthroughs/", import.meta.url);
const UPDATE = process.env.UPDATE_PLAYTHROUGHS === "1";

for (const current of games) {
  for (const version of registry.versions(current.id)) {
    const game = registry.get(current.id, version);
    describe(`${game.id} v${version}: golden playthroughs`, () => {
      for (const variant of Object.keys(game.variants)) {
        it(variant, () => {
          const file = new URL(`${game.id}.v${version}.${variant}.txt`, DIR);
          const text = playthrough(game, variant);
          if (UPDATE) writeFileSync(file, text);
          expect(text).toBe(readFileSync(file, "utf8"));
        });
      }
    });
  }
}
