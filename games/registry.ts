import { type AnyGame, NumericFaceError } from "./core/game.ts";
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

/**
 * Every game Ludus hosts, at its current version: the one list of games. A game's folder holds everything about it
 * (rules, numeric face, properties, caps, LLM answer example, its web table in table.tsx), and one line here is all
 * it takes for every layer to offer it (test/games/new-game.test.ts shows it).
 */
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

/**
 * Earlier versions of games, kept when a game's version is bumped so that every stored match stays
 * viewable, verifiable and exportable: move the old rules beside the new (e.g. games/<id>/v1.ts) and list
 * them here.
 */
const earlierVersions: readonly AnyGame[] = [];

/** An unknown game id, with the ids that exist. */
export class UnknownGameError extends Error {
  constructor(id: string, ids: readonly string[]) {
    super(`unknown game \`${id}\` (games: ${ids.join(", ")})`);
    this.name = "UnknownGameError";
  }
}

/** A version of a game this build does not have, with the versions it does. */
export class UnknownVersionError extends Error {
  constructor(readonly game: string, readonly version: number, readonly versions: readonly number[]) {
    super(`${game} version ${version} is not in this build (versions: ${versions.join(", ")})`);
    this.name = "UnknownVersionError";
  }
}

/** Games by (id, version): the current version of each, and every earlier one kept. */
export class GameRegistry {
  readonly #byId = new Map<string, Map<number, AnyGame>>();
  readonly #current = new Map<string, AnyGame>();

  constructor(current: readonly AnyGame[], earlier: readonly AnyGame[] = []) {
    for (const game of [...current, ...earlier]) {
      const versions = this.#byId.get(game.id) ?? new Map<number, AnyGame>();
      if (versions.has(game.version)) throw new Error(`${game.id} version ${game.version} is registered twice`);
      this.#byId.set(game.id, versions.set(game.version, game));
    }
    for (const game of current) {
      if (this.#current.has(game.id)) throw new Error(`${game.id} is listed twice as a current game`);
      this.#current.set(game.id, game);
    }
    for (const game of earlier) {
      if (!this.#current.has(game.id)) throw new Error(`${game.id} has earlier versions but no current one`);
      if (game.version >= this.#current.get(game.id)!.version) {
        throw new Error(`${game.id} version ${game.version} is listed as earlier than the current one`);
      }
    }
  }

  /** The game `id` at `version` (the current version when omitted). */
  get(id: string, version?: number): AnyGame {
    const versions = this.#byId.get(id);
    if (!versions) throw new UnknownGameError(id, [...this.#current.keys()]);
    if (version === undefined) return this.#current.get(id)!;
    const game = versions.get(version);
    if (!game) throw new UnknownVersionError(id, version, this.versions(id));
    return game;
  }

  /** The versions of `id` this build can load, oldest first (none for an unknown id). */
  versions(id: string): number[] {
    return [...(this.#byId.get(id)?.keys() ?? [])].sort((a, b) => a - b);
  }
}

export const registry = new GameRegistry(games, earlierVersions);

/** The current version of game `id`, or the version a record pins. */
export function getGame(id: string, version?: number): AnyGame {
  return registry.get(id, version);
}

/**
 * A game as the registry publishes it (JSON): everything a lobby, client, CLI or trainer needs to offer it,
 * OpenSpiel's GameType properties (utility, chanceMode, information, dynamics; seats as its players) among them.
 */
export function gameInfo(game: AnyGame, from: GameRegistry = registry) {
  return {
    id: game.id,
    version: game.version,
    versions: from.versions(game.id),
    title: game.title,
    summary: game.summary,
    utility: game.utility,
    chanceMode: game.chanceMode,
    information: game.information,
    dynamics: game.dynamics,
    seats: game.seats,
    answerExample: game.answerExample,
    caps: game.caps,
    defaultVariant: game.defaultVariant,
    variants: Object.fromEntries(
      Object.entries(game.variants).map(([name, v]) => {
        const config = game.schema.parse(v.config);
        return [name, {
          description: v.description,
          config: v.config,
          seats: game.seatCount(config),
          simultaneous: game.simultaneous?.(config) ?? false,
          ...numericInfo(game, config),
        }];
      }),
    ),
    config: configSchema(game),
  };
}

/** A config's tensor shape and action count, or why the numeric face does not cover it. */
export function numericInfo(
  game: AnyGame,
  config: unknown,
): { observationShape: readonly number[]; actionCount: number; encoderVersion: number } | { numericFace: string } {
  try {
    return {
      observationShape: game.observationShape(config),
      actionCount: game.actionCount(config),
      encoderVersion: encoderVersion(game),
    };
  } catch (error) {
    if (error instanceof NumericFaceError) return { numericFace: error.message };
    throw error;
  }
}

/** The version of `game`'s tensor encoding and action ids (see NumericFace.encoderVersion). */
export function encoderVersion(game: AnyGame): number {
  return game.encoderVersion ?? 1;
}
