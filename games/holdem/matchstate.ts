/**
 * The ACPC dealer's text protocol (project_acpc_server/game.c: `printMatchState`,
 * `readMatchState`, `readAction`): `MATCHSTATE:<position>:<hand>:<betting>:<cards>`, where the
 * betting is the hand's actions round by round (`cr300c/r600f`) and the cards are each position's
 * hole cards, `|`-separated, followed by each round's board cards, `/`-separated
 * (`Ah2c|/Kd7s3h/Tc`). A bot answers with the line it received, `:`, and an action.
 */

import {
  act,
  type Betting,
  CALL,
  FOLD,
  MAX_ACTIONS,
  maxRaiseTo,
  mayFold,
  minRaiseTo,
  newBetting,
  RAISE,
  raiseBlocker,
  startBetting,
} from "./betting.ts";
import { cardsText, readCard } from "./cards.ts";
import type { Gamedef } from "./gamedef.ts";

/** One player's view of a hand, as a MATCHSTATE line carries it. */
export interface MatchState {
  /** The viewer's ACPC position in this hand. */
  readonly position: number;
  /** 0-based hand number. */
  readonly hand: number;
  readonly betting: Betting;
  /** Hole cards by position: the viewer's, and the other's only after a showdown (else null). */
  readonly holeCards: readonly [readonly number[] | null, readonly number[] | null];
  /** The board dealt through the betting's round. */
  readonly board: readonly number[];
}

/** An ACPC action: a code of betting.ts and, for a no-limit raise, its raise-to. */
export interface AcpcAction {
  readonly type: number;
  readonly size: number;
}

/** A MATCHSTATE line or ACPC action that cannot be read, with why. */
export class MatchStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MatchStateError";
  }
}

/** The hand's actions in ACPC's form: `f`, `c` (call or check), `r` (+ raise-to in no-limit), rounds split by `/`. */
export function bettingText(b: Betting, def: Gamedef): string {
  let text = "";
  for (let r = 0; r <= b.round; r++) {
    if (r > 0) text += "/";
    for (let i = 0; i < b.numActions[r]; i++) {
      const at = r * MAX_ACTIONS + i;
      const type = b.type[at];
      text += type === FOLD ? "f" : type === RAISE ? (def.betting === "nolimit" ? `r${b.to[at]}` : "r") : "c";
    }
  }
  return text;
}

export function renderMatchState(def: Gamedef, state: MatchState): string {
  return matchStateText(
    def,
    state.position,
    state.hand,
    bettingText(state.betting, def),
    state.betting.round,
    state.holeCards,
    state.board,
  );
}

/** A MATCHSTATE line from its parts: the betting as ACPC text and the round it reached. */
export function matchStateText(
  def: Gamedef,
  position: number,
  hand: number,
  betting: string,
  round: number,
  holeCards: readonly (readonly number[] | null)[],
  board: ArrayLike<number>,
): string {
  let cards = "";
  for (let p = 0; p < 2; p++) {
    if (p > 0) cards += "|";
    const hole = holeCards[p];
    if (hole) cards += cardsText(hole);
  }
  let from = 0;
  for (let r = 0; r <= round; r++) {
    if (r > 0) cards += "/";
    cards += cardsText(board, from, from + def.numBoardCards[r]);
    from += def.numBoardCards[r];
  }
  return `MATCHSTATE:${position}:${hand}:${betting}:${cards}`;
}

/**
 * Why an ACPC action is not legal for the player to act (ACPC's `isValidAction` without its
 * fixing of sizes), or null when it is.
 */
function invalidAction(b: Betting, def: Gamedef, action: AcpcAction): string | null {
  if (b.finished) return "the hand is over";
  if (action.type === FOLD && !mayFold(b, def)) return "folding is not allowed when nothing is owed";
  if (action.type !== RAISE) return null;
  const blocker = raiseBlocker(b, def);
  if (blocker) return `no raise is allowed: ${blocker}`;
  if (def.betting === "limit") return null;
  const min = minRaiseTo(b, def);
  const max = maxRaiseTo(b, def);
  if (action.size < min || action.size > max) {
    return `a raise must be to ${min === max ? min : `between ${min} and ${max}`}, not ${action.size}`;
  }
  return null;
}

/** ACPC's action letters (a Map: the key is the sender's character). */
const ACTION_CODES: ReadonlyMap<string, number> = new Map([
  ["f", FOLD],
  ["c", CALL],
  ["k", CALL],
  ["r", RAISE],
  ["b", RAISE],
]);

/**
 * Reads one ACPC action at `text[at]`: `f`, `c`/`k`, or `r`/`b` (either case), a no-limit raise
 * followed by its raise-to. Returns the action and the characters read, or an error message.
 */
function readAction(text: string, at: number, def: Gamedef): { action: AcpcAction; length: number } | string {
  const type = ACTION_CODES.get(text.charAt(at).toLowerCase());
  if (type === undefined) return `\`${text.charAt(at)}\` is not an ACPC action (f, c, k, r or b)`;
  if (type !== RAISE || def.betting === "limit") return { action: { type, size: 0 }, length: 1 };
  const digits = /^\d+/.exec(text.slice(at + 1));
  if (!digits) return "a no-limit raise needs its raise-to total, e.g. r300";
  return { action: { type, size: Number(digits[0]) }, length: 1 + digits[0].length };
}

/** One whole ACPC action (`f`, `c`, `k`, `r300`, `b300`, or `r` in limit), or an error message. */
export function parseAcpcAction(text: string, def: Gamedef): AcpcAction | string {
  if (text.length === 0) return "the action is empty";
  const read = readAction(text, 0, def);
  if (typeof read === "string") return read;
  if (read.length !== text.length) {
    return def.betting === "limit" && /^[rb]\d+$/i.test(text)
      ? "limit raises have no size in ACPC: write r"
      : `unexpected \`${text.slice(read.length)}\` after the action`;
  }
  return read.action;
}

/** Plays a betting string on a fresh hand, checking every action as the dealer would. */
function replayBetting(text: string, def: Gamedef): Betting {
  const b = newBetting();
  startBetting(b, def);
  // The round the text has reached: one `/` per round the betting has closed (every round, after an all-in).
  let round = 0;
  for (let at = 0; at < text.length;) {
    if (text[at] === "/") {
      if (round >= b.round) {
        throw new MatchStateError(`the \`/\` at character ${at + 1} of the betting comes before its round is over`);
      }
      round++;
      at++;
      continue;
    }
    const read = readAction(text, at, def);
    if (typeof read === "string") throw new MatchStateError(`character ${at + 1} of the betting: ${read}`);
    const written = `\`${text.slice(at, at + read.length)}\` at character ${at + 1} of the betting`;
    const invalid = invalidAction(b, def, read.action);
    if (invalid) throw new MatchStateError(`${written}: ${invalid}`);
    if (round !== b.round) throw new MatchStateError(`${written}: round ${b.round + 1} needs a \`/\` before it`);
    act(b, def, read.action.type, read.action.size);
    at += read.length;
  }
  if (round !== b.round) {
    throw new MatchStateError(`the betting reaches round ${b.round + 1}: it must end with a \`/\``);
  }
  return b;
}

/** Reads `count` cards at `text[at]`, or fewer when the text has no more cards there. */
function readCards(text: string, at: number, count: number): number[] {
  const cards: number[] = [];
  while (cards.length < count) {
    const card = readCard(text, at + 2 * cards.length);
    if (card < 0) break;
    cards.push(card);
  }
  return cards;
}

/** Reads a MATCHSTATE line (without a trailing action); throws MatchStateError saying what is wrong. */
export function parseMatchState(line: string, def: Gamedef): MatchState {
  const m = /^MATCHSTATE:(\d+):(\d+):([^:]*):([^:]*)$/.exec(line.trim());
  if (!m) throw new MatchStateError("a MATCHSTATE line reads MATCHSTATE:<position>:<hand>:<betting>:<cards>");
  const position = Number(m[1]);
  if (position > 1) throw new MatchStateError(`position ${position} does not exist in a two-player game`);
  const betting = replayBetting(m[3], def);
  const text = m[4];
  let at = 0;
  const holeCards: (number[] | null)[] = [];
  for (let p = 0; p < 2; p++) {
    if (p > 0) {
      if (text[at] !== "|") throw new MatchStateError(`the cards need \`|\` between the players' hole cards`);
      at++;
    }
    // The last position's cards run straight into the first round's board cards (when it has
    // any), so its share is what the board leaves: none or a full hand.
    const run = readCards(text, at, p === 0 ? def.numHoleCards : def.numHoleCards + def.numBoardCards[0]);
    const hole = p === 0 ? run : run.slice(0, Math.max(0, run.length - def.numBoardCards[0]));
    if (hole.length !== 0 && hole.length !== def.numHoleCards) {
      throw new MatchStateError(`position ${p} shows ${hole.length} hole card(s); a hand has ${def.numHoleCards}`);
    }
    holeCards.push(hole.length > 0 ? hole : null);
    at += 2 * hole.length;
  }
  const board: number[] = [];
  for (let r = 0; r <= betting.round; r++) {
    if (r > 0) {
      if (text[at] !== "/") throw new MatchStateError(`the board needs \`/\` before round ${r + 1}'s cards`);
      at++;
    }
    const cards = readCards(text, at, def.numBoardCards[r]);
    if (cards.length !== def.numBoardCards[r]) {
      throw new MatchStateError(
        `round ${r + 1} deals ${def.numBoardCards[r]} board card(s), the line shows ${cards.length}`,
      );
    }
    board.push(...cards);
    at += 2 * cards.length;
  }
  if (at !== text.length) throw new MatchStateError(`unexpected \`${text.slice(at)}\` after the cards`);
  const all = [...(holeCards[0] ?? []), ...(holeCards[1] ?? []), ...board];
  const foreign = all.find((c) => c >> 2 >= def.numRanks || (c & 3) >= def.numSuits);
  if (foreign !== undefined) throw new MatchStateError(`${cardsText([foreign])} is not in this game's deck`);
  const twice = all.find((c, i) => all.indexOf(c) !== i);
  if (twice !== undefined) throw new MatchStateError(`${cardsText([twice])} appears twice`);
  return { position, hand: Number(m[2]), betting, holeCards: [holeCards[0], holeCards[1]], board };
}

/** A bot's reply: the MATCHSTATE line it answers and its action (still to be checked against the state). */
export interface Reply {
  readonly state: MatchState;
  readonly action: AcpcAction;
}

/** Reads `MATCHSTATE:...:<action>`; throws MatchStateError saying what is wrong. */
export function parseReply(line: string, def: Gamedef): Reply {
  const trimmed = line.trim();
  const colon = trimmed.lastIndexOf(":");
  if (trimmed.split(":").length !== 6) {
    throw new MatchStateError(
      "a reply is the MATCHSTATE line received, `:`, and an action, e.g. MATCHSTATE:1:3:cr300:|Ks8d:r900",
    );
  }
  const state = parseMatchState(trimmed.slice(0, colon), def);
  const action = parseAcpcAction(trimmed.slice(colon + 1), def);
  if (typeof action === "string") throw new MatchStateError(action);
  return { state, action };
}
