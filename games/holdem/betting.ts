/**
 * One hand's betting as the ACPC dealer runs it (project_acpc_server/game.c: `initState`,
 * `currentPlayer`, `raiseIsValid`, `isValidAction`, `doAction`, `valueOfState`), for two players
 * indexed by ACPC position. Raise sizes are raise-to totals: the chips a player has put in the hand
 * after the raise.
 */

import { type Gamedef, MAX_ROUNDS } from "./gamedef.ts";

/** Action codes. A check is a call with nothing to call; ACPC writes both `c`. */
export const FOLD = 0;
export const CALL = 1;
export const RAISE = 2;
export const CHECK = 3;

/** ACPC's cap on actions in one round; a raise that could not be answered within it is refused. */
export const MAX_ACTIONS = 64;

export interface Betting {
  /** 0-based betting round (the last one once a hand ends in an all-in showdown). */
  round: number;
  finished: boolean;
  /** The most any position has put in. */
  maxSpent: number;
  /** The smallest legal no-limit raise-to (before the stack cap). */
  minRaiseTo: number;
  /** Chips put in, by position. */
  readonly spent: Int32Array;
  readonly folded: Uint8Array;
  /** Actions taken, by round. */
  readonly numActions: Uint8Array;
  /** Per round r and action i at [r * MAX_ACTIONS + i]: its code, the actor's total after it, the actor. */
  readonly type: Uint8Array;
  readonly to: Int32Array;
  readonly actor: Uint8Array;
}

export function newBetting(): Betting {
  return {
    round: 0,
    finished: false,
    maxSpent: 0,
    minRaiseTo: 0,
    spent: new Int32Array(2),
    folded: new Uint8Array(2),
    numActions: new Uint8Array(MAX_ROUNDS),
    type: new Uint8Array(MAX_ROUNDS * MAX_ACTIONS),
    to: new Int32Array(MAX_ROUNDS * MAX_ACTIONS),
    actor: new Uint8Array(MAX_ROUNDS * MAX_ACTIONS),
  };
}

export function copyBetting(b: Betting): Betting {
  return {
    round: b.round,
    finished: b.finished,
    maxSpent: b.maxSpent,
    minRaiseTo: b.minRaiseTo,
    spent: b.spent.slice(),
    folded: b.folded.slice(),
    numActions: b.numActions.slice(),
    type: b.type.slice(),
    to: b.to.slice(),
    actor: b.actor.slice(),
  };
}

/** A new hand: blinds posted, nobody has acted. */
export function startBetting(b: Betting, def: Gamedef): void {
  b.round = 0;
  b.finished = false;
  b.spent[0] = def.blind[0];
  b.spent[1] = def.blind[1];
  b.maxSpent = Math.max(def.blind[0], def.blind[1]);
  // A raise must call the big blind and raise by at least as much again; with no blinds, one chip.
  b.minRaiseTo = def.betting === "nolimit" ? (b.maxSpent > 0 ? 2 * b.maxSpent : 1) : 0;
  b.folded.fill(0);
  b.numActions.fill(0);
}

function canAct(b: Betting, def: Gamedef, p: number): boolean {
  return b.folded[p] === 0 && b.spent[p] < def.stack[p];
}

/** The position to act (the hand must not be over). */
export function currentPlayer(b: Betting, def: Gamedef): number {
  const n = b.numActions[b.round];
  // After the first action the turn passes on from the last actor; otherwise it starts at the
  // round's first player, skipping anyone who cannot act.
  const from = n > 0 ? b.actor[b.round * MAX_ACTIONS + n - 1] : def.firstPlayer[b.round] + 1;
  const next = (from + 1) & 1;
  return canAct(b, def, next) ? next : 1 - next;
}

function actingPlayers(b: Betting, def: Gamedef): number {
  return (canAct(b, def, 0) ? 1 : 0) + (canAct(b, def, 1) ? 1 : 0);
}

/** Players who have called the current bet (or made it) and can still act: ACPC's `numCalled`. */
function called(b: Betting, def: Gamedef): number {
  let count = 0;
  const base = b.round * MAX_ACTIONS;
  for (let i = b.numActions[b.round] - 1; i >= 0; i--) {
    const t = b.type[base + i];
    const p = b.actor[base + i];
    const live = b.spent[p] < def.stack[p] ? 1 : 0;
    if (t === RAISE) return count + live;
    if (t === CALL || t === CHECK) count += live;
  }
  return count;
}

function raisesThisRound(b: Betting): number {
  let count = 0;
  const base = b.round * MAX_ACTIONS;
  for (let i = b.numActions[b.round] - 1; i >= 0; i--) if (b.type[base + i] === RAISE) count++;
  return count;
}

/** Why the player to act may not raise, or null when it may. */
export function raiseBlocker(b: Betting, def: Gamedef): string | null {
  const max = def.maxRaises[b.round];
  if (raisesThisRound(b) >= max) return `the ${max} raise(s) allowed this round have been made`;
  if (b.numActions[b.round] + 2 > MAX_ACTIONS) return `the round has reached ACPC's cap of ${MAX_ACTIONS} actions`;
  if (actingPlayers(b, def) <= 1) return "the other player is all-in, so nobody could answer a raise";
  // ACPC would let a limit player "raise" to a stack below the bet; we refuse that as no-limit does.
  if (b.maxSpent >= def.stack[currentPlayer(b, def)]) return "your stack is not bigger than the bet to call";
  return null;
}

/** The largest raise-to for the player to act: its stack (no-limit), or the fixed raise (limit). */
export function maxRaiseTo(b: Betting, def: Gamedef): number {
  const stack = def.stack[currentPlayer(b, def)];
  return def.betting === "nolimit" ? stack : Math.min(b.maxSpent + def.raiseSize[b.round], stack);
}

/** The smallest raise-to for the player to act; all-in when its stack is short of the minimum. */
export function minRaiseTo(b: Betting, def: Gamedef): number {
  return def.betting === "nolimit" ? Math.min(b.minRaiseTo, def.stack[currentPlayer(b, def)]) : maxRaiseTo(b, def);
}

/** True when the player to act may fold: it owes chips (ACPC refuses a fold that costs nothing). */
export function mayFold(b: Betting, def: Gamedef): boolean {
  return b.spent[currentPlayer(b, def)] < b.maxSpent;
}

/**
 * Applies one legal action of the player to act (`raiseTo` only for a no-limit raise; CALL and
 * CHECK both mean ACPC's `c`) and moves the hand on: next player, next round, or the end.
 */
export function act(b: Betting, def: Gamedef, type: number, raiseTo: number): void {
  const p = currentPlayer(b, def);
  const at = b.round * MAX_ACTIONS + b.numActions[b.round]++;
  switch (type) {
    case FOLD:
      b.folded[p] = 1;
      break;
    case CALL:
    case CHECK:
      type = b.spent[p] === b.maxSpent ? CHECK : CALL;
      b.spent[p] = Math.min(b.maxSpent, def.stack[p]);
      break;
    default:
      if (def.betting === "nolimit") {
        // The next raise must call this one and raise by at least as much.
        b.minRaiseTo = Math.max(b.minRaiseTo, 2 * raiseTo - b.maxSpent);
        b.maxSpent = raiseTo;
      } else {
        b.maxSpent = Math.min(b.maxSpent + def.raiseSize[b.round], def.stack[p]);
      }
      b.spent[p] = b.maxSpent;
  }
  b.type[at] = type;
  b.to[at] = b.spent[p];
  b.actor[at] = p;
  if (b.folded[0] || b.folded[1]) {
    b.finished = true;
  } else if (called(b, def) >= actingPlayers(b, def)) {
    if (actingPlayers(b, def) > 1 && b.round + 1 < def.numRounds) {
      b.round++;
      // A new round's minimum raise is by the biggest blind (at least one chip).
      b.minRaiseTo = b.maxSpent + Math.max(1, def.blind[0], def.blind[1]);
    } else {
      // Betting is over: the last round, or everyone left is all-in, so the whole board is shown.
      b.finished = true;
      b.round = def.numRounds - 1;
    }
  }
}

/** True when the hand ended with both players' cards shown. */
export function isShowdown(b: Betting): boolean {
  return b.finished && b.folded[0] === 0 && b.folded[1] === 0;
}

/**
 * What `p` wins (or loses, negative) in a finished hand, given each position's hand value
 * (compared only at a showdown): a folder loses what it put in; at a showdown the better hand
 * wins what both matched, and a tie returns everyone's chips.
 */
export function handResult(b: Betting, p: number, value0: number, value1: number): number {
  const other = 1 - p;
  // 0 − x rather than −x, so a loss of nothing is 0, never −0 (which JSON cannot carry).
  if (b.folded[p]) return 0 - b.spent[p];
  if (b.folded[other]) return b.spent[other];
  const matched = Math.min(b.spent[0], b.spent[1]);
  const diff = p === 0 ? value0 - value1 : value1 - value0;
  return diff > 0 ? matched : diff < 0 ? 0 - matched : 0;
}
