import { describe, expect, it } from "vitest";
import { ActionError } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { ticTacToe as ttt, type TttAction, type TttConfig, type TttState } from "../../games/tic-tac-toe/game.ts";
import { random } from "../../policies/baselines/random.ts";
import { ticTacToeStrategies } from "../../policies/baselines/tic-tac-toe.ts";
import { playMatch } from "../../policies/simulate.ts";
import type { Strategy } from "../../policies/strategy.ts";

const textarena = configure<TttConfig>(ttt, {}).config;
const openspiel = configure<TttConfig>(ttt, {}, "openspiel").config;
const rng = new Rng(0);

function mark(cell: number): TttAction {
  return { type: "mark", cell };
}

/** Plays `cells` in order from a fresh board; returns the state and the last step's rewards. */
function play(...cells: number[]): { state: TttState; rewards: readonly number[] } {
  const state = ttt.init(textarena, rng);
  let rewards: readonly number[] = [0, 0];
  for (const cell of cells) {
    const [seat] = ttt.toAct(state);
    const action = ttt.parse(mark(cell), state, seat);
    if (action instanceof ActionError) throw new Error(action.message);
    rewards = ttt.apply(state, Object.assign([], { [seat]: action }), rng);
  }
  return { state, rewards };
}

function minimax(): Strategy {
  return ticTacToeStrategies.find((d) => d.name === "minimax")!.create(undefined);
}

describe("tic-tac-toe: known answers (games.md §9)", () => {
  it("reaches 5,478 states, 4,520 of them not over, through its own legal/apply/clone", () => {
    const seen = new Map<string, boolean>();
    const stack = [ttt.init(textarena, rng)];
    while (stack.length > 0) {
      const state = stack.pop()!;
      const key = state.board.join("");
      if (seen.has(key)) continue;
      const toAct = ttt.toAct(state);
      seen.set(key, toAct.length === 0);
      for (const seat of toAct) {
        for (const form of ttt.legal(state, seat)) {
          const next = ttt.clone(state);
          ttt.apply(next, Object.assign([], { [seat]: (form as { action: TttAction }).action }), rng);
          stack.push(next);
        }
      }
    }
    expect(seen.size).toBe(5478);
    expect([...seen.values()].filter((over) => !over)).toHaveLength(4520);
  });

  it("pays +1/−1 for three in a row, in every direction, and 0/0 for a full board", () => {
    // O: 0 1 2 across the top.
    expect(play(0, 3, 1, 4, 2).rewards).toEqual([1, -1]);
    // X (player 1): the 2-4-6 diagonal.
    const diagonal = play(0, 2, 1, 4, 8, 6);
    expect(diagonal.rewards).toEqual([-1, 1]);
    expect(ttt.returns(diagonal.state)).toEqual([-1, 1]);
    expect(ttt.toAct(diagonal.state)).toEqual([]);
    // O: the 1-4-7 column.
    expect(play(1, 0, 4, 2, 7).rewards).toEqual([1, -1]);
    // O X O / O X X / X O O: no line.
    const draw = play(0, 1, 2, 4, 3, 5, 7, 6, 8);
    expect(draw.rewards).toEqual([0, 0]);
    expect(ttt.returns(draw.state)).toEqual([0, 0]);
    expect(ttt.toAct(draw.state)).toEqual([]);
    expect(ttt.observe(draw.state, "public")).toMatchObject({ phase: "over", winner: null, available: [] });
  });

  it("perfect play draws, and minimax never loses to random", () => {
    for (let seed = 0; seed < 20; seed++) {
      expect(playMatch(ttt, textarena, [minimax(), minimax()], seed).returns).toEqual([0, 0]);
    }
    const rand = random.create(undefined);
    let wins = 0;
    for (let seed = 0; seed < 200; seed++) {
      const first = playMatch(ttt, textarena, [minimax(), rand], `a${seed}`).returns;
      const second = playMatch(ttt, openspiel, [rand, minimax()], `b${seed}`).returns;
      expect(first[0]).toBeGreaterThanOrEqual(0);
      expect(second[1]).toBeGreaterThanOrEqual(0);
      wins += Number(first[0] === 1) + Number(second[1] === 1);
    }
    expect(wins).toBeGreaterThan(300);
  });

  it("minimax takes a win at once and blocks the other's line", () => {
    const strategy = minimax();
    const ctx = (state: TttState, seat: number) => ({
      seat,
      legal: ttt.legal(state, seat),
      observation: () => ttt.observe(state, seat),
      rng,
    });
    // O has 0 and 1, X has 3 and 4; O to move wins at 2 rather than blocking at 5.
    const win = play(0, 3, 1, 4).state;
    expect(strategy.distribution!(ctx(win, 0))).toEqual([{ action: mark(2), probability: 1 }]);
    // O has 0 and 1; X to move must block at 2.
    const block = play(0, 4, 1).state;
    expect(strategy.act(ctx(block, 1))).toEqual(mark(2));
    // The empty board: every cell draws, so every cell is a best move.
    const start = ttt.init(textarena, rng);
    expect(strategy.distribution!(ctx(start, 0))).toHaveLength(9);
  });
});

describe("tic-tac-toe: turns, observations and parsing", () => {
  it("alternates seats, O first by default and X first in the openspiel variant", () => {
    const { state } = play(4);
    expect(ttt.toAct(state)).toEqual([1]);
    expect(ttt.legal(state, 0)).toEqual([]);
    expect(ttt.legal(state, 1)).toHaveLength(8);
    const obs = ttt.observe(state, 1);
    expect(obs.board[4]).toBe("O");
    expect(obs.marks).toEqual(["O", "X"]);
    expect(obs.moves).toEqual([4]);
    expect(obs.picture).toBe(" 0 | 1 | 2 \n---+---+---\n 3 | O | 5 \n---+---+---\n 6 | 7 | 8 ");
    expect(ttt.describe(obs)).toContain("Your move. Empty cells: [0], [1], [2], [3], [5], [6], [7], [8].");
    expect(ttt.observe(ttt.init(openspiel, rng), 0).marks).toEqual(["X", "O"]);
  });

  it("reads JSON, `[4]`, `4`, `mark 4`, `[mark 4]` and a bracketed cell inside an answer", () => {
    const state = ttt.init(textarena, rng);
    for (
      const input of [
        mark(4),
        '{"type":"mark","cell":4}',
        "[4]",
        "4",
        " [ 4 ] ",
        "mark 4",
        "[mark 4]",
        "I take the centre: [4].",
        "I play [Mark 4].",
      ]
    ) {
      expect(ttt.parse(input, state, 0)).toEqual(mark(4));
    }
  });

  it("refuses taken and missing cells, other turns and junk, naming the legal cells", () => {
    const { state } = play(4, 0);
    const taken = ttt.parse("[4]", state, 0) as ActionError;
    expect(taken.code).toBe("illegal_action");
    expect(taken.message).toBe(
      "cell 4 is already marked. Legal now: mark 1 | mark 2 | mark 3 | mark 5 | mark 6 | mark 7 | mark 8.",
    );
    expect((ttt.parse(mark(0), state, 0) as ActionError).message).toMatch(/^cell 0 is already marked/);
    expect((ttt.parse("[9]", state, 0) as ActionError).message).toMatch(
      /^there is no cell 9: cells are numbered 0 to 8/,
    );
    expect((ttt.parse(mark(-1), state, 0) as ActionError).code).toBe("illegal_action");
    expect((ttt.parse({ type: "mark", cell: 2.5 }, state, 0) as ActionError).code).toBe("illegal_action");
    expect((ttt.parse("the middle", state, 0) as ActionError).code).toBe("illegal_action");
    expect((ttt.parse({ type: "mark" }, state, 0) as ActionError).code).toBe("illegal_action");
    expect((ttt.parse("[1]", state, 1) as ActionError).code).toBe("not_your_turn");
  });

  it("has no moves once over, and says who won", () => {
    const { state } = play(0, 3, 1, 4, 2);
    expect(ttt.legal(state, 0)).toEqual([]);
    expect(ttt.legal(state, 1)).toEqual([]);
    expect((ttt.parse("[8]", state, 1) as ActionError).code).toBe("not_your_turn");
    expect(ttt.describe(ttt.observe(state, 1))).toContain("The game is over: the other player won.");
    expect(ttt.describe(ttt.observe(state, "public"))).toContain("The game is over: player 0 won.");
  });
});

describe("tic-tac-toe: the numeric face (OpenSpiel's tic_tac_toe)", () => {
  const tensor = (state: TttState, seat: number) => {
    const out = new Float32Array(27).fill(Number.NaN);
    ttt.encode(ttt.observe(state, seat), out);
    return Array.from(out);
  };

  it("has 9 ids, one per cell, and OpenSpiel's observation shape in both variants; no chance", () => {
    for (const config of [textarena, openspiel]) {
      expect(ttt.actionCount(config)).toBe(9);
      expect(ttt.observationShape(config)).toEqual([3, 3, 3]);
      const state = ttt.start(config);
      expect(ttt.chance(state)).toEqual([]);
      expect(() => ttt.resolve(state, 0)).toThrow(RangeError);
    }
    expect(ttt.actionId(mark(7), play().state, 0)).toBe(7);
  });

  it("masks the empty cells for the seat to move and nothing for the other", () => {
    const { state } = play(4, 0);
    const mask = new Uint8Array(9).fill(7);
    ttt.legalMask(state, 0, mask);
    expect(Array.from(mask)).toEqual([0, 1, 1, 1, 0, 1, 1, 1, 1]);
    ttt.legalMask(state, 1, mask);
    expect(Array.from(mask)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ttt.legalMask(play(0, 3, 1, 4, 2).state, 1, mask.fill(7));
    expect(Array.from(mask)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it("maps ids to marks, and refuses taken, missing and other seats' ids naming the legal ones", () => {
    const { state } = play(4, 0);
    expect(ttt.actionOf(2, state, 0)).toEqual(mark(2));
    const taken = ttt.actionOf(4, state, 0) as ActionError;
    expect(taken.code).toBe("illegal_action");
    expect(taken.message).toBe("action id 4 is not legal now. Legal now: ids 1, 2, 3, 5, 6, 7, 8.");
    expect((ttt.actionOf(9, state, 0) as ActionError).message).toMatch(
      /^action id 9 is out of range: ids are integers in \[0, 8\]/,
    );
    expect((ttt.actionOf(2, state, 1) as ActionError).code).toBe("not_your_turn");
  });

  it("encodes planes empty, player 1's marks, player 0's marks (OpenSpiel's empty, nought, cross), whatever the marks", () => {
    // Player 0 in the centre, player 1 in the corner.
    const expected = [
      ...[0, 1, 1, 1, 0, 1, 1, 1, 1],
      ...[1, 0, 0, 0, 0, 0, 0, 0, 0],
      ...[0, 0, 0, 0, 1, 0, 0, 0, 0],
    ];
    const { state } = play(4, 0);
    expect(tensor(state, 0)).toEqual(expected);
    expect(tensor(state, 1)).toEqual(expected);
    const crosses = ttt.init(openspiel, rng);
    for (const cell of [4, 0]) ttt.apply(crosses, Object.assign([], { [ttt.toAct(crosses)[0]]: mark(cell) }), rng);
    expect(ttt.observe(crosses, 0).board[4]).toBe("X");
    expect(tensor(crosses, 0)).toEqual(expected);
    expect(tensor(ttt.start(textarena), 0)).toEqual([...new Array(9).fill(1), ...new Array(18).fill(0)]);
  });
});
