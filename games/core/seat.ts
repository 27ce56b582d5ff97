import type { Action, ActionError, ActionSpace } from "./action.ts";
import type { Episode } from "./episode.ts";

/** What a seat is shown when it must move: nothing beyond its own observation and legal actions. */
export interface Turn<A extends Action = Action, O = unknown> {
  readonly seat: number;
  readonly legal: ActionSpace<A>;
  /** The seat's observation, built on first call (random play never needs it). */
  observation(): O;
  /** The numeric face, for seats that decide on tensors: the seat's information-state tensor, into `out`. */
  encode(out: Float32Array): Float32Array;
  /** The seat's legal action ids, as a mask into `out`. */
  legalMask(out: Uint8Array): Uint8Array;
  /** The action an id stands for now (or why it is not legal). */
  actionOf(id: number): A | ActionError;
}

/**
 * Whoever sits in a seat, as the episode engine asks it: a built-in strategy answers at once, a policy
 * or a remote player with a promise. Either way the answer must be legal.
 */
export interface Seat<A extends Action = Action, O = unknown> {
  decide(turn: Turn<A, O>): A | Promise<A>;
}

/** Hears every step: who moved what, and the step's rewards. */
export type StepListener = (moves: readonly (Action | undefined)[], rewards: readonly number[]) => void;

/** A turn of `episode` for `seat`, its observation built lazily. */
export function turnOf<O>(episode: Episode<unknown, O>, seat: number): Turn<Action, O> {
  let observed: O | undefined;
  return {
    seat,
    legal: episode.legal(seat),
    observation: () => observed ??= episode.observe(seat),
    encode: (out) => episode.encode(seat, out),
    legalMask: (out) => episode.legalMask(seat, out),
    actionOf: (id) => episode.actionOf(id, seat),
  };
}

/**
 * Plays `episode` to its end with one seat per game seat. Synchronous while every seat answers at once
 * (built-ins: millions of steps a second); only a seat that returns a promise makes it asynchronous.
 */
export function playEpisode(
  episode: Episode,
  seats: readonly Seat[],
  onStep?: StepListener,
): void | Promise<void> {
  const moves: (Action | undefined)[] = new Array(seats.length).fill(undefined);
  const go = (): void | Promise<void> => {
    while (!episode.over) {
      const toAct = episode.toAct;
      for (let i = 0; i < toAct.length; i++) {
        const seat = toAct[i];
        if (moves[seat] !== undefined) continue;
        const answer = seats[seat].decide(turnOf(episode, seat));
        if (answer instanceof Promise) {
          return answer.then((action) => {
            moves[seat] = action;
            return go();
          });
        }
        moves[seat] = answer;
      }
      const rewards = episode.step(moves);
      onStep?.(moves, rewards);
      for (let i = 0; i < toAct.length; i++) moves[toAct[i]] = undefined;
    }
  };
  return go();
}
