import type { Action, ActionSpace } from "../../games/core/action.ts";
import type { ConductPolicy } from "../../protocol/frames.ts";

/**
 * The default conduct: two illegal actions forgiven per decision, then the seat's default action;
 * a timeout plays the default action too, so a slow or broken bot costs itself, not the match; a
 * dropped seat is held for 30 s. Research leagues that want a loss instead set `forfeit`.
 */
export const DEFAULT_CONDUCT: ConductPolicy = {
  retries: 2,
  onIllegal: "default",
  onTimeout: "default",
  holdMs: 30_000,
};

/**
 * The action a seat plays when the conduct policy acts for it: the first action its game lists
 * (check or fold in poker, cooperate in the dilemma, a message in the talk phases), the low end of an
 * amount, empty text, or a claim of nothing.
 */
export function defaultAction(space: ActionSpace): Action {
  for (const form of space) {
    switch (form.kind) {
      case "fixed":
        return form.action;
      case "amount":
        return { type: form.type, amount: form.min } as Action;
      case "text":
        return { type: form.type, text: "" } as Action;
      case "split":
        return { type: form.type, take: form.max.map(() => 0) } as Action;
      case "exchange":
        continue; // a trade has no neutral value; every game with trades also lists a pass
    }
  }
  throw new Error(`no default action among ${JSON.stringify(space)}`);
}
