import { z } from "zod";
import { type ActionError, type ActionSpace, parseInput } from "../core/action.ts";
import { checkTalk, messageCharsKey, messagesKey } from "../core/config.ts";
import { defineGame, type Game, type Viewer } from "../core/game.ts";
import { idProblem, oneHot } from "../core/numeric.ts";

/** The iterated prisoner's dilemma: two seats choose at once, every round, for a fixed number of rounds. */

const payoffsSchema = z.strictObject({
  reward: z.number().describe("each player's payoff when both cooperate (R)"),
  sucker: z.number().describe("the cooperator's payoff against a defector (S)"),
  temptation: z.number().describe("the defector's payoff against a cooperator (T)"),
  punishment: z.number().describe("each player's payoff when both defect (P)"),
});

/** Every decision's observation holds the whole history, so a match's stored observations grow with rounds². */
const MAX_ROUNDS = 500;

export const ipdConfig = z.strictObject({
  payoffs: payoffsSchema.default({ reward: 3, sucker: 0, temptation: 5, punishment: 1 })
    .describe("per-round payoffs; a dilemma needs T > R > P > S"),
  rounds: z.int().min(1).max(MAX_ROUNDS).default(10).describe(`rounds per match, at most ${MAX_ROUNDS}`),
  messages: messagesKey(0, "messages each player sends before every move (player 0 first, then alternating)"),
  messageChars: messageCharsKey(500, "rounds"),
}).check((ctx) => {
  checkTalk(ctx);
  const { reward: R, sucker: S, temptation: T, punishment: P } = ctx.value.payoffs;
  if (!(T > R && R > P && P > S)) {
    ctx.issues.push({
      code: "custom",
      input: ctx.value.payoffs,
      path: ["payoffs"],
      message: `a prisoner's dilemma needs temptation > reward > punishment > sucker, got T=${T} R=${R} P=${P} S=${S}`,
    });
  }
});
export type IpdConfig = z.infer<typeof ipdConfig>;

export type Move = "C" | "D";
export type IpdAction = { readonly type: "cooperate" } | { readonly type: "defect" } | {
  readonly type: "message";
  readonly text: string;
};

export interface IpdState {
  readonly config: IpdConfig;
  /** Rounds completed. */
  round: number;
  /** Messages sent in the current round. */
  said: number;
  /** 1 = defect, per round and seat: moves[2 * round + seat]. */
  readonly moves: Uint8Array;
  readonly totals: [number, number];
  readonly chat: { round: number; seat: number; text: string }[];
}

export interface IpdObservation {
  readonly game: "ipd";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  /** 1-based round being played (rounds + 1 once over). */
  readonly round: number;
  readonly rounds: number;
  readonly phase: "message" | "move" | "over";
  readonly payoffs: IpdConfig["payoffs"];
  /** Completed rounds: both moves and both payoffs, by seat. */
  readonly history: { readonly moves: [Move, Move]; readonly rewards: [number, number] }[];
  /** The last joint outcome as the opponent-shaping literature indexes it (seat 0's view): CC 0, CD 1, DC 2, DD 3, start 4. */
  readonly state: number;
  readonly totals: [number, number];
  /** Every message so far, with its 1-based round. */
  readonly chat: { readonly round: number; readonly seat: number; readonly text: string }[];
}

const COOPERATE = Object.freeze({ type: "cooperate" as const });
const DEFECT = Object.freeze({ type: "defect" as const });
const MOVE_SPACE: ActionSpace<IpdAction> = Object.freeze([
  Object.freeze({ kind: "fixed" as const, action: COOPERATE }),
  Object.freeze({ kind: "fixed" as const, action: DEFECT }),
]);
const NOTHING: ActionSpace<IpdAction> = Object.freeze([]);
const BOTH = Object.freeze([0, 1]);
const SEAT = [Object.freeze([0]), Object.freeze([1])];
const NOBODY: readonly number[] = Object.freeze([]);
const NO_REWARD = Object.freeze([0, 0]);
const NO_CHANCE: readonly number[] = Object.freeze([]);

/**
 * The numeric face. Action ids: 0 cooperate, 1 defect, and, only when the config has talk (`messages` > 0),
 * 2 for an empty message: the one message a numeric policy sends, so it can play every phase.
 *
 * Information-state tensor, shape [11 + 4·rounds], from the viewer's side (own first, then the other's;
 * the public view puts seat 0 first):
 * - [0, 2): the seat, one-hot (zeros for the public);
 * - [2, 5): the phase, one-hot: message, move, over;
 * - 5: rounds completed / rounds;
 * - 6: messages sent so far this round / 20 (the most a round holds); their text is not encoded;
 * - 7..10: the payoffs R, S, T, P as configured;
 * - then per round r < rounds, 4 entries: own move one-hot (C, D), the other's (C, D); zeros for rounds
 *   not played yet. Rewards and totals follow from the moves and the payoffs.
 */
const SILENCE = Object.freeze({ type: "message" as const, text: "" });
const ACTION_OF_ID: readonly IpdAction[] = [COOPERATE, DEFECT, SILENCE];
const SILENCE_ID = 2;
const HISTORY_AT = 11;
const PHASES: readonly IpdObservation["phase"][] = ["message", "move", "over"];
/** The most messages a round holds: 10 from each seat. */
const MOST_MESSAGES_PER_ROUND = 20;

/** Seat `seat`'s payoff when it plays `own` against `other` (0 = cooperate, 1 = defect). */
export function payoff(config: IpdConfig, own: number, other: number): number {
  const p = config.payoffs;
  return own === 0 ? (other === 0 ? p.reward : p.sucker) : (other === 0 ? p.temptation : p.punishment);
}

function phase(state: IpdState): IpdObservation["phase"] {
  if (state.round >= state.config.rounds) return "over";
  return state.said < 2 * state.config.messages ? "message" : "move";
}

const COOPERATE_WORDS = new Set(["c", "cooperate", "a", "0"]);
const DEFECT_WORDS = new Set(["d", "defect", "b", "1"]);
const TOKEN = /<\s*([ab])\s*>|\[\s*(cooperate|defect)\s*\]/gi;

/**
 * Text aliases of both conventions: `C`/`D`, `cooperate`/`defect`, `0`/`1` (the opponent-shaping
 * action ids), `<A>`/`<B>` (labels that hide the dilemma from a model) and `[Cooperate]`/`[Defect]`;
 * inside a longer answer, one such bracketed token decides.
 */
function moveAlias(text: string): IpdAction | undefined {
  const word = text.trim().toLowerCase().replace(/^[<[(]\s*|\s*[>\])]$/g, "");
  if (COOPERATE_WORDS.has(word)) return COOPERATE;
  if (DEFECT_WORDS.has(word)) return DEFECT;
  const found = new Set([...text.matchAll(TOKEN)].map((m) => (m[1] ?? m[2]).toLowerCase()));
  if (found.size !== 1) return undefined;
  const [token] = found;
  return token === "a" || token === "cooperate" ? COOPERATE : DEFECT;
}

function moveWord(m: Move): string {
  return m === "C" ? "cooperated" : "defected";
}

export const ipd: Game<IpdState, IpdAction, IpdConfig, IpdObservation> = defineGame<
  IpdState,
  IpdAction,
  IpdConfig,
  IpdObservation
>({
  id: "ipd",
  version: 1,
  title: "Iterated prisoner's dilemma",
  summary: "Two players choose at the same time, every round, to cooperate or defect. Mutual " +
    "cooperation pays both the reward, mutual defection the punishment; a lone defector takes the " +
    "temptation while the cooperator gets the sucker's payoff. Raw payoffs add up over the rounds; " +
    "optional messages before each move let players talk.",
  utility: "general-sum",
  chanceMode: "deterministic",
  information: "imperfect",
  dynamics: "simultaneous",
  answerExample: "cooperate",
  caps: { rounds: 500, messages: 10, messageChars: 10_000 },
  seats: { min: 2, max: 2 },
  schema: ipdConfig,
  variants: {
    classic: {
      description: "R=3, S=0, T=5, P=1 for 10 rounds: the payoffs LLM social-dilemma studies use",
      config: {},
    },
    lola: {
      description: "the opponent-shaping convention: CC −1, CD −3, DC 0, DD −2, 100 rounds, " +
        "with the 5-state (last joint move or start) observation",
      config: { payoffs: { reward: -1, sucker: -3, temptation: 0, punishment: -2 }, rounds: 100 },
    },
  },
  defaultVariant: "classic",

  seatCount: () => 2,
  // Talk takes turns; the moves are simultaneous.
  simultaneous: (config) => config.messages === 0,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const p = config.payoffs;
    const talk = config.messages > 0
      ? `Before each move the players exchange ${config.messages} message(s) each ` +
        `(player 0 first, at most ${config.messageChars} characters), which both can read. `
      : "";
    return `Iterated prisoner's dilemma for two players, ${config.rounds} rounds. ${talk}` +
      "In each round both players choose at the same time to cooperate or defect; neither sees the " +
      "other's choice until the round is over. Payoffs per round (you / the other player): both " +
      `cooperate ${p.reward} / ${p.reward}; you cooperate, they defect ${p.sucker} / ${p.temptation}; ` +
      `you defect, they cooperate ${p.temptation} / ${p.sucker}; both defect ${p.punishment} / ${p.punishment}. ` +
      "Your score is the sum of your payoffs over all rounds.";
  },

  start(config) {
    return { config, round: 0, said: 0, moves: new Uint8Array(2 * config.rounds), totals: [0, 0], chat: [] };
  },

  // The dilemma has no chance events.
  chance: () => NO_CHANCE,
  resolve() {
    throw new RangeError("the iterated prisoner's dilemma has no chance events");
  },

  toAct(state) {
    if (state.round >= state.config.rounds) return NOBODY;
    return state.said < 2 * state.config.messages ? SEAT[state.said % 2] : BOTH;
  },

  legal(state, seat) {
    if (state.round >= state.config.rounds) return NOTHING;
    if (state.said < 2 * state.config.messages) {
      return state.said % 2 === seat
        ? [{ kind: "text", type: "message", maxLength: state.config.messageChars }]
        : NOTHING;
    }
    return seat === 0 || seat === 1 ? MOVE_SPACE : NOTHING;
  },

  play(state, moves) {
    if (state.said < 2 * state.config.messages) {
      const seat = state.said % 2;
      const action = moves[seat] as { text: string };
      state.chat.push({ round: state.round + 1, seat, text: action.text });
      state.said++;
      return NO_REWARD;
    }
    const a0 = moves[0]!.type === "defect" ? 1 : 0;
    const a1 = moves[1]!.type === "defect" ? 1 : 0;
    const r0 = payoff(state.config, a0, a1);
    const r1 = payoff(state.config, a1, a0);
    state.moves[2 * state.round] = a0;
    state.moves[2 * state.round + 1] = a1;
    state.totals[0] += r0;
    state.totals[1] += r1;
    state.round++;
    state.said = 0;
    return [r0, r1];
  },

  returns: (state) => [state.totals[0], state.totals[1]],

  observe(state, viewer: Viewer) {
    const history: IpdObservation["history"] = [];
    for (let r = 0; r < state.round; r++) {
      const a0 = state.moves[2 * r];
      const a1 = state.moves[2 * r + 1];
      history.push({
        moves: [a0 ? "D" : "C", a1 ? "D" : "C"],
        rewards: [payoff(state.config, a0, a1), payoff(state.config, a1, a0)],
      });
    }
    const last = state.round - 1;
    return {
      game: "ipd",
      seat: viewer,
      round: state.round + 1,
      rounds: state.config.rounds,
      phase: phase(state),
      payoffs: { ...state.config.payoffs },
      history,
      state: last < 0 ? 4 : state.moves[2 * last] * 2 + state.moves[2 * last + 1],
      totals: [state.totals[0], state.totals[1]],
      chat: state.chat.map((m) => ({ ...m })),
    };
  },

  describe(obs) {
    const me = obs.seat === "public" ? 0 : obs.seat;
    const other = 1 - me;
    const spectator = obs.seat === "public";
    const lines: string[] = [];
    if (obs.phase === "over") {
      lines.push(`The match is over after ${obs.rounds} rounds.`);
    } else {
      lines.push(`Round ${obs.round} of ${obs.rounds}.`);
    }
    lines.push(spectator ? "You are watching; player 0 is listed first." : `You are player ${me}.`);
    if (obs.history.length === 0) {
      lines.push("No rounds have been played yet.");
    } else {
      lines.push("Previous rounds:");
      obs.history.forEach((h, i) => {
        const who = spectator ? ["Player 0", "player 1"] : ["You", "the other player"];
        lines.push(
          `- Round ${i + 1}: ${who[0]} ${moveWord(h.moves[me])} and ${who[1]} ${moveWord(h.moves[other])}` +
            ` (${h.rewards[me]} / ${h.rewards[other]}).`,
        );
      });
    }
    lines.push(
      spectator
        ? `Totals: player 0 ${obs.totals[0]}, player 1 ${obs.totals[1]}.`
        : `Your total is ${obs.totals[me]}; the other player's total is ${obs.totals[other]}.`,
    );
    const thisRound = obs.chat.filter((m) => m.round === obs.round);
    for (const m of thisRound) {
      lines.push(`${spectator ? `Player ${m.seat}` : m.seat === me ? "You" : "The other player"} said: ${m.text}`);
    }
    if (!spectator && obs.phase === "message") lines.push("Send your message to the other player.");
    if (!spectator && obs.phase === "move") lines.push("Choose: cooperate or defect.");
    return lines.join("\n");
  },

  parse(input, state, seat): IpdAction | ActionError {
    const space = ipd.legal(state, seat);
    const inMessagePhase = space.length > 0 && space[0].kind === "text";
    // In the talk any text is the message, unless it is written in the generic form (`message hello`).
    return parseInput(space, input, inMessagePhase ? undefined : moveAlias, true);
  },

  clone(state) {
    return {
      config: state.config,
      round: state.round,
      said: state.said,
      moves: state.moves.slice(),
      totals: [state.totals[0], state.totals[1]],
      chat: state.chat.map((m) => ({ ...m })),
    };
  },

  actionCount: (config) => (config.messages > 0 ? 3 : 2),

  actionId(action) {
    if (action.type === "cooperate") return 0;
    if (action.type === "defect") return 1;
    return action.text === "" ? SILENCE_ID : -1;
  },

  actionOf(id, state, seat) {
    const mask = new Uint8Array(ipd.actionCount(state.config));
    ipd.legalMask(state, seat, mask);
    return idProblem(id, mask) ?? ACTION_OF_ID[id];
  },

  legalMask(state, seat, out) {
    out.fill(0);
    if (state.round >= state.config.rounds || (seat !== 0 && seat !== 1)) return;
    if (state.said < 2 * state.config.messages) {
      if (state.said % 2 === seat) out[SILENCE_ID] = 1;
    } else {
      out[0] = 1;
      out[1] = 1;
    }
  },

  observationShape: (config) => [HISTORY_AT + 4 * config.rounds],

  encode(obs, out) {
    out.fill(0);
    const me = obs.seat === "public" ? 0 : obs.seat;
    if (obs.seat !== "public") out[me] = 1;
    oneHot(out, 2, 3, PHASES.indexOf(obs.phase));
    const history = obs.history;
    out[5] = history.length / obs.rounds;
    let said = 0;
    for (let i = obs.chat.length - 1; i >= 0 && obs.chat[i].round === obs.round; i--) said++;
    out[6] = said / MOST_MESSAGES_PER_ROUND;
    const p = obs.payoffs;
    out[7] = p.reward;
    out[8] = p.sucker;
    out[9] = p.temptation;
    out[10] = p.punishment;
    for (let r = 0; r < history.length; r++) {
      const moves = history[r].moves;
      const at = HISTORY_AT + 4 * r;
      out[at + (moves[me] === "D" ? 1 : 0)] = 1;
      out[at + 2 + (moves[1 - me] === "D" ? 1 : 0)] = 1;
    }
  },
});
