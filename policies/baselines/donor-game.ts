import type { ActionSpace, AmountForm } from "../../games/core/action.ts";
import type { DonorAction, DonorObservation } from "../../games/donor-game/game.ts";
import { numberArg, type Strategy, type StrategyDef } from "../strategy.ts";

/** The donate form of a donor's space; its max is the donor's current resources. */
function donateForm(legal: ActionSpace): AmountForm {
  const form = legal.find((f) => f.kind === "amount" && f.type === "donate");
  if (form === undefined) throw new Error("donor-game strategies only play the donor game");
  return form as AmountForm;
}

function giveShare(legal: ActionSpace, share: number): DonorAction {
  return { type: "donate", amount: share * donateForm(legal).max };
}

/** The share of its resources the recipient gave in its latest move; punishing and refusing give nothing. */
function lastShare(observation: DonorObservation, unknown: number): number {
  const latest = observation.you?.recipientTrace[0];
  if (latest === undefined || latest.kind === "start") return unknown;
  return latest.kind === "donate" ? latest.percent / 100 : 0;
}

export const donorGameStrategies: readonly StrategyDef[] = [
  {
    name: "donate",
    game: "donor-game",
    description: "gives a fixed fraction of its current resources, whoever the recipient is",
    arg: { name: "f", description: "the fraction given, in [0, 1]", default: "0.5" },
    create(arg): Strategy {
      const share = numberArg("donate", arg, 0, 1);
      return { name: `donate:${share}`, act: (ctx) => giveShare(ctx.legal, share) };
    },
  },
  {
    name: "reciprocator",
    game: "donor-game",
    description: "gives the share of its resources that the recipient gave in its latest donation, " +
      "as the recipient's trace shows (nothing if the recipient punished or refused)",
    arg: { name: "f", description: "the fraction given to a recipient with no history, in [0, 1]", default: "0.5" },
    create(arg): Strategy {
      const unknown = numberArg("reciprocator", arg, 0, 1);
      return {
        name: `reciprocator:${unknown}`,
        act: (ctx) => {
          const observation = ctx.observation() as DonorObservation;
          return giveShare(ctx.legal, lastShare(observation, unknown));
        },
      };
    },
  },
];
