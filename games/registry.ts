import type { AnyGame } from "./core/game.ts";
import { configSchema } from "./core/config.ts";
import { dealOrNoDeal } from "./deal-or-no-deal/game.ts";
import { donorGame } from "./donor-game/game.ts";
import { holdem } from "./holdem/game.ts";
import { ipd } from "./ipd/game.ts";
import { kuhnPoker } from "./kuhn-poker/game.ts";
import { leducPoker } from "./leduc-poker/game.ts";
import { simpleNegotiation } from "./simple-negotiation/game.ts";
import { ticTacToe } from "./tic-tac-toe/game.ts";
import { trustAndSplit } from "./trust-and-split/game.ts";

/** Every game Ludus hosts. Adding one here is all it takes for every layer to offer it. */
export const games: readonly AnyGame[] = [
  ipd,
  donorGame,
  trustAndSplit,
  kuhnPoker,
  leducPoker,
  holdem,
  dealOrNoDeal,
  simpleNegotiation,
  ticTacToe,
];

/** An unknown game id, with the ids that exist. */
export class UnknownGameError extends Error {
  constructor(id: string) {
    super(`unknown game \`${id}\` (games: ${games.map((g) => g.id).join(", ")})`);
    this.name = "UnknownGameError";
  }
}

export function getGame(id: string): AnyGame {
  const game = games.find((g) => g.id === id);
  if (!game) throw new UnknownGameError(id);
  return game;
}

/** A game as the registry publishes it (JSON): everything a lobby, client or CLI needs to offer it. */
export function gameInfo(game: AnyGame) {
  return {
    id: game.id,
    version: game.version,
    title: game.title,
    summary: game.summary,
    seats: game.seats,
    defaultVariant: game.defaultVariant,
    variants: Object.fromEntries(
      Object.entries(game.variants).map((
        [name, v],
      ) => [name, {
        description: v.description,
        config: v.config,
        seats: game.seatCount(game.schema.parse(v.config)),
      }]),
    ),
    config: configSchema(game),
  };
}
