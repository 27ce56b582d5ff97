import { gameInfo, games } from "../games/registry.ts";
import { strategiesFor } from "../policies/baselines/index.ts";

/** The registry as clients see it: each game with its variants, config schema and built-in strategies. */
export function catalog() {
  return games.map((game) => ({
    ...gameInfo(game),
    strategies: strategiesFor(game.id).map((s) => ({
      name: s.name,
      description: s.description,
      ...(s.arg ? { arg: s.arg } : {}),
    })),
  }));
}
