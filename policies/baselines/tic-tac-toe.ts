import type { FixedForm } from "../../games/core/action.ts";
import type { TttAction, TttObservation } from "../../games/tic-tac-toe/game.ts";
import type { Strategy, StrategyContext, StrategyDef } from "../strategy.ts";

/** A perfect tic-tac-toe player: exact minimax over every reachable board, solved once and cached. */

type TttContext = StrategyContext<TttAction, TttObservation>;

const LINES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 3, 6, 1, 4, 7, 2, 5, 8, 0, 4, 8, 2, 4, 6];
const POW3 = [1, 3, 9, 27, 81, 243, 729, 2187, 6561];
const UNSOLVED = -128;

/**
 * Best score for the side to move, by board key (base 3: 0 empty, 1 first mover's mark, 2 the
 * other's). A win with k empty cells left scores k + 1, so faster wins and slower losses rank
 * higher; a draw scores 0; a loss is the negated win.
 */
let table: Int8Array | undefined;

function wins(board: Uint8Array, mark: number): boolean {
  for (let i = 0; i < LINES.length; i += 3) {
    if (board[LINES[i]] === mark && board[LINES[i + 1]] === mark && board[LINES[i + 2]] === mark) return true;
  }
  return false;
}

function solve(board: Uint8Array, key: number, empties: number, memo: Int8Array): number {
  if (memo[key] !== UNSOLVED) return memo[key];
  const mark = empties % 2 === 1 ? 1 : 2;
  let best = -127;
  for (let cell = 0; cell < 9; cell++) {
    if (board[cell] !== 0) continue;
    board[cell] = mark;
    const score = moveScore(board, key + mark * POW3[cell], empties - 1, mark, memo);
    board[cell] = 0;
    if (score > best) best = score;
  }
  memo[key] = best;
  return best;
}

/** The mover's score after writing `mark` (board already updated, `empties` left). */
function moveScore(board: Uint8Array, key: number, empties: number, mark: number, memo: Int8Array): number {
  if (wins(board, mark)) return empties + 1;
  if (empties === 0) return 0;
  return -solve(board, key, empties, memo);
}

function solved(): Int8Array {
  if (table === undefined) {
    table = new Int8Array(POW3[8] * 3).fill(UNSOLVED);
    solve(new Uint8Array(9), 0, 9, table);
  }
  return table;
}

/** The legal marks that score best for the seat to move. */
export function bestMarks(ctx: TttContext): TttAction[] {
  const obs = ctx.observation();
  const memo = solved();
  const board = new Uint8Array(9);
  let key = 0;
  for (let cell = 0; cell < 9; cell++) {
    const m = obs.board[cell];
    board[cell] = m === null ? 0 : m === obs.marks[0] ? 1 : 2;
    key += board[cell] * POW3[cell];
  }
  const empties = board.filter((m) => m === 0).length;
  const mark = empties % 2 === 1 ? 1 : 2;
  let best = -127;
  let choices: TttAction[] = [];
  for (const form of ctx.legal as readonly FixedForm<TttAction>[]) {
    const cell = form.action.cell;
    board[cell] = mark;
    const score = moveScore(board, key + mark * POW3[cell], empties - 1, mark, memo);
    board[cell] = 0;
    if (score > best) {
      best = score;
      choices = [form.action];
    } else if (score === best) {
      choices.push(form.action);
    }
  }
  return choices;
}

function minimax(): Strategy {
  return {
    name: "minimax",
    act(ctx) {
      const choices = bestMarks(ctx as TttContext);
      return choices.length === 1 ? choices[0] : ctx.rng.pick(choices);
    },
    distribution(ctx) {
      const choices = bestMarks(ctx as TttContext);
      return choices.map((action) => ({ action, probability: 1 / choices.length }));
    },
  };
}

export const ticTacToeStrategies: readonly StrategyDef[] = [
  {
    name: "minimax",
    game: "tic-tac-toe",
    description: "perfect play by exact minimax: never loses, wins as fast as it can, and picks uniformly " +
      "among equally good cells",
    create: minimax,
  },
];
