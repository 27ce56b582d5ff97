import { amounts, type DondAction, type DondObservation } from "../../games/deal-or-no-deal/game.ts";
import { allInstances, ITEM_TYPES, ITEMS, TOTAL_VALUE, worthOf } from "../../games/deal-or-no-deal/instances.ts";
import type { Strategy, StrategyContext, StrategyDef } from "../strategy.ts";

/**
 * Two baselines for Deal or No Deal, for both protocols. They talk in two plain sentences the other
 * can read: `My values per item: books 8, hats 1, balls 0.` and `I propose: I take 1 book, 2 hats
 * and 0 balls; ...`. In the dialogue protocol a seat accepts a proposal by selecting, and after the
 * talk both state the takes of the last proposal when its recipient was the one who selected.
 */

type DondContext = StrategyContext<DondAction, DondObservation>;

/** How a strategy values a split: by its own values only, or by its estimate of the joint value. */
interface Judge {
  /** What it proposes to keep. */
  keep(obs: DondObservation, seat: number): number[];
  /** Its score for keeping `share`; it agrees when this reaches the score of its own proposal. */
  score(obs: DondObservation, seat: number, share: readonly number[]): number;
  /** The first message it sends, before any proposal (may be empty). */
  opening(obs: DondObservation, seat: number): string;
}

const VALUES_SAID = /values[^:]*:\s*books\s*(\d+),\s*hats\s*(\d+),\s*(?:and\s+)?balls\s*(\d+)/i;
const PROPOSAL_SAID = /I take (\d+) books?, (\d+) hats? and (\d+) balls?/i;
const EPSILON = 1e-9;

function own(obs: DondObservation, seat: number): readonly number[] {
  return obs.values[seat]!;
}

function rest(obs: DondObservation, keep: readonly number[]): number[] {
  return obs.pool.map((n, i) => n - keep[i]);
}

function proposalText(obs: DondObservation, keep: readonly number[]): string {
  return `I propose: I take ${amounts(keep)}; you take ${amounts(rest(obs, keep))}.`;
}

/** The take a seat proposed in `text`, if it wrote one the way these strategies do. */
function proposalIn(text: string): number[] | undefined {
  const m = PROPOSAL_SAID.exec(text);
  return m ? m.slice(1, 4).map(Number) : undefined;
}

/** The other seat's values as it stated them, when they are a possible valuation of this pool. */
function statedValues(obs: DondObservation, other: number): number[] | undefined {
  for (let k = obs.chat.length - 1; k >= 0; k--) {
    if (obs.chat[k].seat !== other) continue;
    const m = VALUES_SAID.exec(obs.chat[k].text);
    if (!m) continue;
    const values = m.slice(1, 4).map(Number);
    if (worthOf(values, obs.pool) === TOTAL_VALUE) return values;
  }
  return undefined;
}

// The mean of the other's values over every instance with this pool and these own values: since
// instances are drawn uniformly, that is the exact expectation given what the seat sees.
const posteriors = new Map<string, number[]>();

function expectedOtherValues(pool: readonly number[], mine: readonly number[]): number[] {
  const key = `${pool.join(",")} ${mine.join(",")}`;
  let mean = posteriors.get(key);
  if (mean === undefined) {
    mean = [0, 0, 0];
    let n = 0;
    for (const { pool: p, values } of allInstances()) {
      if (p.every((c, i) => c === pool[i]) && values[0].every((v, i) => v === mine[i])) {
        for (let i = 0; i < ITEM_TYPES; i++) mean[i] += values[1][i];
        n++;
      }
    }
    mean = mean.map((s) => s / n);
    posteriors.set(key, mean);
  }
  return mean;
}

/** The other's values as far as this seat knows them: as stated, else their expectation. */
function otherValues(obs: DondObservation, seat: number): readonly number[] {
  return statedValues(obs, 1 - seat) ?? expectedOtherValues(obs.pool, own(obs, seat));
}

const greedy: Judge = {
  keep: (obs, seat) => obs.pool.map((n, i) => (own(obs, seat)[i] > 0 ? n : 0)),
  score: (obs, seat, share) => worthOf(own(obs, seat), share),
  opening: () => "",
};

/**
 * Maximises the estimated joint value: each item type goes wholly to whoever values it more, with
 * ties halved (seat 0 rounding up, so both seats compute the same split).
 */
const welfare: Judge = {
  keep(obs, seat) {
    const mine = own(obs, seat);
    const theirs = otherValues(obs, seat);
    return obs.pool.map((n, i) =>
      mine[i] > theirs[i] + EPSILON
        ? n
        : mine[i] < theirs[i] - EPSILON
        ? 0
        : seat === 0
        ? Math.ceil(n / 2)
        : Math.floor(n / 2)
    );
  },
  score(obs, seat, share) {
    return worthOf(own(obs, seat), share) + worthOf(otherValues(obs, seat), rest(obs, share));
  },
  opening: (obs, seat) => `My values per item: ${ITEMS.map((item, i) => `${item} ${own(obs, seat)[i]}`).join(", ")}.`,
};

/** Whether `share` is good enough to take now: as good as its own proposal, or better than nothing at the last chance. */
function acceptable(
  judge: Judge,
  obs: DondObservation,
  seat: number,
  share: readonly number[],
  last: boolean,
): boolean {
  const score = judge.score(obs, seat, share);
  return score >= judge.score(obs, seat, judge.keep(obs, seat)) - EPSILON || (last && score > 0);
}

function alternating(judge: Judge, ctx: DondContext): DondAction {
  const obs = ctx.observation();
  const seat = ctx.seat;
  const canTalk = ctx.legal.some((f) => f.kind === "text");
  const opening = judge.opening(obs, seat);
  if (canTalk && opening && !obs.chat.some((m) => m.seat === seat)) return { type: "message", text: opening };
  const last = obs.offers[obs.offers.length - 1];
  // Its own next offer would be the last one, which nobody can accept.
  const lastChance = obs.offers.length === obs.maxTurns - 1;
  if (last && acceptable(judge, obs, seat, rest(obs, last.keep), lastChance)) return { type: "agree" };
  return { type: "propose", take: judge.keep(obs, seat) };
}

function talk(judge: Judge, ctx: DondContext): DondAction {
  const obs = ctx.observation();
  const seat = ctx.seat;
  const latest = obs.chat[obs.chat.length - 1];
  const theirs = latest && latest.seat !== seat ? proposalIn(latest.text) : undefined;
  // Its message now would be the last one, and the talk would end on an unanswered proposal.
  const lastChance = obs.turn === obs.maxTurns;
  if (theirs && acceptable(judge, obs, seat, rest(obs, theirs), lastChance)) return { type: "select" };
  const opening = obs.chat.some((m) => m.seat === seat) ? "" : judge.opening(obs, seat);
  const text = [opening, proposalText(obs, judge.keep(obs, seat))].filter(Boolean).join(" ");
  return { type: "message", text: text.slice(0, obs.messageChars) };
}

/** The last proposal, when its recipient ended the talk by selecting: both then state its takes. */
function choose(judge: Judge, ctx: DondContext): DondAction {
  const obs = ctx.observation();
  const seat = ctx.seat;
  for (let k = obs.chat.length - 1; k >= 0; k--) {
    const proposal = proposalIn(obs.chat[k].text);
    if (proposal === undefined) continue;
    const author = obs.chat[k].seat;
    if (obs.selectedBy === 1 - author) {
      return { type: "choice", take: author === seat ? proposal : rest(obs, proposal) };
    }
    break;
  }
  return { type: "choice", take: judge.keep(obs, seat) };
}

function strategy(name: string, judge: Judge): Strategy {
  return {
    name,
    act(ctx) {
      const dond = ctx as DondContext;
      const kinds = dond.legal.map((f) => (f.kind === "fixed" ? f.action.type : f.type));
      if (kinds.includes("choice")) return choose(judge, dond);
      if (kinds.includes("select")) return talk(judge, dond);
      return alternating(judge, dond);
    },
  };
}

export const dealOrNoDealStrategies: readonly StrategyDef[] = [
  {
    name: "greedy",
    game: "deal-or-no-deal",
    description: "asks for every item it values and gives away only what is worthless to it; accepts only a " +
      "split that gives it all of that, or anything worth more than nothing when it is the last chance for a deal",
    create: () => strategy("greedy", greedy),
  },
  {
    name: "welfare-max",
    game: "deal-or-no-deal",
    description: "states its values, then proposes the split with the highest joint value it can estimate: each " +
      "item to whoever values it more, using the other's stated values or, failing that, their exact expectation " +
      "over all instances consistent with the pool and its own values; accepts any split at least as good by that " +
      "estimate, or anything worth more than nothing to the pair at the last chance",
    create: () => strategy("welfare-max", welfare),
  },
];
