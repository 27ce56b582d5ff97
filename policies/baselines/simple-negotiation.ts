import { type Bundle, RESOURCES, type SnAction, type SnObservation } from "../../games/simple-negotiation/game.ts";
import type { Strategy, StrategyContext, StrategyDef } from "../strategy.ts";

/**
 * Two baselines for the simple negotiation. Each knows only its own values; welfare-max guesses the
 * other's by assuming they mirror its own (the other values Wood as it values Gold, and Gold as it
 * values Wood), which is exactly the standard game's setup.
 */

type SnContext = StrategyContext<SnAction, SnObservation>;

/** Units by resource index from a bundle. */
function units(b: Bundle): number[] {
  return RESOURCES.map((r) => b[r] ?? 0);
}

function worth(values: readonly number[], counts: readonly number[]): number {
  return values.reduce((sum, v, i) => sum + v * counts[i], 0);
}

/** The waiting offer's effect on the seat it was made to, and on its maker, by the given values. */
function gains(obs: SnObservation, mine: readonly number[], theirs: readonly number[]): [number, number] {
  const give = units(obs.offer!.give);
  const get = units(obs.offer!.get);
  return [worth(mine, give) - worth(mine, get), worth(theirs, get) - worth(theirs, give)];
}

/** The resources it values least and most (indices), or undefined when it values both alike. */
function preference(values: readonly number[]): [low: number, high: number] | undefined {
  if (values[0] === values[1]) return undefined;
  return values[0] < values[1] ? [0, 1] : [1, 0];
}

function offerOf(give: number, giveCount: number, get: number, getCount: number): SnAction {
  return { type: "offer", give: { [RESOURCES[give]]: giveCount }, get: { [RESOURCES[get]]: getCount } };
}

/**
 * Acts by the rules shared by both baselines: accept a waiting offer `good` approves, else make the
 * offer `propose` returns, else turn the waiting offer down, else chat.
 */
function strategy(
  name: string,
  line: string,
  good: (obs: SnObservation, mine: readonly number[]) => boolean,
  propose: (obs: SnObservation, seat: number, low: number, high: number) => SnAction | undefined,
): Strategy {
  return {
    name,
    act(context) {
      const ctx = context as SnContext;
      const obs = ctx.observation();
      const mine = obs.values[ctx.seat]!;
      const can = (type: string) => ctx.legal.some((f) => f.kind === "fixed" && f.action.type === type);
      if (can("accept") && good(obs, mine)) return { type: "accept" };
      const pref = preference(mine);
      const offer = pref && propose(obs, ctx.seat, pref[0], pref[1]);
      if (offer) return offer;
      if (can("deny")) return { type: "deny" };
      return { type: "chat", text: line.slice(0, obs.messageChars) };
    },
  };
}

export const simpleNegotiationStrategies: readonly StrategyDef[] = [
  {
    name: "greedy",
    game: "simple-negotiation",
    description: "accepts only offers that raise its own inventory value; offers one unit of the resource it " +
      "values less for all the other's units of the one it values more",
    create: () =>
      strategy(
        "greedy",
        "I only trade at a profit.",
        (obs, mine) => gains(obs, mine, mine)[0] > 0,
        (obs, seat, low, high) => {
          const theirs = obs.inventories[1 - seat][high];
          return obs.inventories[seat][low] > 0 && theirs > 0 ? offerOf(low, 1, high, theirs) : undefined;
        },
      ),
  },
  {
    name: "welfare-max",
    game: "simple-negotiation",
    description: "assumes the other's values mirror its own and maximises the joint value: accepts any offer " +
      "that raises the estimated sum of both gains, even at a loss to itself, and offers all it can of the " +
      "resource it values less for as many units of the one it values more (so each ends up holding what it " +
      "values most, with equal gains)",
    create: () =>
      strategy(
        "welfare-max",
        "Let's each end up with what we value most.",
        (obs, mine) => {
          const [own, other] = gains(obs, mine, [mine[1], mine[0]]);
          return own + other > 0;
        },
        (obs, seat, low, high) => {
          const n = Math.min(obs.inventories[seat][low], obs.inventories[1 - seat][high]);
          return n > 0 ? offerOf(low, n, high, n) : undefined;
        },
      ),
  },
];
