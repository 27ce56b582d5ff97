import type { AnyGame } from "../../games/core/game.ts";
import { registry } from "../../games/registry.ts";

/**
 * The games' own text for exported rows: an observation as an LLM seat reads it, and the rules it reads
 * first, by the version of the game the match was played under. Null for a game or version this build does
 * not have.
 */

/** The game at `version`, or undefined where this build does not have it. */
function gameAt(gameId: string, version: number): AnyGame | undefined {
  return registry.versions(gameId).includes(version) ? registry.get(gameId, version) : undefined;
}

function attempt(render: () => string): string | null {
  try {
    return render();
  } catch {
    return null;
  }
}

/** The observation (JSON text) as the game describes it. */
export function describeObservation(gameId: string, version: number, observation: string): string | null {
  const game = gameAt(gameId, version);
  return game ? attempt(() => game.describe(JSON.parse(observation))) : null;
}

const rulesCache = new Map<string, string | null>();

/** The rules for a match's config; computed once per distinct config. */
export function rulesText(gameId: string, version: number, config: unknown): string | null {
  const key = `${gameId}\u0000${version}\u0000${JSON.stringify(config)}`;
  let found = rulesCache.get(key);
  if (found === undefined) {
    if (rulesCache.size >= 1024) rulesCache.clear(); // configs are few; bound the cache anyway
    const game = gameAt(gameId, version);
    found = game ? attempt(() => game.rules(config)) : null;
    rulesCache.set(key, found);
  }
  return found;
}
