import { boundText } from "../core/action.ts";

/**
 * Traces (Vallinder & Hughes 2024, §3.4 of the spec): every agent carries a list of sentences.
 * When donor D acts on recipient R, D's trace becomes R's trace plus that interaction, so a donor
 * reads a chain: what R did last, what R's own recipient did before that, and so on.
 *
 * A trace is an immutable linked list, newest first, so extending one shares its tail and costs
 * one small object per donation; sentences are only written when someone looks.
 */

export const START = 0;
export const DONATE = 1;
export const PUNISH = 2;
export const REFUSE = 3;

export class TraceNode {
  constructor(
    /** START (the agent had no interactions yet), DONATE, PUNISH or REFUSE. */
    readonly kind: number,
    /** 0-based game and round of the interaction (0 for START). */
    readonly game: number,
    readonly round: number,
    /** The donor's seat; for START, the agent without interactions. */
    readonly actor: number,
    /** The recipient's seat (−1 for START). */
    readonly recipient: number,
    /** Units the donor gave up (0 for START and REFUSE). */
    readonly amount: number,
    /** The donor's resources just before, so the share given can be told. */
    readonly before: number,
    readonly prev: TraceNode | null,
  ) {}
}

export function startTrace(seat: number): TraceNode {
  return new TraceNode(START, 0, 0, seat, -1, 0, 0, null);
}

/** One trace entry as observations carry it. */
export interface TraceEntry {
  readonly kind: "start" | "donate" | "punish" | "refuse";
  /** 1-based game and round (0 for "start"). */
  readonly game: number;
  readonly round: number;
  /** The donor's name; for "start", the agent without interactions. */
  readonly donor: string;
  readonly recipient: string | null;
  /** Units given up (donated, or spent on punishing). */
  readonly amount: number;
  /** amount as a percentage of the donor's resources at the time. */
  readonly percent: number;
  readonly sentence: string;
}

/** Trace entry kinds as observations name them, indexed by node kind. */
export const TRACE_KINDS = ["start", "donate", "punish", "refuse"] as const;

/**
 * Quantities in text: at most six decimals, rounded down so a stated holding is never more than the
 * real one (and a donor's stated resources are a legal donation).
 */
export function units(n: number): string {
  return boundText(n, "max");
}

/** The newest `depth` entries of a trace, newest first. */
export function traceEntries(
  node: TraceNode,
  depth: number,
  names: readonly string[],
  punishmentLoss: number,
): TraceEntry[] {
  const entries: TraceEntry[] = [];
  for (let at: TraceNode | null = node; at !== null && entries.length < depth; at = at.prev) {
    const percent = at.before > 0 ? (at.amount / at.before) * 100 : 0;
    entries.push({
      kind: TRACE_KINDS[at.kind],
      game: at.kind === START ? 0 : at.game + 1,
      round: at.kind === START ? 0 : at.round + 1,
      donor: names[at.actor],
      recipient: at.kind === START ? null : names[at.recipient],
      amount: at.amount,
      percent,
      sentence: sentence(at, percent, names, punishmentLoss),
    });
  }
  return entries;
}

function sentence(node: TraceNode, percent: number, names: readonly string[], punishmentLoss: number): string {
  const donor = names[node.actor];
  if (node.kind === START) return `${donor} did not have any previous interactions.`;
  const recipient = names[node.recipient];
  // Game 1 reads exactly as in the reference; later games name the game, since traces carry over.
  const when = node.game === 0 ? `In round ${node.round + 1}` : `In round ${node.round + 1} of game ${node.game + 1}`;
  switch (node.kind) {
    case DONATE:
      return `${when}, ${donor} donated ${percent.toFixed(2)}% of their resources to ${recipient}.`;
    case PUNISH:
      return `${when}, ${donor} punished ${recipient} by spending ${units(node.amount)} units to take away ` +
        `${units(punishmentLoss * node.amount)} units from their resources.`;
    default:
      return `${when}, ${donor} refused to play with ${recipient}.`;
  }
}
