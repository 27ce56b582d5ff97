import { describe, expect, it } from "vitest";
import { type Action, ActionError } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import { CALL, FOLD, RAISE } from "../../games/holdem/betting.ts";
import { deckOf } from "../../games/holdem/cards.ts";
import {
  GamedefError,
  HULHE_GAMEDEF,
  HUNL_GAMEDEF,
  parseGamedef,
  renderGamedef,
  SMALL_GAMEDEF,
} from "../../games/holdem/gamedef.ts";
import {
  gamedefOf,
  holdem,
  type HoldemAction,
  type HoldemConfig,
  type HoldemObservation,
  type HoldemState,
  matchStateLine,
  positionOf,
  RECENT_HANDS,
  setCards,
} from "../../games/holdem/game.ts";
import { MatchStateError, parseMatchState, parseReply, renderMatchState } from "../../games/holdem/matchstate.ts";
import { randomAction } from "../../policies/baselines/random.ts";
import { actionError as error, must } from "../support/actions.ts";

function config(raw: Record<string, unknown> = {}, variant?: string): HoldemConfig {
  return configure<HoldemConfig>(holdem as unknown as AnyGame, raw, variant).config;
}

const hunl = config();
const hulhe = config({}, "hulhe");
const small = config({}, "small");
const HUNL = parseGamedef(HUNL_GAMEDEF);

/** The seat to act. */
function turn(state: HoldemState): number {
  const [seat] = holdem.toAct(state);
  expect(seat).toBeDefined();
  return seat;
}

/** Parses each input for the seat to act and applies it; returns the last step's rewards. */
function play(state: HoldemState, rng: Rng, ...inputs: unknown[]): readonly number[] {
  let rewards: readonly number[] = [0, 0];
  for (const input of inputs) {
    const seat = turn(state);
    const moves: (HoldemAction | undefined)[] = [];
    moves[seat] = must(holdem.parse(input, state, seat));
    rewards = holdem.apply(state, moves, rng);
  }
  return rewards;
}

function raiseRange(state: HoldemState): [number, number] | undefined {
  const form = holdem.legal(state, turn(state)).find((f) => f.kind === "amount");
  return form?.kind === "amount" ? [form.min, form.max] : undefined;
}

function gamedefError(text: string): string {
  try {
    parseGamedef(text);
  } catch (e) {
    expect(e).toBeInstanceOf(GamedefError);
    return (e as Error).message;
  }
  throw new Error("the game definition was accepted");
}

describe("holdem: game definitions (games.md §7.1)", () => {
  it("reads the canonical HUNL definition, and writes it back as ACPC does", () => {
    expect(HUNL).toEqual({
      betting: "nolimit",
      numPlayers: 2,
      numRounds: 4,
      stack: [20000, 20000],
      blind: [100, 50],
      raiseSize: [],
      firstPlayer: [1, 0, 0, 0],
      maxRaises: [255, 255, 255, 255],
      numSuits: 4,
      numRanks: 13,
      numHoleCards: 2,
      numBoardCards: [0, 3, 1, 1],
    });
    expect(renderGamedef(HUNL)).toBe(HUNL_GAMEDEF);
    expect(renderGamedef(parseGamedef(HULHE_GAMEDEF))).toBe(HULHE_GAMEDEF);
    for (const text of [HUNL_GAMEDEF, HULHE_GAMEDEF, SMALL_GAMEDEF]) {
      const def = parseGamedef(text);
      expect(parseGamedef(renderGamedef(def))).toEqual(def);
    }
  });

  it("gives the variants their structures: limit without stacks, the small OpenSpiel game", () => {
    const limit = gamedefOf(hulhe);
    expect(limit.betting).toBe("limit");
    expect(limit.blind).toEqual([10, 5]);
    expect(limit.raiseSize).toEqual([10, 10, 20, 20]);
    expect(limit.maxRaises).toEqual([3, 4, 4, 4]);
    expect(limit.stack).toEqual([2147483647, 2147483647]);
    const s = gamedefOf(small);
    expect([s.numRounds, s.numRanks, s.numHoleCards, s.stack[0], s.blind[0], s.blind[1]]).toEqual([
      2,
      6,
      1,
      1200,
      100,
      100,
    ]);
    expect(s.firstPlayer).toEqual([0, 0]);
    expect(gamedefOf(hunl)).toEqual(HUNL);
  });

  it("reads ACPC's loose syntax: any case, optional `=`, comments, missing per-round values defaulted", () => {
    const def = parseGamedef(
      "# heads-up limit, OpenSpiel's way\ngamedef\nLIMIT\nnumplayers 2\nNUMROUNDS = 4\nblind = 10 5\n" +
        "raisesize=10 10 20 20\nfirstPlayer = 2 1\nnumSuits 4\nnumRanks 13\nnumHoleCards 2\n" +
        "numBoardCards 0 3 1 1\nend gamedef\n",
    );
    expect(def.firstPlayer).toEqual([1, 0, 0, 0]);
    expect(def.maxRaises).toEqual([255, 255, 255, 255]);
    expect(def.betting).toBe("limit");
  });

  it("refuses bad definitions, naming the line and the field", () => {
    const hunlWith = (from: string, to: string) => HUNL_GAMEDEF.replace(from, to);
    expect(gamedefError(hunlWith("numPlayers = 2", "numPlayers = 3"))).toMatch(
      /line 3 \(`numPlayers = 3`\): `numPlayers` must be 2 \(this server plays heads-up poker only\), got 3/,
    );
    expect(gamedefError(hunlWith("numHoleCards = 2", "numHoleCard = 2"))).toMatch(
      /line 10 \(`numHoleCard = 2`\): not a game definition line \(known: `limit`, `nolimit`, `numPlayers`/,
    );
    expect(gamedefError(hunlWith("numRanks = 13\n", ""))).toMatch(/no `numRanks` line/);
    expect(gamedefError(hunlWith("blind = 100 50", "blind = 100 fifty"))).toMatch(
      /line 6 \(`blind = 100 fifty`\): `blind` takes whole numbers of 0 or more, got `fifty`/,
    );
    expect(gamedefError(hunlWith("blind = 100 50", "blind = 100"))).toMatch(/`blind` takes 2 value\(s\)/);
    expect(gamedefError(hunlWith("stack = 20000 20000", "stack = 20000 50"))).toMatch(
      /line 6 .*the blind of player 2 \(50\) must be smaller than its stack \(50\)/,
    );
    expect(gamedefError(hunlWith("numHoleCards = 2", "numHoleCards = 3"))).toMatch(
      /`numBoardCards = 0 3 1 1`\): a hand may hold at most 7 cards \(hole plus board\), got 3 \+ 5/,
    );
    expect(gamedefError(hunlWith("numRanks = 13", "numRanks = 2"))).toMatch(/the deck of 8 cards is too small/);
    expect(gamedefError(hunlWith("firstPlayer = 2 1 1 1", "firstPlayer = 2 1 3 1"))).toMatch(
      /the first player of round 3 must be 1 or 2, got 3/,
    );
    expect(gamedefError(hunlWith("numBoardCards = 0 3 1 1", "numBoardCards = 0 3 1 1 1"))).toMatch(
      /`numBoardCards` takes 4 value\(s\)/,
    );
    expect(gamedefError(HUNL_GAMEDEF + "nolimit\n")).toMatch(/line 13 \(`nolimit`\): nothing may follow `END GAMEDEF`/);
    expect(gamedefError(hunlWith("numRounds = 4", "numRounds = 4\nnumRounds = 3"))).toMatch(
      /line 5 \(`numRounds = 3`\): `numRounds` is already given on line 4/,
    );
    expect(gamedefError(HULHE_GAMEDEF.replace("raiseSize = 10 10 20 20\n", ""))).toMatch(/no `raiseSize` line/);
    expect(gamedefError(hunlWith("numRounds = 4", "numRounds = 5"))).toMatch(/`numRounds` must be from 1 to 4/);
  });

  it("turns a bad `gamedef` into a ConfigError that names the line and field", () => {
    const bad = HUNL_GAMEDEF.replace("numSuits = 4", "numSuits = 5");
    expect(() => config({ gamedef: bad })).toThrow(ConfigError);
    expect(() => config({ gamedef: bad })).toThrow(
      /`gamedef` line 8 \(`numSuits = 5`\): `numSuits` must be from 1 to 4, got 5/,
    );
    expect(() => config({ hands: 0 })).toThrow(ConfigError);
    expect(() => config({ blinds: 3 })).toThrow(/unknown key `blinds` \(allowed: gamedef, hands\)/);
    // A gamedef replaces the variant's structure.
    expect(gamedefOf(config({ gamedef: HUNL_GAMEDEF }, "hulhe")).betting).toBe("nolimit");
  });
});

describe("holdem: no-limit betting (games.md §7.2)", () => {
  it("opens with the small blind acting first preflop and a minimum raise-to of 200", () => {
    const rng = new Rng(1);
    const state = holdem.init(hunl, rng);
    // Hand 0: seat 0 is position 0 (big blind 100), seat 1 position 1 (small blind 50, the button).
    expect(positionOf(0, 0)).toBe(0);
    expect(turn(state)).toBe(1);
    expect(holdem.legal(state, 1).map((f) => (f.kind === "fixed" ? f.action.type : f.type))).toEqual([
      "fold",
      "call",
      "raise",
    ]);
    expect(raiseRange(state)).toEqual([200, 20000]);
    const obs = holdem.observe(state, 1);
    expect([obs.pot, obs.toCall, obs.minRaiseTo, obs.maxRaiseTo]).toEqual([150, 50, 200, 20000]);
    expect(obs.committed).toEqual([100, 50]);
    expect(obs.stacks).toEqual([19900, 19950]);
    expect(obs.blinds).toEqual([100, 50]);
  });

  it("after a raise to 300 the next raise-to is at least 300 + (300 − 100) = 500", () => {
    const rng = new Rng(2);
    const state = holdem.init(hunl, rng);
    play(state, rng, "r300");
    expect(turn(state)).toBe(0);
    expect(raiseRange(state)).toEqual([500, 20000]);
    play(state, rng, { type: "raise", amount: 800 });
    expect(raiseRange(state)).toEqual([1300, 20000]);
  });

  it("opens each later round at the bet plus the big blind", () => {
    const rng = new Rng(3);
    const state = holdem.init(hunl, rng);
    play(state, rng, "c", "check");
    // Flop: the big blind (position 0) acts first.
    expect(holdem.observe(state, 0).roundName).toBe("flop");
    expect(turn(state)).toBe(0);
    expect(raiseRange(state)).toEqual([200, 20000]);
    play(state, rng, "bet 250", "call");
    expect(holdem.observe(state, 0).roundName).toBe("turn");
    expect(raiseRange(state)).toEqual([350, 20000]);
  });

  it("folds only when chips are owed, and calls a free action a check", () => {
    const rng = new Rng(4);
    const state = holdem.init(hunl, rng);
    expect(error(holdem.parse({ type: "check" }, state, 1)).message).toMatch(/you cannot check: 50 to call/);
    play(state, rng, "call");
    expect(holdem.legal(state, 0).map((f) => (f.kind === "fixed" ? f.action.type : f.type))).toEqual([
      "check",
      "raise",
    ]);
    const fold = error(holdem.parse({ type: "fold" }, state, 0));
    expect(fold.code).toBe("illegal_action");
    expect(fold.message).toMatch(
      /nothing to call, so folding is not allowed: check instead.*Legal now: check \| raise/,
    );
    expect(holdem.parse({ type: "call" }, state, 0)).toEqual({ type: "check" });
    expect(holdem.parse("c", state, 0)).toEqual({ type: "check" });
    expect(holdem.parse("k", state, 0)).toEqual({ type: "check" });
  });

  it("refuses raises out of range, out of turn, and malformed ACPC actions, saying what is legal", () => {
    const rng = new Rng(5);
    const state = holdem.init(hunl, rng);
    const low = error(holdem.parse({ type: "raise", amount: 150 }, state, 1));
    expect(low.code).toBe("illegal_action");
    expect(low.message).toMatch(
      /a raise must be to at least 200 .*Legal now: fold \| call \| raise <integer in \[200, 20000\]>/,
    );
    expect(error(holdem.parse("r20001", state, 1)).message).toMatch(/a raise can be to at most 20000, all your chips/);
    expect(error(holdem.parse({ type: "raise", amount: 250.5 }, state, 1)).message).toMatch(/whole number/);
    expect(error(holdem.parse({ type: "raise" }, state, 1)).code).toBe("malformed_action");
    const r = error(holdem.parse("r", state, 1));
    expect(r.code).toBe("malformed_action");
    expect(r.message).toMatch(/a no-limit raise needs its raise-to total, e.g\. r300/);
    expect(error(holdem.parse("r300x", state, 1)).code).toBe("malformed_action");
    expect(error(holdem.parse("x", state, 1)).code).toBe("illegal_action");
    const early = error(holdem.parse({ type: "call" }, state, 0));
    expect(early.code).toBe("not_your_turn");
    expect(early.message).toBe("it is player 1's turn, not player 0's.");
    expect(error(holdem.parse({ type: "anything" }, state, 0)).code).toBe("not_your_turn");
  });

  it("reads every text form of an action", () => {
    const state = holdem.init(hunl, new Rng(6));
    const cases: [string, HoldemAction][] = [
      ["f", { type: "fold" }],
      ["F", { type: "fold" }],
      ["c", { type: "call" }],
      ["K", { type: "call" }],
      ["r300", { type: "raise", amount: 300 }],
      ["B450", { type: "raise", amount: 450 }],
      ["fold", { type: "fold" }],
      ["Call", { type: "call" }],
      ["raise 300", { type: "raise", amount: 300 }],
      ["raise to 300", { type: "raise", amount: 300 }],
      ["Bet 700.", { type: "raise", amount: 700 }],
      ["all-in", { type: "raise", amount: 20000 }],
      ["All in", { type: "raise", amount: 20000 }],
      ["allin", { type: "raise", amount: 20000 }],
      ['{"type":"raise","amount":999}', { type: "raise", amount: 999 }],
      ['{"type":"bet","amount":999}', { type: "raise", amount: 999 }],
    ];
    for (const [text, action] of cases) expect(holdem.parse(text, state, 1)).toEqual(action);
  });

  it("plays an all-in to a showdown with the whole board, as ACPC writes it (`r20000c///`)", () => {
    const rng = new Rng(7);
    const state = holdem.init(hunl, rng);
    setCards(state, ["AhAd", "KsKd"], "2c3d4h9s8c");
    play(state, rng, "all-in");
    // Calling takes every chip, so the big blind may only fold or call.
    expect(holdem.legal(state, 0).map((f) => (f.kind === "fixed" ? f.action.type : f.type))).toEqual(["fold", "call"]);
    expect(holdem.parse("all-in", state, 0)).toEqual({ type: "call" });
    const rewards = play(state, rng, "c");
    expect(rewards).toEqual([20000, -20000]);
    expect(holdem.returns(state)).toEqual([20000, -20000]);
    expect(holdem.toAct(state)).toEqual([]);
    expect(matchStateLine(state, 0)).toBe("MATCHSTATE:0:0:r20000c///:AhAd|KsKd/2c3d4h/9s/8c");
    expect(matchStateLine(state, 1)).toBe("MATCHSTATE:1:0:r20000c///:AhAd|KsKd/2c3d4h/9s/8c");
    const obs = holdem.observe(state, "public");
    expect(obs.phase).toBe("over");
    expect(obs.roundName).toBe("river");
    expect(obs.recentHands[0]).toMatchObject({
      betting: "r20000c///",
      showdown: true,
      shownCards: [["Ah", "Ad"], ["Ks", "Kd"]],
      bestHands: ["pair of aces, kickers 9 8 4", "pair of kings, kickers 9 8 4"],
      winnings: [20000, -20000],
      matchstate: null,
    });
  });

  it("splits a tied pot and pays a short stack only what both matched", () => {
    let rng = new Rng(8);
    let state = holdem.init(hunl, rng);
    // The board plays for both: a royal flush.
    setCards(state, ["2c3d", "2d3c"], "AsKsQsJsTs");
    expect(play(state, rng, "r5000", "c", "k", "r9000", "c", "c", "c", "c", "c")).toEqual([0, 0]);
    const gamedef = HUNL_GAMEDEF.replace("stack = 20000 20000", "stack = 20000 1000");
    rng = new Rng(9);
    state = holdem.init(config({ gamedef }), rng);
    setCards(state, ["2c3d", "AhAd"], "AsKd7h8c9d");
    // Position 1 (seat 1) has 1,000: a minimum raise-to above that leaves only all-in.
    play(state, rng, "r300", "r5000");
    expect(raiseRange(state)).toBeUndefined();
    expect(holdem.legal(state, 1).map((f) => (f.kind === "fixed" ? f.action.type : f.type))).toEqual(["fold", "call"]);
    expect(play(state, rng, "c")).toEqual([-1000, 1000]);
    expect(holdem.observe(state, 0).recentHands[0].betting).toBe("r300r5000c///");
  });

  it("makes a short stack's only raise all-in", () => {
    const gamedef = HUNL_GAMEDEF.replace("stack = 20000 20000", "stack = 20000 350");
    const rng = new Rng(10);
    const state = holdem.init(config({ gamedef }), rng);
    play(state, rng, "c", "r300");
    expect(raiseRange(state)).toEqual([350, 350]);
    expect(error(holdem.parse("r340", state, 1)).message).toMatch(/the only raise is all-in, to 350/);
  });

  it("stops raising at ACPC's 64 actions a round", () => {
    const rng = new Rng(11);
    const state = holdem.init(hunl, rng);
    let raises = 0;
    while (raiseRange(state)) {
      play(state, rng, { type: "raise", amount: raiseRange(state)![0] });
      raises++;
    }
    expect(raises).toBe(63);
    expect(holdem.observe(state, 0).maxRaiseTo).toBeNull();
    play(state, rng, "c");
    const betting = holdem.observe(state, 0).matchstate!.split(":")[3];
    expect(betting.split("/")[0].match(/[fcr]/g)).toHaveLength(64);
    expect(holdem.observe(state, 0).roundName).toBe("flop");
  });
});

describe("holdem: limit betting", () => {
  it("raises by the round's fixed size, caps the raises, and accepts the raise with or without its amount", () => {
    const rng = new Rng(12);
    const state = holdem.init(hulhe, rng);
    // Preflop: the small blind (5) may raise to 20; three raises at most.
    expect(holdem.legal(state, 1)).toContainEqual({ kind: "fixed", action: { type: "raise", amount: 20 } });
    expect(holdem.parse({ type: "raise" }, state, 1)).toEqual({ type: "raise", amount: 20 });
    expect(holdem.parse("r", state, 1)).toEqual({ type: "raise", amount: 20 });
    expect(holdem.parse("bet", state, 1)).toEqual({ type: "raise", amount: 20 });
    expect(error(holdem.parse({ type: "raise", amount: 30 }, state, 1)).message).toMatch(
      /in limit betting a raise is to exactly 20, not 30/,
    );
    expect(error(holdem.parse("r30", state, 1)).message).toMatch(/limit raises have no size in ACPC: write r/);
    expect(error(holdem.parse("all-in", state, 1)).message).toMatch(/there is no all-in in limit betting/);
    expect(holdem.describe(holdem.observe(state, 1))).toMatch(
      /You may fold, or call 5, or raise to 20\.\nAnswer with JSON such as \{"type":"call"\} or \{"type":"raise"\}, or text: fold, check, call, raise, or an ACPC action \(f, c, r\)\./,
    );
    play(state, rng, "r", "r", "r");
    const capped = error(holdem.parse("r", state, 0));
    expect(capped.message).toMatch(/no raise is allowed: the 3 raise\(s\) allowed this round have been made/);
    expect(holdem.observe(state, 0).committed).toEqual([30, 40]);
    play(state, rng, "c");
    // Flop: raises of 10, four at most; turn and river: 20.
    expect(holdem.legal(state, 0)).toContainEqual({ kind: "fixed", action: { type: "raise", amount: 50 } });
    play(state, rng, "r", "r", "r", "r", "c", "c", "r");
    expect(holdem.observe(state, 0).committed).toEqual([80, 100]);
    expect(matchStateLine(state, 0).split(":")[3]).toBe("rrrc/rrrrc/cr");
  });
});

describe("holdem: any ACPC structure", () => {
  const ODD = "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 3\nstack = 300 200\nblind = 10 20\n" +
    "raiseSize = 50 50 100\nfirstPlayer = 1 2 1\nmaxRaises = 2 2 2\nnumSuits = 3\nnumRanks = 9\n" +
    "numHoleCards = 3\nnumBoardCards = 1 2 1\nEND GAMEDEF\n";

  it("plays limit with stacks, three hole cards and a board card before the first round", () => {
    const rng = new Rng(19);
    const state = holdem.init(config({ gamedef: ODD }), rng);
    setCards(state, ["9c8c7c", "6d5d4d"], "2h3h4hTc");
    expect(matchStateLine(state, 0)).toBe("MATCHSTATE:0:0::9c8c7c|2h");
    // Position 0 (blind 10) acts first; raises of 50, two a round.
    play(state, rng, "r", "r");
    expect(holdem.observe(state, 0).committed).toEqual([70, 120]);
    expect(holdem.legal(state, 0).map((f) => (f.kind === "fixed" ? f.action.type : f.type))).toEqual(["fold", "call"]);
    play(state, rng, "c");
    // Round 2: position 1 first; the second raise (to 220) is more than position 1's 200 chips.
    expect(turn(state)).toBe(1);
    play(state, rng, "r", "r");
    expect(holdem.observe(state, 1).stacks).toEqual([80, 30]);
    expect(holdem.parse("r", state, 1)).toBeInstanceOf(ActionError);
    // Calling puts position 1 all-in for 200; the rest of the board comes, and its straight wins 200.
    expect(play(state, rng, "c")).toEqual([-200, 200]);
    expect(matchStateLine(state, 1)).toBe("MATCHSTATE:1:0:rrc/rrc/:9c8c7c|6d5d4d2h/3h4h/Tc");
    expect(holdem.observe(state, 1).recentHands[0].bestHands).toEqual([
      "high card, T 9 8 7 4",
      "straight, six high",
    ]);
    const def = gamedefOf(config({ gamedef: ODD }));
    for (const line of ["MATCHSTATE:0:0::9c8c7c|2h", "MATCHSTATE:1:0:rrc/rrc/:9c8c7c|6d5d4d2h/3h4h/Tc"]) {
      expect(renderMatchState(def, parseMatchState(line, def))).toBe(line);
    }
    expect(() => parseMatchState("MATCHSTATE:0:0::9c8c7c|As", def)).toThrow(/As is not in this game's deck/);
  });

  it("never pays −0, even when nothing was put in", () => {
    const gamedef = "GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 1\nstack = 50 50\nblind = 0 0\n" +
      "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 5\nEND GAMEDEF\n";
    const rng = new Rng(20);
    const state = holdem.init(config({ gamedef }), rng);
    setCards(state, ["AhAd", "2c7d"], "KsQs9h5c3d");
    // With no blinds the smallest bet is one chip.
    expect(raiseRange(state)).toEqual([1, 50]);
    const rewards = play(state, rng, "c", "c");
    expect(rewards).toEqual([0, 0]);
    expect(rewards.some((r) => Object.is(r, -0))).toBe(false);
    expect(JSON.parse(JSON.stringify(holdem.observe(state, 1)))).toEqual(holdem.observe(state, 1));
  });
});

describe("holdem: known answers in the small OpenSpiel game (games.md §7.1, §11)", () => {
  it("`cr300f` pays [−100, 100]: position 0 checks, position 1 bets the pot (raise-to 300), position 0 folds", () => {
    const rng = new Rng(13);
    const state = holdem.init(small, rng);
    setCards(state, ["5c", "5d"], "7s");
    expect(turn(state)).toBe(0);
    play(state, rng, "c");
    // A pot-sized bet: 100 already in plus the pot of 200.
    const obs = holdem.observe(state, 1);
    expect(obs.committed[1] + obs.pot).toBe(300);
    const rewards = play(state, rng, { type: "raise", amount: 300 }, "f");
    expect(rewards).toEqual([-100, 100]);
    expect(holdem.returns(state)).toEqual([-100, 100]);
    expect(matchStateLine(state, 0)).toBe("MATCHSTATE:0:0:cr300f:5c|");
    expect(matchStateLine(state, 1)).toBe("MATCHSTATE:1:0:cr300f:|5d");
  });

  it("deals from a 24-card deck of ranks 2 to 7", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 400; seed++) {
      const state = holdem.init(small, new Rng(seed));
      for (const c of [...holdem.observe(state, 0).holeCards!, ...holdem.observe(state, 1).holeCards!]) seen.add(c);
    }
    expect([...seen].sort()).toEqual(
      "234567".split("").flatMap((r) => "cdhs".split("").map((s) => r + s)).sort(),
    );
  });
});

describe("holdem: MATCHSTATE (games.md §7.3)", () => {
  const roundTrips = [
    "MATCHSTATE:1:3:cr300:|Ks8d",
    "MATCHSTATE:0:0:cr300c/r600f:Ah2c|/Kd7s3h",
    "MATCHSTATE:0:7:cr300c/cc/:Ah2c|/Kd7s3h/Tc",
    "MATCHSTATE:1:12:r20000c///:AhAd|KsKd/2c3d4h/9s/8c",
    "MATCHSTATE:0:0::Ah2c|",
    "MATCHSTATE:1:1:cc/r250c/r800r2400c/cc:9h9d|Ks8d/Kd7s3h/Tc/2s",
  ];

  it("reads and writes the protocol's lines unchanged", () => {
    for (const line of roundTrips) expect(renderMatchState(HUNL, parseMatchState(line, HUNL))).toBe(line);
    const ms = parseMatchState("MATCHSTATE:1:3:cr300:|Ks8d", HUNL);
    expect(ms.position).toBe(1);
    expect(ms.hand).toBe(3);
    expect(ms.holeCards[0]).toBeNull();
    expect(ms.betting.maxSpent).toBe(300);
    expect(ms.betting.finished).toBe(false);
    const limit = parseGamedef(HULHE_GAMEDEF);
    expect(renderMatchState(limit, parseMatchState("MATCHSTATE:0:2:rrrc/rc/c:Ah2c|/Kd7s3h/Tc", limit))).toBe(
      "MATCHSTATE:0:2:rrrc/rc/c:Ah2c|/Kd7s3h/Tc",
    );
  });

  it("reads a bot's reply: the line it was sent, `:`, and its action", () => {
    expect(parseReply("MATCHSTATE:1:3:cr300:|Ks8d:r900", HUNL).action).toEqual({ type: RAISE, size: 900 });
    expect(parseReply("MATCHSTATE:1:3:cr300:|Ks8d:c", HUNL).action).toEqual({ type: CALL, size: 0 });
    expect(parseReply("MATCHSTATE:1:3:cr300:|Ks8d:f", HUNL).action).toEqual({ type: FOLD, size: 0 });
  });

  it("refuses lines that break the protocol or the rules, saying why", () => {
    const bad: [string, RegExp][] = [
      [
        "MATCHSTATE:1:3:r150:|Ks8d",
        /`r150` at character 1 of the betting: a raise must be to between 200 and 20000, not 150/,
      ],
      ["MATCHSTATE:1:3:c/c:|Ks8d", /the `\/` at character 2 of the betting comes before its round is over/],
      ["MATCHSTATE:1:3:ccc:|Ks8d", /`c` at character 3 of the betting: round 2 needs a `\/` before it/],
      ["MATCHSTATE:1:3:cc:|Ks8d", /the betting reaches round 2: it must end with a `\/`/],
      ["MATCHSTATE:1:3:cr300x:|Ks8d", /character 6 of the betting: `x` is not an ACPC action/],
      ["MATCHSTATE:2:3:cr300:|Ks8d", /position 2 does not exist/],
      ["MATCHSTATE:1:3:cr300:|Ks", /position 1 shows 1 hole card\(s\); a hand has 2/],
      ["MATCHSTATE:1:3:cr300:Ks8d|Ks9d", /Ks appears twice/],
      ["MATCHSTATE:1:3:cc/:|Ks8d/Kd7s", /round 2 deals 3 board card\(s\), the line shows 2/],
      ["MATCHSTATE:1:3:cr300:|Ks8dQh", /unexpected `Qh` after the cards/],
      ["MATCHSTATE:1:3:cr300", /MATCHSTATE:<position>:<hand>:<betting>:<cards>/],
      ["MATCHSTATE:0:0:cf:|", /`f` at character 2 of the betting: folding is not allowed when nothing is owed/],
    ];
    for (const [line, why] of bad) {
      expect(() => parseMatchState(line, HUNL)).toThrow(MatchStateError);
      expect(() => parseMatchState(line, HUNL)).toThrow(why);
    }
    expect(() => parseReply("MATCHSTATE:1:3:cr300:|Ks8d", HUNL)).toThrow(/a reply is the MATCHSTATE line received/);
    expect(() => parseReply("MATCHSTATE:1:3:cr300:|Ks8d:x", HUNL)).toThrow(/`x` is not an ACPC action/);
  });

  it("shows each seat its view in play, and takes a bot's reply as its action", () => {
    const rng = new Rng(14);
    const state = holdem.init(config({ hands: 4 }), rng);
    // Hands 0–2: the first to act folds.
    for (let h = 0; h < 3; h++) play(state, rng, "f");
    // The small blind folds: seat 1 in hands 0 and 2, seat 0 in hand 1.
    expect(holdem.returns(state)).toEqual([50, -50]);
    // Hand 3 (numbered from 0): seat 0 is position 1, the small blind, and acts first.
    expect(positionOf(0, 3)).toBe(1);
    setCards(state, ["Ks8d", "AhAc"], "Kd7s3hTc2s");
    play(state, rng, "c", "r300");
    expect(holdem.observe(state, 0).matchstate).toBe("MATCHSTATE:1:3:cr300:|Ks8d");
    expect(holdem.observe(state, 1).matchstate).toBe("MATCHSTATE:0:3:cr300:AhAc|");
    expect(holdem.parse("MATCHSTATE:1:3:cr300:|Ks8d:r900", state, 0)).toEqual({ type: "raise", amount: 900 });
    expect(holdem.parse("MATCHSTATE:1:3:cr300:|Ks8d:c", state, 0)).toEqual({ type: "call" });
    expect(holdem.parse("MATCHSTATE:1:3:cr300:|Ks8d:f", state, 0)).toEqual({ type: "fold" });
    const stale = error(holdem.parse("MATCHSTATE:1:3:c:|Ks8d:c", state, 0));
    expect(stale.message).toMatch(/the reply answers another state; the current one is MATCHSTATE:1:3:cr300:\|Ks8d/);
    expect(error(holdem.parse("MATCHSTATE:1:3:cr300:|Ks8d:r100", state, 0)).message).toMatch(/at least 500/);
    expect(error(holdem.parse("MATCHSTATE:1:3:cr300:|Ks8d:r", state, 0)).code).toBe("malformed_action");
  });
});

describe("holdem: several hands", () => {
  it("swaps positions every hand, restarts stacks, and adds up the chips won", () => {
    const rng = new Rng(15);
    const state = holdem.init(config({ hands: 13 }), rng);
    const firstToAct: number[] = [];
    let sum = [0, 0];
    for (let h = 0; h < 13; h++) {
      const obs = holdem.observe(state, "public");
      expect(obs.hand).toBe(h + 1);
      expect(obs.positions).toEqual([h % 2, 1 - (h % 2)]);
      expect(obs.committed).toEqual(h % 2 === 0 ? [100, 50] : [50, 100]);
      expect(obs.stacks).toEqual(h % 2 === 0 ? [19900, 19950] : [19950, 19900]);
      firstToAct.push(turn(state));
      const r = h % 3 === 0 ? play(state, rng, "f") : play(state, rng, "all-in", "f");
      sum = [sum[0] + r[0], sum[1] + r[1]];
    }
    // The small blind (position 1) acts first preflop: seat 1, then seat 0, ...
    expect(firstToAct).toEqual(Array.from({ length: 13 }, (_, h) => 1 - (h % 2)));
    expect(holdem.returns(state)).toEqual(sum);
    const obs = holdem.observe(state, 0);
    expect(obs.phase).toBe("over");
    expect(obs.recentHands).toHaveLength(RECENT_HANDS);
    expect(obs.recentHands.map((s) => s.hand)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(holdem.describe(obs)).toMatch(/Finished hands \(the last 10; 3 earlier\):/);
  });
});

/** Plays random legal actions to the end, calling `check` before every step. */
function playout(cfg: HoldemConfig, seed: string, check: (state: HoldemState) => void): HoldemState {
  const rng = new Rng(seed);
  const picker = new Rng(`${seed}-picker`);
  const state = holdem.init(cfg, rng);
  for (let toAct = holdem.toAct(state); toAct.length > 0; toAct = holdem.toAct(state)) {
    check(state);
    const moves: (Action | undefined)[] = [];
    for (const seat of toAct) {
      const legal = holdem.legal(state, seat);
      // Mostly calls and small raises, so hands reach the later rounds.
      const form = picker.int(4) === 0
        ? picker.pick(legal)
        : legal.find((f) => f.kind === "fixed" && f.action.type !== "fold") ?? legal[0];
      moves[seat] = randomAction(form, picker);
    }
    holdem.apply(state, moves as HoldemAction[], rng);
  }
  check(state);
  return state;
}

/** The hole cards of `seat` in the current hand, from the game's own view of that seat. */
function holeOf(state: HoldemState, seat: number): string[] {
  return holdem.observe(state, seat).holeCards!;
}

const CARD_TOKEN = /\b[2-9TJQKA][cdhs]\b/g;

describe("holdem: hidden information", () => {
  it("never shows a seat the other's hole cards before a showdown, nor after a fold", () => {
    let showdowns = 0;
    let folds = 0;
    for (
      const [name, cfg] of [["hunl", config({ hands: 3 })], ["hulhe", config({ hands: 3 }, "hulhe")], [
        "small",
        config({ hands: 3 }, "small"),
      ]] as const
    ) {
      for (let i = 0; i < 40; i++) {
        playout(cfg, `${name}-${i}`, (state) => {
          const over = holdem.toAct(state).length === 0;
          const def = gamedefOf(cfg);
          const shown = over && holdem.observe(state, "public").shownCards[0] !== null;
          for (const viewer of [0, 1, "public"] as const) {
            const obs = holdem.observe(state, viewer);
            const hidden = viewer === "public" ? [0, 1] : [1 - viewer];
            const hiddenCards = hidden.flatMap((s) => holeOf(state, s));
            if (!shown) {
              // Outside the finished hands' summaries, no other seat's hole card may appear anywhere.
              const { recentHands: _, ...current } = obs;
              const texts = JSON.stringify(current).match(/"[2-9TJQKA][cdhs]"/g) ?? [];
              for (const card of hiddenCards) expect(texts).not.toContain(`"${card}"`);
              const text = holdem.describe({ ...obs, recentHands: [] } as HoldemObservation);
              for (const card of hiddenCards) expect(text.match(CARD_TOKEN) ?? []).not.toContain(card);
              for (const s of hidden) expect(obs.shownCards[s]).toBeNull();
              if (obs.matchstate) {
                const ms = parseMatchState(obs.matchstate, def);
                expect(ms.holeCards[1 - ms.position]).toBeNull();
              }
            }
            // Finished hands show the other's cards exactly when they went to a showdown.
            for (const s of obs.recentHands) {
              for (const seat of hidden) expect(s.shownCards[seat] !== null).toBe(s.showdown);
              if (s.matchstate) {
                const ms = parseMatchState(s.matchstate, def);
                expect(ms.holeCards[1 - ms.position] !== null).toBe(s.showdown);
              }
            }
          }
          if (over) {
            const recent = holdem.observe(state, "public").recentHands;
            showdowns += recent.filter((s) => s.showdown).length;
            folds += recent.filter((s) => !s.showdown).length;
          }
        });
      }
    }
    // Both kinds of ending happened, so both branches were checked.
    expect(showdowns).toBeGreaterThan(20);
    expect(folds).toBeGreaterThan(20);
  });

  it("shows both hands, their values and the winner after a showdown", () => {
    const rng = new Rng(16);
    const state = holdem.init(hunl, rng);
    setCards(state, ["7h7d", "AsKd"], "7c2s9hTd3c");
    play(state, rng, "c", "k", "k", "k", "k", "k", "k", "k");
    const obs = holdem.observe(state, 1);
    expect(obs.shownCards).toEqual([["7h", "7d"], ["As", "Kd"]]);
    expect(obs.recentHands[0].bestHands).toEqual(["three of a kind, sevens, kickers T 9", "high card, A K T 9 7"]);
    expect(obs.totals).toEqual([100, -100]);
    const text = holdem.describe(obs);
    expect(text).toMatch(/The other player's hole cards: 7h 7d\./);
    expect(text).toMatch(
      /Hand 1 \(cc\/cc\/cc\/cc\): showdown, board 7c 2s 9h Td 3c: you As Kd \(high card, A K T 9 7\), the other player 7h 7d \(three of a kind, sevens, kickers T 9\); you -100\./,
    );
  });
});

describe("holdem: observations and rules", () => {
  it("describes the seat's situation and the actions it may take", () => {
    const rng = new Rng(17);
    const state = holdem.init(hunl, rng);
    setCards(state, ["9c9s", "AhKh"], "Qh7h2c3d4s");
    play(state, rng, "r300");
    const text = holdem.describe(holdem.observe(state, 0));
    expect(text).toMatch(/You are player 0\./);
    expect(text).toMatch(/Your hole cards: 9c 9s\./);
    expect(text).toMatch(/Board: no cards yet \(preflop\)\./);
    expect(text).toMatch(/This hand so far: preflop: the other player raised to 300\./);
    expect(text).toMatch(
      /Your turn: 200 to call\. You may fold, or call 200, or raise to any total from 500 to 20000\./,
    );
    expect(text).not.toMatch(/Ah|Kh/);
    play(state, rng, "c");
    expect(holdem.describe(holdem.observe(state, 1))).toMatch(
      /Board: Qh 7h 2c \(flop\)\.[\s\S]*Waiting for the other player/,
    );
    expect(holdem.describe(holdem.observe(state, "public"))).toMatch(/You are watching[\s\S]*Player 0 is to act\./);
  });

  it("states the structure in the rules, with the ACPC game definition", () => {
    const text = holdem.rules(hunl);
    expect(text).toMatch(/no-limit/);
    expect(text).toMatch(/Position 0 posts a blind of 100 and position 1 a blind of 50/);
    expect(text).toMatch(/flop: 3 board cards, position 0 acts first/);
    expect(text).toContain(HUNL_GAMEDEF);
    expect(holdem.rules(hulhe)).toMatch(/Limit betting: every raise adds a fixed amount to the bet \(10, 10, 20, 20/);
    expect(holdem.rules(small)).toMatch(/its 2 card\(s\), hole plus board: pairs beat high cards/);
  });

  it("deals distinct cards, each card about equally often", () => {
    const counts = new Array(52).fill(0);
    const n = 20_000;
    for (let seed = 0; seed < n; seed++) {
      const state = holdem.init(hunl, new Rng(seed));
      expect(new Set(state.cards).size).toBe(9);
      for (const c of state.cards) counts[c]++;
    }
    // 9 of 52 cards a deal: mean ≈ 3462, σ ≈ 54; 6σ.
    for (const c of counts) expect(Math.abs(c - (n * 9) / 52)).toBeLessThan(330);
  });

  it("copies states deeply", () => {
    const rng = new Rng(18);
    const state = holdem.init(config({ hands: 2 }), rng);
    play(state, rng, "c");
    const copy = holdem.clone(state);
    const before = JSON.stringify(holdem.observe(copy, 0));
    play(state, rng, "r400", "f", "f");
    expect(JSON.stringify(holdem.observe(copy, 0))).toBe(before);
    expect(holdem.toAct(copy)).toEqual([0]);
  });
});

describe("holdem: explicit chance", () => {
  it("deals each card as its own chance event, none pending once a seat is to act", () => {
    const state = holdem.start(hunl);
    expect(holdem.toAct(state)).toEqual([]);
    expect(holdem.legal(state, 1)).toEqual([]);
    expect(error(holdem.parse("call", state, 1)).message).toMatch(/the cards are being dealt/);
    const sizes: number[] = [];
    for (let odds = holdem.chance(state); odds.length > 0; odds = holdem.chance(state)) {
      sizes.push(odds.length);
      expect(odds.every((p) => p === 1 / odds.length)).toBe(true);
      holdem.resolve(state, 0);
    }
    // Two hole cards each, then five board cards, from the 52-card deck.
    expect(sizes).toEqual([52, 51, 50, 49, 48, 47, 46, 45, 44]);
    expect(holdem.toAct(state)).toEqual([1]);
    // Outcome 0 is always the first undealt card of the deck: 2c, 2d, ... in deck order.
    expect(holdem.observe(state, 0).holeCards).toEqual(["2c", "2d"]);
    expect(holdem.observe(state, 1).holeCards).toEqual(["2h", "2s"]);
    expect(holdem.observe(state, 0).board).toEqual([]);
    holdem.play(state, [undefined, { type: "fold" }]);
    expect(holdem.returns(state)).toEqual([50, -50]);
    expect(holdem.chance(state)).toEqual([]);
  });

  it("leaves the next hand's deal pending after the last action of a hand, and shows no card before it is dealt", () => {
    const state = holdem.init(config({ hands: 2 }), new Rng(21));
    holdem.play(state, [undefined, { type: "fold" }]);
    expect(holdem.toAct(state)).toEqual([]);
    expect(holdem.chance(state)).toHaveLength(52);
    const obs = holdem.observe(state, 0);
    expect([obs.hand, obs.holeCards, obs.board, obs.matchstate]).toEqual([2, [], [], "MATCHSTATE:1:1::|"]);
    holdem.resolve(state, 5);
    holdem.resolve(state, 0);
    // Hand 2: seat 0 holds position 1, whose hole cards are the deal's third and fourth.
    expect(holdem.observe(state, 1).holeCards).toHaveLength(2);
    expect(holdem.observe(state, 0).holeCards).toEqual([]);
  });

  it("draws the same cards as the partial Fisher–Yates shuffle every deal always made", () => {
    const cfg = config({ hands: 3 }, "small");
    for (let seed = 0; seed < 50; seed++) {
      const rng = new Rng(seed);
      const state = holdem.init(cfg, rng);
      const shuffler = new Rng(seed);
      const deck = deckOf(6, 4);
      const deal = () => {
        const cards: number[] = [];
        for (let i = 0; i < 3; i++) {
          const j = i + shuffler.int(deck.length - i);
          [deck[i], deck[j]] = [deck[j], deck[i]];
          cards.push(deck[i]);
        }
        return cards;
      };
      for (let hand = 0; hand < 3; hand++) {
        expect(Array.from(state.cards)).toEqual(deal());
        const seat = turn(state);
        holdem.apply(state, [
          seat === 0 ? { type: "raise", amount: 300 } : undefined,
          seat === 1 ? { type: "raise", amount: 300 } : undefined,
        ], rng);
        holdem.apply(state, seat === 0 ? [undefined, { type: "fold" }] : [{ type: "fold" }, undefined], rng);
      }
      expect(holdem.toAct(state)).toEqual([]);
      expect(rng.int(1000)).toBe(shuffler.int(1000));
    }
  });
});

describe("holdem: numeric face", () => {
  /** The legal mask of `seat` now. */
  function mask(state: HoldemState, seat: number): number[] {
    const out = new Uint8Array(holdem.actionCount(state.config));
    holdem.legalMask(state, seat, out);
    return Array.from(out);
  }

  function encoded(obs: HoldemObservation, cfg: HoldemConfig): number[] {
    const out = new Float32Array(holdem.observationShape(cfg)[0]).fill(7);
    holdem.encode(obs, out);
    return Array.from(out);
  }

  /** A tensor of `size` entries, zero but for `entries`, rounded to 32 bits as `encode` writes them. */
  function tensor(size: number, entries: Record<number, number>): number[] {
    const out = new Float32Array(size);
    for (const [at, value] of Object.entries(entries)) out[Number(at)] = value;
    return Array.from(out);
  }

  it("has 6 ids in no-limit, 3 in limit, and a tensor shape fixed by the structure and the hands", () => {
    expect([hunl, hulhe, small].map((c) => holdem.actionCount(c))).toEqual([6, 3, 6]);
    expect([hunl, hulhe, small].map((c) => holdem.observationShape(c))).toEqual([[1824], [1824], [866]]);
    // Finished hands get 5 entries each, up to the 10 an observation lists.
    expect(holdem.observationShape(config({ hands: 2 }))).toEqual([1829]);
    expect(holdem.observationShape(config({ hands: 1000 }, "small"))).toEqual([916]);
  });

  it("sizes no-limit raises by the pot after calling, as universal_poker does", () => {
    const rng = new Rng(22);
    const state = holdem.init(hunl, rng);
    // The small blind (seat 1): 50 to call into 150, so the pot after calling is 200.
    expect(mask(state, 1)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(mask(state, 0)).toEqual([0, 0, 0, 0, 0, 0]);
    expect([0, 1, 2, 3, 4, 5].map((id) => holdem.actionOf(id, state, 1))).toEqual([
      { type: "fold" },
      { type: "call" },
      { type: "raise", amount: 200 },
      { type: "raise", amount: 300 },
      { type: "raise", amount: 500 },
      { type: "raise", amount: 20000 },
    ]);
    expect(holdem.actionId({ type: "raise", amount: 500 }, state, 1)).toBe(4);
    expect(holdem.actionId({ type: "raise", amount: 250 }, state, 1)).toBe(-1);
    expect(holdem.actionId({ type: "call" }, state, 1)).toBe(1);
    expect(holdem.actionId({ type: "call" }, state, 0)).toBe(-1);
    expect(error(holdem.actionOf(2, state, 0)).code).toBe("not_your_turn");
    play(state, rng, "r5000");
    // 4,900 to call into 5,100: half the pot raises to 10,000, the pot to 15,000; twice the pot is all-in.
    expect(mask(state, 0)).toEqual([1, 1, 1, 1, 1, 0]);
    expect([2, 3, 4].map((id) => holdem.actionOf(id, state, 0))).toEqual([
      { type: "raise", amount: 10000 },
      { type: "raise", amount: 15000 },
      { type: "raise", amount: 20000 },
    ]);
    expect(holdem.actionId({ type: "raise", amount: 20000 }, state, 0)).toBe(4);
    const allIn = error(holdem.actionOf(5, state, 0));
    expect(allIn.code).toBe("illegal_action");
    expect(allIn.message).toMatch(/action id 5 is not legal now.*ids 0, 1, 2, 3, 4/);
    expect(error(holdem.actionOf(6, state, 0)).message).toMatch(/out of range: ids are integers in \[0, 5\]/);
    play(state, rng, "c");
    // Flop: nothing to call, so no fold; with a pot of 10,000 and 15,000 behind, twice the pot is all-in.
    expect(mask(state, 0)).toEqual([0, 1, 1, 1, 1, 0]);
    expect([1, 2, 3, 4].map((id) => holdem.actionOf(id, state, 0))).toEqual([
      { type: "check" },
      { type: "raise", amount: 10000 },
      { type: "raise", amount: 15000 },
      { type: "raise", amount: 20000 },
    ]);
  });

  it("offers only the raises a short stack or a raise cap allows", () => {
    const gamedef = HUNL_GAMEDEF.replace("stack = 20000 20000", "stack = 20000 350");
    const rng = new Rng(23);
    const state = holdem.init(config({ gamedef }), rng);
    // Seat 1 has 350: half the pot (200) and the pot (300) fit; twice the pot is all-in, and the all-in id repeats it.
    expect(mask(state, 1)).toEqual([1, 1, 1, 1, 1, 0]);
    expect(holdem.actionOf(4, state, 1)).toEqual({ type: "raise", amount: 350 });
    play(state, rng, "all-in");
    expect(mask(state, 0)).toEqual([1, 1, 0, 0, 0, 0]);
    const limit = holdem.init(hulhe, rng);
    expect(mask(limit, 1)).toEqual([1, 1, 1]);
    expect(holdem.actionOf(2, limit, 1)).toEqual({ type: "raise", amount: 20 });
    expect(holdem.actionId({ type: "raise", amount: 20 }, limit, 1)).toBe(2);
    play(limit, rng, "r", "r", "r");
    expect(mask(limit, 0)).toEqual([1, 1, 0]);
    expect(holdem.actionOf(1, limit, 0)).toEqual({ type: "call" });
  });

  it("encodes a hand in progress: cards, chips by the stack, and the actions round by round", () => {
    const rng = new Rng(24);
    const state = holdem.init(small, rng);
    setCards(state, ["5c", "5d"], "7s");
    play(state, rng, "c", "r300");
    const obs = holdem.observe(state, 0);
    // Offsets in the small game (24 cards, 1 round with board cards, 2 rounds): seat 0, positions 2,
    // shown cards 4 and 28, board 52, round 76, to act 78, may raise 80, over 81, chips 82 (pot, committed,
    // behind, blinds, to call, raise range, totals), no stack limit 94, progress 96, actions 98.
    const s = 1200;
    expect(encoded(obs, small)).toEqual(tensor(866, {
      0: 1,
      3: 1,
      [4 + 12]: 1, // 5c: rank 3 × 4 suits + clubs
      76: 1,
      78: 1,
      80: 1,
      82: 400 / s,
      83: 100 / s,
      84: 300 / s,
      85: 1100 / s,
      86: 900 / s,
      87: 100 / s,
      88: 100 / s,
      89: 200 / s,
      90: 500 / s,
      91: 1,
      97: 1,
      [98 + 1]: 1, // seat 0 checked, to 100
      [98 + 5]: 100 / s,
      [104 + 3]: 1, // seat 1 raised, to 300
      [104 + 4]: 1,
      [104 + 5]: 300 / s,
    }));
    play(state, rng, "c", "c", "c");
    // A showdown: both hands and the board card are shown, and the seats split the pot of 600.
    const end = holdem.observe(state, "public");
    expect(encoded(end, small)).toEqual(tensor(866, {
      2: 0,
      3: 1,
      [4 + 12]: 1,
      [28 + 13]: 1, // 5d
      [52 + 23]: 1, // 7s: rank 5 × 4 + spades
      77: 1,
      81: 1,
      82: 600 / s,
      83: 300 / s,
      84: 300 / s,
      85: 900 / s,
      86: 900 / s,
      87: 100 / s,
      88: 100 / s,
      97: 1,
      [98 + 1]: 1,
      [98 + 5]: 100 / s,
      [104 + 3]: 1,
      [104 + 4]: 1,
      [104 + 5]: 300 / s,
      [110 + 2]: 1, // seat 0 called, to 300
      [110 + 5]: 300 / s,
      [98 + 64 * 6 + 1]: 1, // round 2: both checked
      [98 + 64 * 6 + 5]: 300 / s,
      [98 + 65 * 6 + 1]: 1,
      [98 + 65 * 6 + 4]: 1,
      [98 + 65 * 6 + 5]: 300 / s,
    }));
  });

  it("encodes the finished hands and the match's progress, newest hand first", () => {
    const cfg = config({ hands: 3 }, "small");
    const rng = new Rng(25);
    const state = holdem.init(cfg, rng);
    play(state, rng, "r300", "f");
    const obs = holdem.observe(state, 1);
    const t = encoded(obs, cfg);
    expect(t).toHaveLength(876);
    // Seat 1, now position 0, to act in hand 2 of 3, 100 chips down.
    expect(t.slice(0, 4)).toEqual([0, 1, 1, 0]);
    expect(t.slice(92, 98)).toEqual([100 / 1200, -100 / 1200, 0, 0, 1 / 3, 0].map(Math.fround));
    // Hand 1: no showdown, seat 1 folded, seat 0 won 100; the second slot is empty.
    expect(t.slice(866)).toEqual([1, 0, 0, 1, 100 / 1200, 0, 0, 0, 0, 0].map(Math.fround));
  });

  it("writes finite numbers for a limit game without stacks, scaling chips by 100 big blinds", () => {
    const rng = new Rng(26);
    const state = holdem.init(hulhe, rng);
    play(state, rng, "r");
    const t = encoded(holdem.observe(state, 0), hulhe);
    expect(t.every(Number.isFinite)).toBe(true);
    // Offsets with 52 cards, 3 rounds with board cards and 4 rounds: chips from 2 + 2 + 5 × 52 + 4 + 4 = 272.
    expect(t.slice(272, 284)).toEqual(
      [30 / 1000, 10 / 1000, 20 / 1000, 0, 0, 10 / 1000, 5 / 1000, 10 / 1000, 30 / 1000, 30 / 1000, 0, 0].map(
        Math.fround,
      ),
    );
    expect(t.slice(284, 286)).toEqual([1, 1]);
  });
});
