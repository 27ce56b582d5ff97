import { AnalysisError, buildTree } from "../games/analysis/tree.ts";
import { configure } from "../games/core/config.ts";
import { type AnyGame, twoPlayerZeroSum } from "../games/core/game.ts";
import { games } from "../games/registry.ts";

/**
 * The Python trainer's learning methods (policies/trainer) and what each needs of a game, decided from the game's
 * properties before anything runs.
 */

export const METHODS = ["cfr", "mmd", "adalign", "ppo"] as const;
export type Method = typeof METHODS[number];

/**
 * The most nodes a tree may have for cfr to tabulate it from sampled matches, and for a run's curve to evaluate
 * each version exactly: Leduc poker's has 9,451. Walking a tree costs about a second per 10,000 nodes on a loaded
 * machine, so the check stays short.
 */
export const TABULAR_NODES = 20_000;

/** Why exact analysis cannot walk the whole tree of `config` within TABULAR_NODES, or undefined where it can. */
export function notTabular(game: AnyGame, config: unknown): string | undefined {
  try {
    buildTree(game, config, { maxNodes: TABULAR_NODES });
    return undefined;
  } catch (error) {
    if (error instanceof AnalysisError) return error.message;
    throw error;
  }
}

interface Requirement {
  /** What the method needs, as the end of "<method> trains ...". */
  readonly needs: string;
  /** Why a config does not qualify, or undefined where it does. */
  readonly refuses: (game: AnyGame, config: unknown) => string | undefined;
}

const zeroSum = (game: AnyGame, config: unknown) =>
  twoPlayerZeroSum(game, config)
    ? undefined
    : game.utility !== "zero-sum"
    ? `it is ${game.utility}`
    : `it has ${game.seatCount(config)} seats`;

const REQUIREMENTS: Record<Method, Requirement> = {
  cfr: {
    needs:
      `two-player zero-sum games whose whole tree it can tabulate (one seat acting at a time, finite choices, at ` +
      `most ${TABULAR_NODES.toLocaleString("en")} nodes)`,
    refuses: (game, config) => zeroSum(game, config) ?? notTabular(game, config),
  },
  mmd: { needs: "two-player zero-sum games (one network in both seats)", refuses: zeroSum },
  adalign: { needs: "any game (a policy per seat)", refuses: () => undefined },
  ppo: { needs: "any game (a policy per seat)", refuses: () => undefined },
};

/** Why `method` cannot train `game` under `variant`, naming what it needs and which games qualify; or undefined. */
export function methodRefusal(method: Method, game: AnyGame, variant: string): string | undefined {
  const { config } = configure(game, {}, variant);
  const { needs, refuses } = REQUIREMENTS[method];
  const why = refuses(game, config);
  if (why === undefined) return undefined;
  const qualify = games.filter((g) => refuses(g, configure(g, {}).config) === undefined).map((g) => g.id);
  return `${method} trains ${needs}; ${game.id} (${variant}) does not qualify (${why}); the games that qualify ` +
    `(default variants): ${qualify.join(", ")}`;
}

/** The method a run of `game` gets unless one is named: cfr where it can tabulate, mmd where zero-sum, else adalign. */
export function defaultMethod(game: AnyGame, variant: string): Method {
  const { config } = configure(game, {}, variant);
  return METHODS.find((m) => REQUIREMENTS[m].refuses(game, config) === undefined)!;
}

/** Whether a method trains one policy in every seat (cfr, mmd) rather than a policy per seat. */
export const sharedPolicy = (method: Method): boolean => method === "cfr" || method === "mmd";
