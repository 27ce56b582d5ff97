import { z } from "zod";
import { ActionError, type ActionSpace, describeSpace, type FixedForm, parseInput } from "../core/action.ts";
import { defineGame, type Viewer } from "../core/game.ts";
import { idProblem } from "../core/numeric.ts";
import { seatName } from "../core/text.ts";

/**
 * Tic-tac-toe as TextArena plays it: cells 0–8 row by row, player 0 moves first, three in a row
 * wins. The only choice the config offers is which mark the first player writes.
 */

export const MARKS = ["O", "X"] as const;
export type Mark = (typeof MARKS)[number];

export const tttConfig = z.strictObject({
  firstMark: z.enum(MARKS).default("O")
    .describe("the mark of player 0, who moves first (TextArena: O; OpenSpiel: X); player 1 writes the other"),
});
export type TttConfig = z.infer<typeof tttConfig>;

export interface TttAction {
  readonly type: "mark";
  readonly cell: number;
}

export interface TttState {
  readonly config: TttConfig;
  /** 0 empty, 1 player 0's mark, 2 player 1's mark; row-major. */
  readonly board: Uint8Array;
  /** Marks placed so far; the seat to move is `turn % 2`. */
  turn: number;
  /** Bit i set while cell i is empty. */
  empty: number;
  /** Cells in the order they were marked; the first `turn` entries count. */
  readonly history: Uint8Array;
  /** The seat with three in a row, or -1. */
  winner: number;
}

export interface TttObservation {
  readonly game: "tic-tac-toe";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  /** Player 0's mark, then player 1's. */
  readonly marks: [Mark, Mark];
  /** Each cell's mark, or null when empty. */
  readonly board: (Mark | null)[];
  /** The board drawn as text, empty cells showing their number. */
  readonly picture: string;
  /** The seat to move (null once over). */
  readonly toMove: number | null;
  /** Empty cells, in order (empty once over). */
  readonly available: number[];
  /** Cells in the order they were marked. */
  readonly moves: number[];
  readonly phase: "playing" | "over";
  /** The winning seat; null while playing or after a draw. */
  readonly winner: number | null;
  readonly returns: [number, number];
}

const LINES = [
  [0, 1, 2],
  [3, 4, 5],
  [6, 7, 8],
  [0, 3, 6],
  [1, 4, 7],
  [2, 5, 8],
  [0, 4, 8],
  [2, 4, 6],
] as const;
/** The lines through each cell, so a move checks only those. */
const LINES_THROUGH: readonly (readonly (readonly number[])[])[] = Array.from(
  { length: 9 },
  (_, cell) => LINES.filter((line) => (line as readonly number[]).includes(cell)),
);
const FULL = 0x1ff;

const MARK_FORMS: readonly FixedForm<TttAction>[] = Array.from(
  { length: 9 },
  (_, cell) => Object.freeze({ kind: "fixed" as const, action: Object.freeze({ type: "mark" as const, cell }) }),
);
// One frozen space per set of empty cells, built on first use: legal() never allocates after that.
const SPACES: (ActionSpace<TttAction> | undefined)[] = new Array(FULL + 1);
const NOTHING: ActionSpace<TttAction> = Object.freeze([]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const NO_REWARD = Object.freeze([0, 0]);
const WIN = [Object.freeze([1, -1]), Object.freeze([-1, 1])];
const NO_CHANCE: readonly number[] = Object.freeze([]);
/** The information-state tensor's shape: OpenSpiel's tic_tac_toe ObservationTensorShape, planes × rows × columns. */
const TENSOR_SHAPE: readonly number[] = Object.freeze([3, 3, 3]);
/** The planes in OpenSpiel's CellState order (kEmpty, kNought, kCross), its player 1 writing noughts. */
const EMPTY_PLANE = 0;
const SECOND_PLANE = 1;
const FIRST_PLANE = 2;
// Where actionOf checks an id against the mask; it never outlives the call.
const scratchMask = new Uint8Array(9);

function spaceFor(empty: number): ActionSpace<TttAction> {
  let space = SPACES[empty];
  if (space === undefined) {
    space = Object.freeze(MARK_FORMS.filter((_, cell) => empty & (1 << cell)));
    SPACES[empty] = space;
  }
  return space;
}

function isOver(state: TttState): boolean {
  return state.winner >= 0 || state.empty === 0;
}

function marksOf(config: TttConfig): [Mark, Mark] {
  return config.firstMark === "O" ? ["O", "X"] : ["X", "O"];
}

/** The board as TextArena draws it: ` O | 1 | 2 ` rows between `---+---+---` rules. */
export function picture(board: readonly (Mark | null)[]): string {
  const cell = (i: number) => board[i] ?? String(i);
  const rows = [0, 3, 6].map((r) => ` ${cell(r)} | ${cell(r + 1)} | ${cell(r + 2)} `);
  return rows.join("\n---+---+---\n");
}

const CELL_ONLY = /^\s*(?:mark\s*:?\s*)?\[?\s*(?:mark\s*:?\s*)?(-?\d+)\s*\]?\s*\.?\s*$/i;
const BRACKETED = /\[\s*(?:mark\s*:?\s*)?(-?\d+)\s*\]/i;

/**
 * `4`, `[4]`, `mark 4`, `[mark 4]` (the listed form as TextArena's brackets wrap it), or an answer holding `[4]` or
 * `[mark 4]` somewhere (TextArena reads the first bracketed number).
 */
function cellAlias(text: string): number | undefined {
  const m = CELL_ONLY.exec(text) ?? BRACKETED.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** A mark at `cell`, or why it cannot be made. */
function markAt(state: TttState, space: ActionSpace<TttAction>, cell: number): TttAction | ActionError {
  const legal = describeSpace(space);
  if (!Number.isInteger(cell) || cell < 0 || cell > 8) {
    return new ActionError("illegal_action", `there is no cell ${cell}: cells are numbered 0 to 8`, legal);
  }
  if (!(state.empty & (1 << cell))) {
    return new ActionError("illegal_action", `cell ${cell} is already marked`, legal);
  }
  return MARK_FORMS[cell].action;
}

/**
 * The numeric face, as OpenSpiel's tic_tac_toe: action id = the cell (0–8, row by row), 9 ids; the tensor is
 * OpenSpiel's observation tensor, shape [3, 3, 3]: plane 0 marks the empty cells, plane 1 player 1's marks
 * and plane 2 player 0's (OpenSpiel's noughts and crosses: its player 0 writes X), whichever mark the config
 * gives them, so both variants share one encoding. The board is the whole information state (the seat to
 * move follows from how many marks there are), so the tensor has perfect recall without the move order.
 */
export const ticTacToe = defineGame<TttState, TttAction, TttConfig, TttObservation>({
  id: "tic-tac-toe",
  version: 1,
  title: "Tic-tac-toe",
  summary: "Two players take turns writing their mark in an empty cell of a 3 by 3 grid; the first to fill " +
    "a row, a column or a diagonal with their own mark wins (+1, the other −1), and a full grid with no line " +
    "is a draw (0 each). Cells are numbered 0 to 8 row by row. With perfect play every game is a draw.",
  utility: "zero-sum",
  chanceMode: "deterministic",
  information: "perfect",
  dynamics: "sequential",
  answerExample: "mark 4",
  caps: {},
  seats: { min: 2, max: 2 },
  schema: tttConfig,
  variants: {
    textarena: { description: "player 0 writes O and moves first, as in TextArena, SPIRAL and MARS", config: {} },
    openspiel: { description: "player 0 writes X and moves first, as in OpenSpiel", config: { firstMark: "X" } },
  },
  defaultVariant: "textarena",

  seatCount: () => 2,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const [first, second] = marksOf(config);
    return "Tic-tac-toe for two players on a 3 by 3 grid whose cells are numbered 0 to 8, left to right and " +
      `top to bottom (0 1 2 on the top row, 3 4 5 in the middle, 6 7 8 at the bottom). Player 0 writes ${first} ` +
      `and moves first; player 1 writes ${second}. On your turn you mark one empty cell. The first player with ` +
      "three of their own marks in a row, a column or a diagonal wins: the winner scores 1 and the loser −1. If " +
      "all nine cells fill up with no such line, the game is a draw and both score 0. Name your cell as a " +
      'number in brackets such as [4], or as JSON {"type":"mark","cell":4}.';
  },

  start(config) {
    return { config, board: new Uint8Array(9), turn: 0, empty: FULL, winner: -1, history: new Uint8Array(9) };
  },

  chance: () => NO_CHANCE,

  resolve() {
    throw new RangeError("tic-tac-toe has no chance events");
  },

  toAct: (state) => (isOver(state) ? NOBODY : SEAT[state.turn & 1]),

  legal(state, seat) {
    if (isOver(state) || seat !== (state.turn & 1)) return NOTHING;
    return spaceFor(state.empty);
  },

  play(state, moves) {
    const seat = state.turn & 1;
    const cell = moves[seat]!.cell;
    const mark = seat + 1;
    state.board[cell] = mark;
    state.empty &= ~(1 << cell);
    state.history[state.turn++] = cell;
    for (const line of LINES_THROUGH[cell]) {
      if (state.board[line[0]] === mark && state.board[line[1]] === mark && state.board[line[2]] === mark) {
        state.winner = seat;
        return WIN[seat];
      }
    }
    return NO_REWARD;
  },

  returns: (state) => (state.winner >= 0 ? [...WIN[state.winner]] : [0, 0]),

  observe(state, viewer: Viewer) {
    if (viewer !== "public" && viewer !== 0 && viewer !== 1) throw new RangeError(`no seat ${viewer} in tic-tac-toe`);
    const marks = marksOf(state.config);
    const board = Array.from(state.board, (m) => (m === 0 ? null : marks[m - 1]));
    const over = isOver(state);
    return {
      game: "tic-tac-toe",
      seat: viewer,
      marks,
      board,
      picture: picture(board),
      toMove: over ? null : state.turn & 1,
      available: over ? [] : board.flatMap((m, i) => (m === null ? [i] : [])),
      moves: Array.from(state.history.subarray(0, state.turn)),
      phase: over ? "over" : "playing",
      winner: state.winner >= 0 ? state.winner : null,
      returns: state.winner >= 0 ? [...WIN[state.winner]] as [number, number] : [0, 0],
    };
  },

  describe(obs) {
    const spectator = obs.seat === "public";
    const lines: string[] = [];
    lines.push(
      spectator
        ? `You are watching: player 0 writes ${obs.marks[0]}, player 1 writes ${obs.marks[1]}.`
        : `You are player ${obs.seat} and write ${obs.marks[obs.seat as number]}; the other player writes ` +
          `${obs.marks[1 - (obs.seat as number)]}.`,
    );
    lines.push("The board (numbers are empty cells):", "", obs.picture, "");
    if (obs.phase === "over") {
      const who = (seat: number) => seatName(seat, obs.seat);
      lines.push(obs.winner === null ? "The game is over: a draw." : `The game is over: ${who(obs.winner)} won.`);
    } else if (spectator || obs.toMove !== obs.seat) {
      lines.push(`Player ${obs.toMove} (${obs.marks[obs.toMove!]}) is to move.`);
    } else {
      lines.push(`Your move. Empty cells: ${obs.available.map((c) => `[${c}]`).join(", ")}. Answer with one of them.`);
    }
    return lines.join("\n");
  },

  parse(input, state, seat): TttAction | ActionError {
    const space = ticTacToe.legal(state, seat);
    if (space.length > 0 && typeof input === "object" && input !== null && !Array.isArray(input)) {
      // A well-formed mark on a taken or missing cell gets a reason that names the cell.
      const { type, cell } = input as Record<string, unknown>;
      if (type === "mark" && typeof cell === "number" && Object.keys(input).length === 2) {
        return markAt(state, space, cell);
      }
    }
    return parseInput(space, input, (text) => {
      const cell = cellAlias(text);
      return cell === undefined ? undefined : markAt(state, space, cell);
    });
  },

  clone: (state) => ({ ...state, board: state.board.slice(), history: state.history.slice() }),

  actionCount: () => 9,

  actionId: (action) => action.cell,

  actionOf(id, state, seat) {
    ticTacToe.legalMask(state, seat, scratchMask);
    return idProblem(id, scratchMask) ?? MARK_FORMS[id].action;
  },

  legalMask(state, seat, out) {
    const empty = isOver(state) || seat !== (state.turn & 1) ? 0 : state.empty;
    for (let cell = 0; cell < 9; cell++) out[cell] = (empty >> cell) & 1;
  },

  observationShape: () => TENSOR_SHAPE,

  encode(obs, out) {
    out.fill(0);
    const first = obs.marks[0];
    for (let cell = 0; cell < 9; cell++) {
      const mark = obs.board[cell];
      const plane = mark === null ? EMPTY_PLANE : mark === first ? FIRST_PLANE : SECOND_PLANE;
      out[plane * 9 + cell] = 1;
    }
  },
});
