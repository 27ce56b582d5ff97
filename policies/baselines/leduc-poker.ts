import type { FixedForm } from "../../games/core/action.ts";
import { type LeducAction, type LeducObservation, rankKey } from "../../games/leduc-poker/game.ts";
import { LEDUC_NASH } from "../nash/leduc-poker.ts";
import type { Strategy, StrategyContext, StrategyDef } from "../strategy.ts";

/** Leduc hold'em baselines: OpenSpiel's pure test policies and a solved equilibrium. */

type LeducContext = StrategyContext<LeducAction, LeducObservation>;

/** The first legal action among `types`, in that order of preference. */
function prefer(ctx: LeducContext, types: readonly string[]): LeducAction {
  for (const type of types) {
    for (const form of ctx.legal) {
      const action = (form as FixedForm<LeducAction>).action;
      if (action.type === type) return action;
    }
  }
  throw new RangeError(`none of ${types.join(", ")} is legal here`);
}

function pure(name: string, types: readonly string[]): Strategy {
  return {
    name,
    act: (ctx) => prefer(ctx as LeducContext, types),
    distribution: (ctx) => [{ action: prefer(ctx as LeducContext, types), probability: 1 }],
  };
}

const TYPES = ["fold", "call", "raise"] as const;

/** The shipped table's probabilities of the legal actions here, renormalised after rounding. */
function nashDistribution(ctx: LeducContext): { action: LeducAction; probability: number }[] {
  const obs = ctx.observation();
  const key = rankKey(obs.card!, obs.publicCard, obs.betting);
  const row = LEDUC_NASH[key];
  if (!row) throw new RangeError(`the Leduc equilibrium has no entry for ${key}`);
  const actions = ctx.legal.map((form) => (form as FixedForm<LeducAction>).action);
  const weights = actions.map((a) => row[TYPES.indexOf(a.type)]);
  const sum = weights.reduce((s, w) => s + w, 0);
  return actions.map((action, i) => ({ action, probability: weights[i] / sum }));
}

const nash: Strategy = {
  name: "nash",
  act(ctx) {
    const choices = nashDistribution(ctx as LeducContext);
    let u = choices.some((c) => c.probability === 1) ? 0 : ctx.rng.float();
    for (const c of choices) {
      if (c.probability > 0 && (u -= c.probability) < 0) return c.action;
    }
    return choices.findLast((c) => c.probability > 0)!.action;
  },
  distribution: (ctx) => nashDistribution(ctx as LeducContext),
};

export const leducPokerStrategies: readonly StrategyDef[] = [
  {
    name: "always-call",
    game: "leduc-poker",
    description: "checks or calls every time: never raises, never folds",
    create: () => pure("always-call", ["call"]),
  },
  {
    name: "always-raise",
    game: "leduc-poker",
    description: "raises whenever a raise is allowed, else calls",
    create: () => pure("always-raise", ["raise", "call"]),
  },
  {
    name: "always-fold",
    game: "leduc-poker",
    description: "folds whenever it owes chips, else checks (OpenSpiel's first-action policy)",
    create: () => pure("always-fold", ["fold", "call"]),
  },
  {
    name: "nash",
    game: "leduc-poker",
    description: "an approximate Nash equilibrium solved by CFR+ (policies/nash/leduc-poker.ts), the same for " +
      "both suits of a rank; worth about −0.0856 a hand to the first player",
    create: () => nash,
  },
];
