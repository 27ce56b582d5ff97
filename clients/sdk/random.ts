import type { ActionForm } from "../../protocol/action-forms.ts";

/** A float source in [0, 1), like `Math.random` (pass a seeded one for reproducible bots). */
export type RandomSource = () => number;

function int(n: number, random: RandomSource): number {
  return Math.floor(random() * n);
}

/** Uniform over the legal forms, then uniform within the chosen one (its range, its items, its resources). */
export function randomAction(legal: readonly ActionForm[], random: RandomSource = Math.random): unknown {
  if (legal.length === 0) throw new RangeError("there is no legal action to choose from");
  const form = legal[int(legal.length, random)];
  switch (form.kind) {
    case "fixed":
      return form.action;
    case "amount": {
      const span = form.max - form.min;
      const amount = form.integer ? form.min + int(span + 1, random) : form.min + random() * span;
      return { type: form.type, amount };
    }
    case "text":
      return { type: form.type, text: "" };
    case "split":
      return { type: form.type, take: form.max.map((max) => int(max + 1, random)) };
    case "exchange":
      return { type: form.type, give: randomBundle(form.give, random), get: randomBundle(form.get, random) };
  }
}

/** A uniformly random non-empty subset of the resources that can be named, each with a count from 1 to its max. */
function randomBundle(max: Readonly<Record<string, number>>, random: RandomSource): Record<string, number> {
  const names = Object.keys(max).filter((name) => max[name] >= 1);
  if (names.length === 0) return {};
  let chosen: string[] = [];
  while (chosen.length === 0) chosen = names.filter(() => random() < 0.5);
  return Object.fromEntries(chosen.map((name) => [name, 1 + int(max[name], random)]));
}
