import type { FixedForm } from "../../games/core/action.ts";
import type { KuhnAction, KuhnObservation } from "../../games/kuhn-poker/game.ts";
import { numberArg, type Strategy, type StrategyContext, type StrategyDef } from "../strategy.ts";

/** Kuhn poker baselines: the three pure policies OpenSpiel tests with, and the equilibrium family. */

type KuhnContext = StrategyContext<KuhnAction, KuhnObservation>;

/** The legal action of one of two types (Kuhn always offers check/bet or fold/call). */
function pick(ctx: KuhnContext, a: string, b: string): KuhnAction {
  for (const form of ctx.legal) {
    const action = (form as FixedForm<KuhnAction>).action;
    if (action.type === a || action.type === b) return action;
  }
  throw new RangeError(`neither ${a} nor ${b} is legal here`);
}

/** Always the same kind of move: check or call, bet or call, check or fold. */
function pure(name: string, a: string, b: string): Strategy {
  return {
    name,
    act: (ctx) => pick(ctx as KuhnContext, a, b),
    distribution: (ctx) => [{ action: pick(ctx as KuhnContext, a, b), probability: 1 }],
  };
}

/**
 * OpenSpiel's equilibrium family (Kuhn 1950): the probability of putting a chip in (bet or call)
 * by card (J, Q, K) and the hand's betting so far, for the player who acts first ("" and "pb") and
 * the one who acts second ("p" and "b").
 */
export function nashBetProbabilities(alpha: number): Readonly<Record<string, readonly [number, number, number]>> {
  return {
    "": [alpha, 0, 3 * alpha],
    pb: [0, alpha + 1 / 3, 1],
    p: [1 / 3, 0, 1],
    b: [0, 1 / 3, 1],
  };
}

function nash(alpha: number): Strategy {
  const table = nashBetProbabilities(alpha);
  const distribution = (ctx: KuhnContext) => {
    const info = ctx.observation().infoState!;
    const bet = table[info.slice(1)][Number(info[0])];
    // Both forms are fixed: check/bet or fold/call, the chip-free move first.
    const [pass, chip] = ctx.legal.map((form) => (form as FixedForm<KuhnAction>).action);
    return [{ action: pass, probability: 1 - bet }, { action: chip, probability: bet }];
  };
  return {
    name: `nash:${alpha}`,
    act(ctx) {
      const [pass, chip] = distribution(ctx as KuhnContext);
      // Draw only when the choice is mixed, so pure spots leave the strategies' stream alone.
      if (chip.probability <= 0) return pass.action;
      if (chip.probability >= 1) return chip.action;
      return ctx.rng.float() < chip.probability ? chip.action : pass.action;
    },
    distribution: (ctx) => distribution(ctx as KuhnContext),
  };
}

export const kuhnPokerStrategies: readonly StrategyDef[] = [
  {
    name: "always-call",
    game: "kuhn-poker",
    description: "checks when it may and calls any bet: never bets, never folds",
    create: () => pure("always-call", "check", "call"),
  },
  {
    name: "always-raise",
    game: "kuhn-poker",
    description: "bets when it may and calls any bet: never checks, never folds",
    create: () => pure("always-raise", "bet", "call"),
  },
  {
    name: "always-fold",
    game: "kuhn-poker",
    description: "checks when it may and folds to any bet (OpenSpiel's first-action policy)",
    create: () => pure("always-fold", "check", "fold"),
  },
  {
    name: "nash",
    game: "kuhn-poker",
    description: "a Nash equilibrium from OpenSpiel's one-parameter family: the first player bets a jack with " +
      "probability α, a king with 3α, and calls with a queen with α + 1/3; worth −1/18 a hand to the first player",
    arg: { name: "alpha", description: "α in [0, 1/3]", default: "0" },
    create: (arg) => nash(numberArg("nash", arg, 0, 1 / 3)),
  },
];
