import type { Action, ActionForm, FixedForm } from "../../games/core/action.ts";
import type { Rng } from "../../games/core/rng.ts";
import type { StrategyDef } from "../strategy.ts";

const WORDS = ["deal", "trust", "fair", "share", "cooperate", "maybe", "yes", "no", "you", "me", "together", "split"];

/** Uniform over the legal forms, then uniform within the chosen form (its range, its items). */
export function randomAction(form: ActionForm, rng: Rng): Action {
  switch (form.kind) {
    case "fixed":
      return form.action;
    case "amount":
      return {
        type: form.type,
        amount: form.integer ? form.min + rng.int(form.max - form.min + 1) : rng.uniform(form.min, form.max),
      } as Action;
    case "text": {
      // A short babble of up to 8 words that fits the limit: enough to exercise message paths.
      const words: string[] = [];
      const count = rng.int(9);
      for (let i = 0; i < count; i++) words.push(rng.pick(WORDS));
      return { type: form.type, text: words.join(" ").slice(0, form.maxLength) } as Action;
    }
    case "split":
      return { type: form.type, take: form.max.map((max) => rng.int(max + 1)) } as Action;
    case "exchange":
      return { type: form.type, give: randomBundle(form.give, rng), get: randomBundle(form.get, rng) } as Action;
  }
}

/** A non-empty random subset of the resources that can be named, each with a count from 1 to its max. */
function randomBundle(max: Readonly<Record<string, number>>, rng: Rng): Record<string, number> {
  const names = Object.keys(max).filter((name) => max[name] >= 1);
  const chosen = rng.shuffle([...names]).slice(0, 1 + rng.int(names.length));
  const bundle: Record<string, number> = {};
  for (const name of names) if (chosen.includes(name)) bundle[name] = 1 + rng.int(max[name]);
  return bundle;
}

export const random: StrategyDef = {
  name: "random",
  game: "*",
  description: "uniform over the legal actions; for a range, uniform over the range",
  create: () => ({
    name: "random",
    act: (ctx) => randomAction(ctx.legal.length === 1 ? ctx.legal[0] : ctx.rng.pick(ctx.legal), ctx.rng),
    distribution(ctx) {
      if (ctx.legal.some((form) => form.kind !== "fixed")) {
        throw new RangeError("random has a finite distribution only where every legal action is a fixed choice");
      }
      return ctx.legal.map((form) => ({ action: (form as FixedForm).action, probability: 1 / ctx.legal.length }));
    },
  }),
};
