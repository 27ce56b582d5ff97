/**
 * ACPC game definitions: the text format of the University of Alberta's dealer (`readGame` in
 * project_acpc_server/game.c), read with its defaults and checks, plus the limits of this server:
 * exactly two players, and at most seven cards in a player's hand (hole plus board).
 */

import { MAX_RANKS, MAX_SUITS } from "./cards.ts";

/** ACPC's caps. */
export const MAX_ROUNDS = 4;
export const MAX_HOLE_CARDS = 3;
export const MAX_BOARD_CARDS = 7;
/** ACPC's stack when none is given: 2^31 − 1 chips, in effect no limit. */
export const UNLIMITED_STACK = 2147483647;

export interface Gamedef {
  readonly betting: "limit" | "nolimit";
  readonly numPlayers: 2;
  readonly numRounds: number;
  /** Chips per position (UNLIMITED_STACK when the definition gives none). */
  readonly stack: readonly [number, number];
  /** Blind per position. */
  readonly blind: readonly [number, number];
  /** Limit betting: the fixed raise per round (empty under no-limit unless given). */
  readonly raiseSize: readonly number[];
  /** The position that acts first in each round, 0-based (the text is 1-based). */
  readonly firstPlayer: readonly number[];
  /** The most raises allowed in each round (ACPC's default 255). */
  readonly maxRaises: readonly number[];
  readonly numSuits: number;
  readonly numRanks: number;
  readonly numHoleCards: number;
  /** Board cards dealt at the start of each round. */
  readonly numBoardCards: readonly number[];
}

/** A game definition that cannot be read, with the line (1-based) at fault when there is one. */
export class GamedefError extends Error {
  constructor(message: string, readonly line?: number) {
    super(message);
    this.name = "GamedefError";
  }
}

/** The numeric fields as ACPC writes them. */
const FIELD_NAMES = [
  "numPlayers",
  "numRounds",
  "stack",
  "blind",
  "raiseSize",
  "firstPlayer",
  "maxRaises",
  "numSuits",
  "numRanks",
  "numHoleCards",
  "numBoardCards",
] as const;
type Field = (typeof FIELD_NAMES)[number];
/** The fields by their lower-case name (a Map: the key is the definition's text). */
const FIELDS: ReadonlyMap<string, Field> = new Map(FIELD_NAMES.map((f) => [f.toLowerCase(), f]));

const KNOWN = ["limit", "nolimit", ...FIELD_NAMES].map((f) => `\`${f}\``).join(", ");

interface Read {
  readonly values: number[];
  readonly line: number;
  readonly text: string;
}

function clip(text: string): string {
  return text.length > 60 ? text.slice(0, 57) + "..." : text;
}

/**
 * Reads a game definition: lines between `GAMEDEF` and `END GAMEDEF` (both optional, as for the
 * ACPC dealer), names case-insensitive, `=` optional, `#` starting a comment line. Unlike the
 * dealer it refuses unknown lines and repeated fields, so a typo cannot pass silently.
 */
export function parseGamedef(text: string): Gamedef {
  let betting: "limit" | "nolimit" | undefined;
  let bettingLine = 0;
  const read = new Map<Field, Read>();
  const lines = text.split(/\r?\n/);
  let ended = false;
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const where = `line ${lineNo} (\`${clip(line)}\`)`;
    if (ended) throw new GamedefError(`${where}: nothing may follow \`END GAMEDEF\``, lineNo);
    const lower = line.toLowerCase();
    if (/^end\s+gamedef$/.test(lower)) {
      ended = true;
      continue;
    }
    if (lower === "gamedef") continue;
    if (lower === "limit" || lower === "nolimit") {
      if (betting !== undefined) {
        throw new GamedefError(`${where}: the betting type is already given on line ${bettingLine}`, lineNo);
      }
      betting = lower;
      bettingLine = lineNo;
      continue;
    }
    const m = /^([a-z]+)\s*(?:=\s*)?(.*)$/i.exec(line);
    const field = m ? FIELDS.get(m[1].toLowerCase()) : undefined;
    if (!m || field === undefined) {
      throw new GamedefError(`${where}: not a game definition line (known: ${KNOWN})`, lineNo);
    }
    const earlier = read.get(field);
    if (earlier) throw new GamedefError(`${where}: \`${field}\` is already given on line ${earlier.line}`, lineNo);
    const tokens = m[2].split(/[\s=]+/).filter((t) => t !== "");
    const bad = tokens.find((t) => !/^\d+$/.test(t));
    if (bad !== undefined) {
      throw new GamedefError(`${where}: \`${field}\` takes whole numbers of 0 or more, got \`${bad}\``, lineNo);
    }
    if (tokens.length === 0) throw new GamedefError(`${where}: \`${field}\` needs a value`, lineNo);
    read.set(field, { values: tokens.map(Number), line: lineNo, text: where });
  }
  return check(betting ?? "limit", read);
}

function check(betting: "limit" | "nolimit", read: Map<Field, Read>): Gamedef {
  const fail = (field: Field, problem: string): never => {
    const at = read.get(field);
    throw new GamedefError(at ? `${at.text}: ${problem}` : problem, at?.line);
  };
  /** A field's values: exactly `count` of them (or, with `defaults`, at most that many, padded). */
  const list = (field: Field, count: number, what: string, defaults?: number): number[] => {
    const at = read.get(field);
    if (!at) {
      if (defaults === undefined) fail(field, `no \`${field}\` line: it gives ${what}`);
      return new Array(count).fill(defaults);
    }
    const n = at.values.length;
    if (n > count || (defaults === undefined && n < count)) {
      fail(field, `\`${field}\` takes ${defaults === undefined ? "" : "at most "}${count} value(s), ${what}; got ${n}`);
    }
    return [...at.values, ...new Array(count - n).fill(defaults)];
  };
  const single = (field: Field, min: number, max: number, why: string): number => {
    const [value] = list(field, 1, "one number");
    if (value < min || value > max) fail(field, `\`${field}\` must be ${range(min, max)}${why}, got ${value}`);
    return value;
  };

  const numPlayers = single("numPlayers", 2, 2, " (this server plays heads-up poker only)");
  const numRounds = single("numRounds", 1, MAX_ROUNDS, " (the ACPC limit)");
  const perPlayer = `one per player (${numPlayers})`;
  const perRound = `one per round (${numRounds})`;
  const stack = list("stack", numPlayers, perPlayer, UNLIMITED_STACK);
  const blind = list("blind", numPlayers, perPlayer);
  stack.forEach((s, p) => {
    if (s < 1) fail("stack", `the stack of player ${p + 1} must be at least 1 chip`);
    if (blind[p] >= s) {
      fail(
        "blind",
        `the blind of player ${p + 1} (${blind[p]}) must be smaller than its stack (${s}) so the hand has a decision`,
      );
    }
  });
  const raiseSize = betting === "limit" || read.has("raiseSize")
    ? list("raiseSize", numRounds, `the fixed raise of each round, ${perRound}`)
    : [];
  if (raiseSize.some((r) => r < 1)) fail("raiseSize", "every raise size must be at least 1 chip");
  const firstPlayer = list("firstPlayer", numRounds, `the first to act in each round, ${perRound}`, 1);
  firstPlayer.forEach((p, r) => {
    if (p < 1 || p > numPlayers) fail("firstPlayer", `the first player of round ${r + 1} must be 1 or 2, got ${p}`);
  });
  const maxRaises = list("maxRaises", numRounds, `the most raises in each round, ${perRound}`, 255);
  if (maxRaises.some((r) => r > 255)) fail("maxRaises", "a round allows at most 255 raises (the ACPC limit)");
  const numSuits = single("numSuits", 1, MAX_SUITS, "");
  const numRanks = single("numRanks", 1, MAX_RANKS, "");
  const numHoleCards = single("numHoleCards", 1, MAX_HOLE_CARDS, " (the ACPC limit)");
  const numBoardCards = list("numBoardCards", numRounds, `the board cards dealt in each round, ${perRound}`);
  const board = numBoardCards.reduce((a, b) => a + b, 0);
  if (board > MAX_BOARD_CARDS) fail("numBoardCards", `at most ${MAX_BOARD_CARDS} board cards in all (the ACPC limit)`);
  if (numHoleCards + board > 7) {
    fail("numBoardCards", `a hand may hold at most 7 cards (hole plus board), got ${numHoleCards} + ${board}`);
  }
  if (numPlayers * numHoleCards + board > numSuits * numRanks) {
    fail(
      "numBoardCards",
      `the deck of ${
        numSuits * numRanks
      } cards is too small for ${numPlayers} × ${numHoleCards} hole and ${board} board cards`,
    );
  }
  return {
    betting,
    numPlayers: 2,
    numRounds,
    stack: [stack[0], stack[1]],
    blind: [blind[0], blind[1]],
    raiseSize,
    firstPlayer: firstPlayer.map((p) => p - 1),
    maxRaises,
    numSuits,
    numRanks,
    numHoleCards,
    numBoardCards,
  };
}

function range(min: number, max: number): string {
  return min === max ? String(min) : `from ${min} to ${max}`;
}

/** A definition as ACPC's `printGame` writes it. */
export function renderGamedef(def: Gamedef): string {
  const lines = ["GAMEDEF", def.betting, `numPlayers = ${def.numPlayers}`, `numRounds = ${def.numRounds}`];
  if (def.stack.some((s) => s !== UNLIMITED_STACK)) lines.push(`stack = ${def.stack.join(" ")}`);
  lines.push(`blind = ${def.blind.join(" ")}`);
  if (def.raiseSize.length > 0) lines.push(`raiseSize = ${def.raiseSize.join(" ")}`);
  if (def.firstPlayer.some((p) => p !== 0)) lines.push(`firstPlayer = ${def.firstPlayer.map((p) => p + 1).join(" ")}`);
  if (def.maxRaises.some((r) => r !== 255)) lines.push(`maxRaises = ${def.maxRaises.join(" ")}`);
  lines.push(
    `numSuits = ${def.numSuits}`,
    `numRanks = ${def.numRanks}`,
    `numHoleCards = ${def.numHoleCards}`,
    `numBoardCards = ${def.numBoardCards.join(" ")}`,
    "END GAMEDEF",
  );
  return lines.join("\n") + "\n";
}

/** Heads-up no-limit hold'em as ACPC and OpenSpiel define it (blinds 50/100, 20,000-chip stacks). */
export const HUNL_GAMEDEF = `GAMEDEF
nolimit
numPlayers = 2
numRounds = 4
stack = 20000 20000
blind = 100 50
firstPlayer = 2 1 1 1
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
`;

/** Heads-up limit hold'em as ACPC defines it (blinds 5/10, bets 10 then 20, capped raises, no stacks). */
export const HULHE_GAMEDEF = `GAMEDEF
limit
numPlayers = 2
numRounds = 4
blind = 10 5
raiseSize = 10 10 20 20
firstPlayer = 2 1 1 1
maxRaises = 3 4 4 4
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
`;

/** OpenSpiel universal_poker's default test game: one hole card, one board card, six ranks. */
export const SMALL_GAMEDEF = `GAMEDEF
nolimit
numPlayers = 2
numRounds = 2
stack = 1200 1200
blind = 100 100
firstPlayer = 1 1
numSuits = 4
numRanks = 6
numHoleCards = 1
numBoardCards = 0 1
END GAMEDEF
`;
