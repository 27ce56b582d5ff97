import type { ActionSpace, SplitForm } from "../../games/core/action.ts";
import { beats, HANDS, type TasAction, type TasObservation } from "../../games/trust-and-split/game.ts";
import type { Strategy, StrategyContext, StrategyDef } from "../strategy.ts";

/** The hard-coded baselines of the Trust-and-Split papers: greedy, welfare-maximising, and an even split. */

type TasContext = StrategyContext<TasAction, TasObservation>;

function inMessagePhase(legal: ActionSpace<TasAction>): boolean {
  return legal[0]?.kind === "text";
}

/** A strategy that talks with `say` and claims with `claim` (one count per item). */
function strategy(
  name: string,
  say: (ctx: TasContext) => string,
  claim: (ctx: TasContext, form: SplitForm) => number[],
): Strategy {
  return {
    name,
    act: (ctx) => {
      const tas = ctx as TasContext;
      if (inMessagePhase(tas.legal)) return { type: "message", text: say(tas) };
      const form = tas.legal[0] as SplitForm;
      return { type: form.type, take: claim(tas, form) };
    },
  } as Strategy;
}

const HAND_WORD = /\b(rock|paper|scissors)\b/gi;

/** The hand the other seat named in this round's messages, when it named exactly one. */
function namedHand(obs: TasObservation, seat: number): number | undefined {
  const named = new Set<number>();
  for (const m of obs.chat) {
    if (m.round !== obs.round || m.seat === seat) continue;
    for (const word of m.text.matchAll(HAND_WORD)) {
      named.add((HANDS as readonly string[]).indexOf(word[1].toLowerCase()));
    }
  }
  return named.size === 1 ? [...named][0] : undefined;
}

/**
 * Maximises the two seats' total: the seat that values an item more takes all of it. With public
 * values it decides per item and halves ties; with hands it trusts the hand the other named, and
 * claims half when it knows none. Seat 0 rounds a half up and seat 1 down, so two welfare seats never
 * over-claim nor waste a unit.
 */
function welfareClaim(ctx: TasContext, form: SplitForm): number[] {
  const obs = ctx.observation();
  const q = obs.quantity;
  const half = ctx.seat === 0 ? Math.ceil(q / 2) : Math.floor(q / 2);
  if (obs.values) {
    const own = obs.values[ctx.seat];
    const other = obs.values[1 - ctx.seat];
    return own.map((v, i) => (v > other[i] ? q : v < other[i] ? 0 : half));
  }
  const mine = HANDS.indexOf(obs.hand!);
  const theirs = namedHand(obs, ctx.seat);
  const share = theirs === undefined || theirs === mine ? half : beats(mine, theirs) ? q : 0;
  return form.items.map(() => share);
}

function welfareLine(ctx: TasContext): string {
  const obs = ctx.observation();
  return obs.hand
    ? `My hand is ${obs.hand}.`
    : "Whoever values an item more should take all of it; let's split the items we value equally.";
}

export const trustAndSplitStrategies: readonly StrategyDef[] = [
  {
    name: "greedy",
    game: "trust-and-split",
    description: "claims every unit of every item and says it has the upper hand",
    create: () => strategy("greedy", () => "I have the upper hand.", (_, form) => [...form.max]),
  },
  {
    name: "welfare",
    game: "trust-and-split",
    description: "maximises the joint score: states its true hand, then claims everything when its hand beats " +
      "the one the other named, nothing when it loses, half when it is unknown; with public values, all of " +
      "each item it values more, none of those it values less, half of the ties",
    create: () => strategy("welfare", welfareLine, welfareClaim),
  },
  {
    name: "fair",
    game: "trust-and-split",
    description: "claims half of every item (rounded down) and proposes an even split",
    create: () => strategy("fair", () => "Let's split evenly.", (_, form) => form.max.map((m) => Math.floor(m / 2))),
  },
];
