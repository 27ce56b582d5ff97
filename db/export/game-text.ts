import type { AnyGame } from "../../games/core/game.ts";
import { games } from "../../games/registry.ts";

/**
 * The games' own text for exported rows: an observation as an LLM seat reads it, and the rules it reads
 * first. Null for a game this code does not know, or for a record made under an older version of a game
 * whose observations or configs this code cannot render any more.
 */

const byId = new Map<string, AnyGame>(games.map((g) => [g.id, g]));

function attempt(render: () => string): string | null {
  try {
    return render();
  } catch {
    return null;
  }
}

/** The observation (JSON text) as the game describes it. */
export function describeObservation(gameId: string, observation: string): string | null {
  const game = byId.get(gameId);
  return game ? attempt(() => game.describe(JSON.parse(observation))) : null;
}

const rulesCache = new Map<string, string | null>();

/** The rules for a match's config; computed once per distinct config. */
export function rulesText(gameId: string, config: unknown): string | null {
  const key = `${gameId}\u0000${JSON.stringify(config)}`;
  let found = rulesCache.get(key);
  if (found === undefined) {
    if (rulesCache.size >= 1024) rulesCache.clear(); // configs are few; bound the cache anyway
    const game = byId.get(gameId);
    found = game ? attempt(() => game.rules(config)) : null;
    rulesCache.set(key, found);
  }
  return found;
}
