import { z } from "zod";
import {
  type ActionError,
  type ActionSpace,
  AMOUNT_SYNTAX,
  type AmountForm,
  parseInput,
  parseJsonAction,
  readAmount,
} from "../core/action.ts";
import { defineGame, type Game, type Viewer } from "../core/game.ts";
import { idProblem, oneHot } from "../core/numeric.ts";
import { buildSchedule, identitySchedule, type Schedule } from "./schedule.ts";
import {
  DONATE,
  PUNISH,
  REFUSE,
  startTrace,
  TRACE_KINDS,
  traceEntries,
  type TraceEntry,
  TraceNode,
  units,
} from "./trace.ts";

/**
 * The Donor Game with cultural evolution (Vallinder & Hughes 2024): a population of agents, paired
 * every round as donor and recipient; a donation is multiplied on arrival, so everyone gains if
 * donors give, but each donor gains by keeping. Donors judge recipients only by a short trace of
 * what the recipient, and those it met before, did.
 */

export type Mechanism = "standard" | "costly-punishment" | "partner-choice";

/** A match has agents² decisions (agents/2 donors in each of agents rounds, two games). */
const MAX_AGENTS = 100;
const MAX_TRACE_DEPTH = 5;
const MAX_NAME = 40;

export const donorConfig = z.strictObject({
  agents: z.int().min(2).max(MAX_AGENTS).default(12).describe(
    `agents in the population, one per seat, at most ${MAX_AGENTS}; even, as they are split into two groups of ` +
      "agents/2",
  ),
  games: z.int().min(1).max(2).default(2)
    .describe("games per match, 1 or 2: game 2 resets resources to the endowment and reverses every pair of game 1"),
  endowment: z.number().positive().max(1e9).default(10).describe("each agent's resources at the start of every game"),
  cooperationGain: z.number().min(0).max(1000).default(2).describe(
    "the recipient receives this multiple of a donation",
  ),
  punishmentLoss: z.number().min(0).max(1000).default(2)
    .describe("costly punishment: the recipient loses this multiple of what the donor spends (never below 0)"),
  mechanism: z.enum(["standard", "costly-punishment", "partner-choice"]).default("standard")
    .describe("what a donor may do besides donating: nothing more, punish, or refuse to play"),
  shuffle: z.boolean().default(true)
    .describe("shuffle agents into the two groups with the match seed; false puts seat k in group A for k < agents/2"),
  carryTraces: z.boolean().default(true)
    .describe(
      "game 2 keeps the traces of game 1 (reputations persist); false starts game 2 afresh, as the reference notebook does",
    ),
  traceDepth: z.int().min(1).max(MAX_TRACE_DEPTH).default(3)
    .describe(`how many of the recipient's newest trace entries a donor sees, at most ${MAX_TRACE_DEPTH}`),
  names: z.array(z.string().regex(/\S/, "a name must not be blank").max(MAX_NAME)).optional().describe(
    `the agents' names by seat, all distinct, each at most ${MAX_NAME} characters (default agent-1 … agent-N): ` +
      "identity kept across matches",
  ),
  generation: z.int().min(1).default(1).describe("the population's generation, shown to agents"),
}).check((ctx) => {
  const { agents, names } = ctx.value;
  if (agents % 2 !== 0) {
    ctx.issues.push({ code: "custom", input: agents, path: ["agents"], message: `agents must be even, got ${agents}` });
  }
  if (names !== undefined && names.length !== agents) {
    ctx.issues.push({
      code: "custom",
      input: names,
      path: ["names"],
      message: `names must give one name per agent (${agents}), got ${names.length}`,
    });
  }
  const repeated = names?.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) {
    ctx.issues.push({ code: "custom", input: names, path: ["names"], message: `names must be distinct: ${repeated}` });
  }
});
export type DonorConfig = z.infer<typeof donorConfig>;

export type DonorAction =
  | { readonly type: "donate"; readonly amount: number }
  | { readonly type: "punish"; readonly amount: number }
  | { readonly type: "refuse" };

export interface DonorState {
  readonly config: DonorConfig;
  readonly names: readonly string[];
  /** The seats in seating order, group A first: seat k at k until the shuffle draws them. */
  readonly order: number[];
  /**
   * The shuffle's next chance event (Fisher–Yates from the end): order[shuffling] swaps with a uniform
   * position in [0, shuffling]; 0 once the seating is drawn, or from the start when it is not shuffled.
   */
  shuffling: number;
  /**
   * Immutable; shared between clones (and between unshuffled matches). The unshuffled schedule until the
   * seating is drawn, so a state waiting on chance still reads as a match, with nobody to act.
   */
  schedule: Schedule;
  /** 0-based game being played; config.games once the match is over. */
  game: number;
  /** 0-based round within the game. */
  round: number;
  readonly resources: Float64Array;
  /** finals[game · agents + seat]: resources at the end of each finished game. */
  readonly finals: Float64Array;
  /** Each agent's trace, newest entry first; nodes are immutable, so clones share them. */
  readonly traces: TraceNode[];
}

export type DonorRole = "donor" | "recipient" | "over";

export interface DonorSeatView {
  readonly name: string;
  readonly resources: number;
  readonly role: DonorRole;
  /** This round's partner and its current resources; null once over. */
  readonly partner: { readonly name: string; readonly resources: number } | null;
  /** For a donor: the recipient's newest trace entries, newest first; otherwise empty. */
  readonly recipientTrace: TraceEntry[];
  /** The agent's resources at the end of each finished game. */
  readonly results: number[];
}

export interface DonorObservation {
  readonly game: "donor-game";
  /** The viewer's seat, or "public". */
  readonly seat: number | "public";
  readonly generation: number;
  readonly mechanism: Mechanism;
  readonly endowment: number;
  readonly cooperationGain: number;
  readonly punishmentLoss: number;
  readonly phase: "play" | "over";
  /** 1-based game and round being played; once over, the last ones played. */
  readonly gameNumber: number;
  readonly games: number;
  readonly round: number;
  readonly rounds: number;
  /** The seat's own view; null for the public. */
  readonly you: DonorSeatView | null;
  /** Public view only (else null): every agent by seat, with its group and current resources. */
  readonly agents: { readonly name: string; readonly group: "A" | "B"; readonly resources: number }[] | null;
  /** Public view only (else null): this round's pairs, as seats; empty once over. */
  readonly pairs: { readonly donor: number; readonly recipient: number }[] | null;
  /** Public view only (else null): every agent's resources at the end of each finished game. */
  readonly finals: number[][] | null;
}

const REFUSE_ACTION = Object.freeze({ type: "refuse" as const });
const REFUSE_FORM = Object.freeze({ kind: "fixed" as const, action: REFUSE_ACTION });
const NOTHING: ActionSpace<DonorAction> = Object.freeze([]);
const NOBODY: readonly number[] = Object.freeze([]);
const NO_CHANCE: readonly number[] = Object.freeze([]);
/** uniform[n]: n equally likely outcomes, built once per n. */
const uniform: (readonly number[])[] = [];

function uniformOdds(n: number): readonly number[] {
  return uniform[n] ??= Object.freeze(new Array<number>(n).fill(1 / n));
}

function amountForm(type: "donate" | "punish", max: number): AmountForm {
  return { kind: "amount", type, min: 0, max, integer: false };
}

let defaultNames: readonly string[] = [];

/** agent-1 … agent-N; the last list is kept, since most matches use the same N. */
function namesFor(config: DonorConfig): readonly string[] {
  if (config.names) return config.names;
  if (defaultNames.length !== config.agents) {
    defaultNames = Object.freeze(Array.from({ length: config.agents }, (_, k) => `agent-${k + 1}`));
  }
  return defaultNames;
}

function isOver(state: DonorState): boolean {
  return state.game >= state.config.games;
}

/** Whether seats act now: the seating is drawn and the match is not over. */
function isPlaying(state: DonorState): boolean {
  return state.shuffling === 0 && !isOver(state);
}

/** Whether `seat` gives in the current round (game 2 reverses game 1's roles). */
function isDonor(state: DonorState, seat: number): boolean {
  return state.schedule.giver[state.round * state.config.agents + seat] === (state.game === 0 ? 1 : 0);
}

const ANSWER = /answer\s*:/i;
const { number: NUMBER, percent: PERCENT, largest: ALL } = AMOUNT_SYNTAX;
/** An answer that starts with an amount (a number, a percentage of one's resources), or is only `all`. */
const LEADING_AMOUNT = new RegExp(String.raw`^\s*(${NUMBER}(?:${PERCENT})?|${ALL}\s*[.!]?\s*$)`, "i");
/** `Donate, 3`, `punish 10%`, `donate all`: the word for all only right after the verb. */
const VERB_AMOUNT = new RegExp(String.raw`\b(donate|punish)\b(?:[\s,:]*(${ALL})|\D*?(${NUMBER}(?:${PERCENT})?))`, "i");

/**
 * The reference notebook's answer forms: whatever follows the first `Answer:`; a leading amount is a
 * donation; `Donate, 3` / `Punish, 2,5` (any case, decimal comma allowed); in partner choice any
 * mention of `refuse`. An amount may be a percentage of the donor's resources (`50%`) or `all`
 * (`everything`, `max`). A negative amount is read as written, so the space refuses it.
 */
function answerAlias(
  text: string,
  space: ActionSpace<DonorAction>,
  mechanism: Mechanism,
  resources: number,
): DonorAction | ActionError | undefined {
  const at = ANSWER.exec(text);
  const answer = at ? text.slice(at.index + at[0].length) : text;
  if (mechanism === "partner-choice" && answer.toLowerCase().includes("refuse")) return REFUSE_ACTION;
  const leading = LEADING_AMOUNT.exec(answer);
  const verb = leading ? undefined : VERB_AMOUNT.exec(answer);
  if (!leading && !verb) return undefined;
  const type = verb ? verb[1].toLowerCase() : "donate";
  const form = space.find((f): f is AmountForm => f.kind === "amount" && f.type === type);
  // Not a form here (punish in the standard game): the space says what is legal instead.
  if (form === undefined) return parseJsonAction(space, { type }) as ActionError;
  return readAmount(space, form, leading ? leading[1] : verb![2] ?? verb![3], resources) as DonorAction | ActionError;
}

function mechanismRules(config: DonorConfig): string {
  switch (config.mechanism) {
    case "costly-punishment":
      return "Instead of donating, the donor may punish: it spends x units (again from 0 to all it has) " +
        `and the recipient loses ${config.punishmentLoss}·x units, though never going below 0. `;
    case "partner-choice":
      return "Instead of donating, the donor may refuse to play with the recipient: nothing changes hands. ";
    case "standard":
      return "";
  }
}

function answerHint(mechanism: Mechanism): string {
  const amounts = "An amount is a number, a percentage of what you have (`50%`), or `all`.";
  switch (mechanism) {
    case "costly-punishment":
      return "Answer with `donate <x>` or `punish <x>` (for example `Donate, 2.5`), or JSON such as " +
        `{"type":"punish","amount":1}. ${amounts}`;
    case "partner-choice":
      return "Answer with the amount you give (for example `2.5`), `refuse`, or JSON such as " +
        `{"type":"donate","amount":2.5}. ${amounts}`;
    case "standard":
      return 'Answer with the amount you give (for example `2.5`), or JSON such as {"type":"donate","amount":2.5}. ' +
        amounts;
  }
}

/**
 * The numeric face. Action ids give a fraction of the donor's resources now, k/10 for k = 0..10:
 * - 0..10: donate k/10 of one's resources;
 * - costly-punishment, 11..21: punish, spending (id − 11)/10 of one's resources;
 * - partner-choice, 11: refuse.
 * So actionCount is 11 (standard), 22 (costly-punishment) or 12 (partner-choice). An amount off this grid
 * has no id (-1). Where fractions give the same amount (a donor with nothing gives 0 whatever the fraction),
 * only the smallest such id is legal.
 *
 * Information-state tensor, shape [8 + 2·games + 8·traceDepth], of what the seat's observation shows (it
 * holds no record of the seat's own past moves, so neither does the tensor). Resources and amounts are in
 * endowments, saturating at the largest float32:
 * - [0, 3): the role this round, one-hot: donor, recipient, over (zeros for the public);
 * - [3, 3 + games): the game being played, one-hot;
 * - 3 + games: (round − 1) / rounds within that game;
 * - then own resources, the partner's resources (0 once over);
 * - then own resources at the end of each finished game, one per game (0 until it is finished);
 * - then cooperationGain and punishmentLoss as configured;
 * - then traceDepth entries of the recipient's trace, newest first (a donor's only; zeros otherwise, and
 *   past the trace's end), 8 each: its kind one-hot (start, donate, punish, refuse), the share of its donor's
 *   resources given or spent (percent / 100), the amount, 1 when its recipient is the viewing seat, and
 *   when it happened: ((game − 1)·rounds + round) / (games·rounds), 0 for a start entry.
 * The public view fills only the progress and config entries.
 */
const STEPS = 10;
/** The first id after the donations: punish 0 in costly punishment, refuse in partner choice. */
const SECOND_FORM = STEPS + 1;
const ROLES: readonly DonorRole[] = ["donor", "recipient", "over"];
const TRACE_ENTRY_WIDTH = 8;
const FLOAT32_MAX = 3.4028234663852886e38;

/** `x` in endowments, kept finite in a float32. */
function inEndowments(x: number, endowment: number): number {
  return Math.min(x / endowment, FLOAT32_MAX);
}

/**
 * k/10 of `resources`: k·resources/10 (so 3/10 of 10 is 3, where 0.3·10 is not), and all of them for k = 10,
 * which the rounding of k·resources/10 could miss.
 */
function gridAmount(k: number, resources: number): number {
  return k === STEPS ? resources : (k * resources) / STEPS;
}

/** The id on the fraction grid for `amount` given out of `resources` (the smallest where several fit), or -1. */
function fractionId(amount: number, resources: number): number {
  for (let k = 0; k <= STEPS; k++) if (gridAmount(k, resources) === amount) return k;
  return -1;
}

export const donorGame: Game<DonorState, DonorAction, DonorConfig, DonorObservation> = defineGame<
  DonorState,
  DonorAction,
  DonorConfig,
  DonorObservation
>({
  id: "donor-game",
  version: 2,
  title: "Donor game",
  summary: "A population of agents meets in pairs, one donor and one recipient per pair and round. " +
    "The donor gives up any share of its resources and the recipient receives twice as much, so " +
    "giving makes the population rich while keeping makes the donor richer. Donors see the recipient's " +
    "trace: its last move and the moves of those it met before. Variants add costly punishment or " +
    "refusing a partner.",
  utility: "general-sum",
  chanceMode: "explicit-stochastic",
  information: "imperfect",
  dynamics: "simultaneous",
  answerExample: "donate 2.5",
  caps: { agents: 100, traceDepth: 5, games: 2 },
  seats: { min: 2, max: MAX_AGENTS },
  schema: donorConfig,
  variants: {
    standard: { description: "donate any amount from 0 to all you have (the paper's main setting)", config: {} },
    "costly-punishment": {
      description: "a donor may instead spend x to take 2x from the recipient",
      config: { mechanism: "costly-punishment" },
    },
    "partner-choice": {
      description: "a donor may instead refuse to play with the recipient",
      config: { mechanism: "partner-choice" },
    },
  },
  defaultVariant: "standard",

  seatCount: (config) => config.agents,
  // Nothing in the config is private.
  publicConfig: (config) => config,

  rules(config) {
    const n = config.agents;
    const half = n / 2;
    const secondGame = config.games === 2
      ? `After game 1, everyone's resources go back to ${config.endowment} and game 2 replays every pair ` +
        `with the roles reversed. ${
          config.carryTraces ? "Traces carry over from game 1 into game 2." : "Traces start afresh in game 2."
        } `
      : "";
    return `Donor game for ${n} agents (generation ${config.generation}), ${config.games} game(s) of ${n} rounds. ` +
      `Every agent starts each game with ${config.endowment} units of a resource. The agents are split into ` +
      `two groups of ${half}. In every round each agent is paired with one agent of the other group: one is ` +
      `the donor, the other the recipient. Over a game you meet each agent of the other group twice, once ` +
      `in each role, and you are the donor in ${half} of the ${n} rounds; the roles mostly alternate from round ` +
      "to round, but not always. All pairs of a round act at the same time. " +
      `The donor chooses an amount x to give up, any real number from 0 to all it has; the recipient ` +
      `receives ${config.cooperationGain}·x. ${mechanismRules(config)}` +
      "A donor sees its own resources, the recipient's name and resources, and the recipient's trace: " +
      `its ${config.traceDepth} newest entries, newest first. When a donor acts, its trace becomes the ` +
      "recipient's trace plus a sentence on what the donor just did, so the first entry tells what the " +
      "recipient did in its last donation, the next what the recipient's own partner did before that, and " +
      `so on. Every agent's trace starts with a sentence saying it has had no interactions. ${secondGame}` +
      "Your score is the sum of your resources at the end of each game.";
  },

  start(config) {
    const n = config.agents;
    return {
      config,
      names: namesFor(config),
      order: Array.from({ length: n }, (_, k) => k),
      shuffling: config.shuffle ? n - 1 : 0,
      schedule: identitySchedule(n),
      game: 0,
      round: 0,
      resources: new Float64Array(n).fill(config.endowment),
      finals: new Float64Array(config.games * n),
      traces: Array.from({ length: n }, (_, seat) => startTrace(seat)),
    };
  },

  chance: (state) => (state.shuffling > 0 ? uniformOdds(state.shuffling + 1) : NO_CHANCE),

  resolve(state, outcome) {
    const i = state.shuffling;
    if (i === 0) throw new RangeError("no chance event is due: the seating is drawn");
    const { order } = state;
    const swapped = order[i];
    order[i] = order[outcome];
    order[outcome] = swapped;
    if (--state.shuffling === 0) state.schedule = buildSchedule(order);
  },

  toAct(state) {
    if (!isPlaying(state)) return NOBODY;
    const s = state.schedule;
    return state.game === 0 ? s.donors[state.round] : s.recipients[state.round];
  },

  legal(state, seat) {
    if (!isPlaying(state) || !isDonor(state, seat)) return NOTHING;
    const max = state.resources[seat];
    switch (state.config.mechanism) {
      case "standard":
        return [amountForm("donate", max)];
      case "costly-punishment":
        return [amountForm("donate", max), amountForm("punish", max)];
      case "partner-choice":
        return [amountForm("donate", max), REFUSE_FORM];
    }
  },

  play(state, moves) {
    if (isOver(state)) throw new RangeError("the match is over");
    const { config, schedule, resources, traces } = state;
    const n = config.agents;
    const { game, round } = state;
    const donors = game === 0 ? schedule.donors[round] : schedule.recipients[round];
    // Each game's first step credits every agent's endowment, so the step rewards add up to the returns.
    const rewards = new Array<number>(n).fill(round === 0 ? config.endowment : 0);
    for (let k = 0; k < donors.length; k++) {
      const donor = donors[k];
      const recipient = schedule.partner[round * n + donor];
      const move = moves[donor];
      const before = resources[donor];
      const received = resources[recipient];
      let kind: number;
      let amount = 0;
      if (move?.type === "refuse" && config.mechanism === "partner-choice") {
        kind = REFUSE;
      } else if (
        (move?.type === "donate" || (move?.type === "punish" && config.mechanism === "costly-punishment")) &&
        move.amount >= 0 && move.amount <= before
      ) {
        amount = move.amount;
        resources[donor] = before - amount;
        if (move.type === "donate") {
          kind = DONATE;
          resources[recipient] = received + config.cooperationGain * amount;
        } else {
          kind = PUNISH;
          resources[recipient] = Math.max(0, received - config.punishmentLoss * amount);
        }
      } else {
        // Moves come through `parse`, which refuses these; reaching here is a caller's bug.
        throw new RangeError(`seat ${donor} made an illegal move: ${JSON.stringify(move)}`);
      }
      rewards[donor] += resources[donor] - before;
      rewards[recipient] += resources[recipient] - received;
      traces[donor] = new TraceNode(kind, game, round, donor, recipient, amount, before, traces[recipient]);
    }
    if (++state.round === n) {
      state.finals.set(resources, game * n);
      state.round = 0;
      if (++state.game < config.games) {
        resources.fill(config.endowment);
        if (!config.carryTraces) {
          for (let seat = 0; seat < n; seat++) traces[seat] = startTrace(seat);
        }
      }
    }
    return rewards;
  },

  /**
   * The sum over games of each agent's resources at the end of the game, counting the game in
   * progress at its current resources once its first round is played. (The reference notebook scores
   * 2 × the resources after game 2, a slip we do not copy.) Step rewards are resource changes plus the
   * endowment on each game's first step, so at every step they add up to these returns.
   */
  returns(state) {
    const n = state.config.agents;
    const started = !isOver(state) && state.round > 0;
    const totals = started ? Array.from(state.resources) : new Array<number>(n).fill(0);
    for (let g = 0; g < state.game; g++) {
      for (let seat = 0; seat < n; seat++) totals[seat] += state.finals[g * n + seat];
    }
    return totals;
  },

  observe(state, viewer: Viewer) {
    const { config, names, schedule, resources } = state;
    const n = config.agents;
    const over = isOver(state);
    const finished = state.game;
    const header = {
      game: "donor-game" as const,
      seat: viewer,
      generation: config.generation,
      mechanism: config.mechanism,
      endowment: config.endowment,
      cooperationGain: config.cooperationGain,
      punishmentLoss: config.punishmentLoss,
      phase: over ? "over" as const : "play" as const,
      gameNumber: over ? config.games : state.game + 1,
      games: config.games,
      round: over ? n : state.round + 1,
      rounds: n,
    };
    if (viewer === "public") {
      const pairs: { donor: number; recipient: number }[] = [];
      if (!over) {
        for (const donor of donorGame.toAct(state)) {
          pairs.push({ donor, recipient: schedule.partner[state.round * n + donor] });
        }
      }
      return {
        ...header,
        you: null,
        agents: names.map((name, seat) => ({
          name,
          group: schedule.group[seat] === 0 ? "A" as const : "B" as const,
          resources: resources[seat],
        })),
        pairs,
        finals: Array.from({ length: finished }, (_, g) => Array.from(state.finals.subarray(g * n, (g + 1) * n))),
      };
    }
    const results = Array.from({ length: finished }, (_, g) => state.finals[g * n + viewer]);
    let you: DonorSeatView;
    if (over) {
      you = {
        name: names[viewer],
        resources: resources[viewer],
        role: "over",
        partner: null,
        recipientTrace: [],
        results,
      };
    } else {
      const partner = schedule.partner[state.round * n + viewer];
      const donor = isDonor(state, viewer);
      you = {
        name: names[viewer],
        resources: resources[viewer],
        role: donor ? "donor" : "recipient",
        partner: { name: names[partner], resources: resources[partner] },
        recipientTrace: donor
          ? traceEntries(state.traces[partner], config.traceDepth, names, config.punishmentLoss)
          : [],
        results,
      };
    }
    return { ...header, you, agents: null, pairs: null, finals: null };
  },

  describe(obs) {
    const lines: string[] = [];
    const where = obs.phase === "over"
      ? `The match is over (${obs.games} game(s) of ${obs.rounds} rounds).`
      : `Game ${obs.gameNumber} of ${obs.games}, round ${obs.round} of ${obs.rounds}.`;
    const you = obs.you;
    if (you === null) {
      lines.push(`Donor game, generation ${obs.generation}. ${where}`);
      if (obs.pairs && obs.pairs.length > 0 && obs.agents) {
        const agents = obs.agents;
        lines.push("Pairs this round (donor → recipient):");
        for (const p of obs.pairs) lines.push(`- ${agents[p.donor].name} → ${agents[p.recipient].name}`);
      }
      lines.push("Resources now:");
      for (const a of obs.agents ?? []) lines.push(`- ${a.name} (group ${a.group}): ${units(a.resources)}`);
      (obs.finals ?? []).forEach((finals, g) => {
        lines.push(
          `At the end of game ${g + 1}: ${
            finals.map((r, seat) => `${obs.agents![seat].name} ${units(r)}`).join(", ")
          }.`,
        );
      });
      return lines.join("\n");
    }
    lines.push(`You are ${you.name}, of generation ${obs.generation}. ${where}`);
    you.results.forEach((r, g) => lines.push(`You ended game ${g + 1} with ${units(r)} units.`));
    if (you.role === "over") {
      const total = you.results.reduce((sum, r) => sum + r, 0);
      lines.push(`Your score, the sum over the games, is ${units(total)}.`);
      return lines.join("\n");
    }
    lines.push(`You have ${units(you.resources)} units.`);
    const partner = you.partner!;
    if (you.role === "recipient") {
      lines.push(
        `This round you are the recipient: ${partner.name}, who has ${units(partner.resources)} units, decides ` +
          "what to do with you. There is nothing for you to do.",
      );
      return lines.join("\n");
    }
    lines.push(
      `This round you are the donor, and ${partner.name}, who has ${
        units(partner.resources)
      } units, is your recipient.`,
    );
    lines.push(`${partner.name}'s trace, newest first:`);
    for (const entry of you.recipientTrace) lines.push(`- ${entry.sentence}`);
    const max = units(you.resources);
    lines.push(
      `Choose how many units to give up: any number from 0 to ${max} (inclusive). ` +
        `${partner.name} receives ${obs.cooperationGain} times what you give.`,
    );
    if (obs.mechanism === "costly-punishment") {
      lines.push(
        `Or punish ${partner.name}: spend any number from 0 to ${max} units, and ${partner.name} loses ` +
          `${obs.punishmentLoss} times that (never going below 0).`,
      );
    }
    if (obs.mechanism === "partner-choice") {
      lines.push(`Or refuse to play with ${partner.name}: nothing changes hands.`);
    }
    lines.push(answerHint(obs.mechanism));
    return lines.join("\n");
  },

  parse(input, state, seat): DonorAction | ActionError {
    const space = donorGame.legal(state, seat);
    return parseInput(space, input, (text) => answerAlias(text, space, state.config.mechanism, state.resources[seat]));
  },

  clone(state) {
    return {
      config: state.config,
      names: state.names,
      order: state.order.slice(),
      shuffling: state.shuffling,
      schedule: state.schedule,
      game: state.game,
      round: state.round,
      resources: state.resources.slice(),
      finals: state.finals.slice(),
      traces: state.traces.slice(),
    };
  },

  actionCount(config) {
    switch (config.mechanism) {
      case "standard":
        return SECOND_FORM;
      case "costly-punishment":
        return 2 * SECOND_FORM;
      case "partner-choice":
        return SECOND_FORM + 1;
    }
  },

  actionId(action, state, seat) {
    if (action.type === "refuse") return state.config.mechanism === "partner-choice" ? SECOND_FORM : -1;
    const k = fractionId(action.amount, state.resources[seat]);
    return k < 0 || action.type === "donate" ? k : SECOND_FORM + k;
  },

  actionOf(id, state, seat) {
    const mask = new Uint8Array(donorGame.actionCount(state.config));
    donorGame.legalMask(state, seat, mask);
    const problem = idProblem(id, mask);
    if (problem) return problem;
    if (id < SECOND_FORM) return { type: "donate", amount: gridAmount(id, state.resources[seat]) };
    if (state.config.mechanism === "partner-choice") return REFUSE_ACTION;
    return { type: "punish", amount: gridAmount(id - SECOND_FORM, state.resources[seat]) };
  },

  legalMask(state, seat, out) {
    out.fill(0);
    if (!isPlaying(state) || !isDonor(state, seat)) return;
    const { mechanism } = state.config;
    const resources = state.resources[seat];
    for (let k = 0; k <= STEPS; k++) {
      if (k > 0 && gridAmount(k, resources) === gridAmount(k - 1, resources)) continue;
      out[k] = 1;
      if (mechanism === "costly-punishment") out[SECOND_FORM + k] = 1;
    }
    if (mechanism === "partner-choice") out[SECOND_FORM] = 1;
  },

  observationShape: (config) => [8 + 2 * config.games + TRACE_ENTRY_WIDTH * config.traceDepth],

  encode(obs, out) {
    out.fill(0);
    const { games, rounds, endowment } = obs;
    oneHot(out, 3, games, obs.gameNumber - 1);
    out[3 + games] = (obs.round - 1) / rounds;
    const results = 6 + games;
    out[results + games] = obs.cooperationGain;
    out[results + games + 1] = obs.punishmentLoss;
    const you = obs.you;
    if (you === null) return;
    oneHot(out, 0, 3, ROLES.indexOf(you.role));
    out[4 + games] = inEndowments(you.resources, endowment);
    out[5 + games] = you.partner === null ? 0 : inEndowments(you.partner.resources, endowment);
    for (let g = 0; g < you.results.length; g++) out[results + g] = inEndowments(you.results[g], endowment);
    const trace = you.recipientTrace;
    const matchRounds = games * rounds;
    for (let e = 0; e < trace.length; e++) {
      const entry = trace[e];
      const at = results + games + 2 + TRACE_ENTRY_WIDTH * e;
      oneHot(out, at, 4, TRACE_KINDS.indexOf(entry.kind));
      out[at + 4] = entry.percent / 100;
      out[at + 5] = inEndowments(entry.amount, endowment);
      out[at + 6] = entry.recipient === you.name ? 1 : 0;
      out[at + 7] = entry.kind === "start" ? 0 : ((entry.game - 1) * rounds + entry.round) / matchRounds;
    }
  },
});
