import type { AnyGame } from "../games/core/game.ts";
import { gameInfo, GameRegistry, games, registry } from "../games/registry.ts";
import { strategiesFor } from "../policies/baselines/index.ts";

/**
 * The registry as clients see it (`GET /games`, `ludus games --json`): each game with its properties, variants,
 * config schema and built-in strategies. `current` is the registry's list unless a test passes another.
 */
export function catalog(current: readonly AnyGame[] = games) {
  const from = current === games ? registry : new GameRegistry(current);
  return current.map((game) => ({
    ...gameInfo(game, from),
    strategies: strategiesFor(game.id).map((s) => ({
      name: s.name,
      description: s.description,
      ...(s.arg ? { arg: s.arg } : {}),
    })),
  }));
}
