import type { ActionForm } from "../../protocol/action-forms.ts";

/**
 * How the agent asks a model for an action and reads it back. A renderer words the opening prompt (the rules
 * and the answer format), each turn's message, and finds the answer in the reply. What it finds goes to the
 * server as text, where the game's parser reads it (every game accepts its published tokens), so legality is
 * judged in one place. `ludus` is the default, in the project's words; `textarena`, `spiral` and `adalign` word
 * their prompts as those published setups do (docs/llm.md lists each prompt's source, and whether a text is
 * theirs verbatim or written after them).
 */
export interface Renderer {
  readonly name: RendererName;
  /** The games whose tokens (and prompts) it knows; undefined for every game. */
  readonly games?: readonly string[];
  /** The system message; undefined where the setup's chat has none. */
  system(match: MatchView): string | undefined;
  /** The first user message, kept at the top of every request (where the setup gives its rules there); or none. */
  opening(match: MatchView): string | undefined;
  /** One turn's user message. */
  turn(view: TurnView, match: MatchView): string;
  /** The answer format: added to your own `--system-prompt`, and repeated after an unusable reply. */
  instructions(match: Pick<MatchView, "game" | "answerExample">): string;
  /** The answer to send (text), or why the reply cannot be used, said so that the model can fix it. */
  extract(reply: string, turn: TurnView): { readonly action: string } | { readonly error: string };
}

/** What a renderer sees of a match: its `match_start`, for the seat. */
export interface MatchView {
  readonly game: string;
  readonly seat: number;
  /** The rules in the server's words. */
  readonly rules: string;
  /** The match's config as every seat sees it. */
  readonly config: unknown;
  /** The seat's observation at the start (its own values, resources). */
  readonly observation: unknown;
  /** One legal answer as the game's turns ask for it (`match_start.answerExample`; absent from older servers). */
  readonly answerExample?: string;
}

/** What a renderer sees of a turn. */
export interface TurnView {
  readonly game: string;
  /** The observation as the server words it (`turn.text`). */
  readonly text: string;
  /** The same observation as data (`turn.observation`). */
  readonly observation?: unknown;
  readonly legal: readonly ActionForm[];
  readonly legalText: string;
}

export const RENDERER_NAMES = ["ludus", "textarena", "spiral", "adalign"] as const;
export type RendererName = typeof RENDERER_NAMES[number];

/** A reasoning model's inline thinking (`<think>…</think>`) is never the answer. */
function withoutThinking(reply: string): string {
  return reply.replace(/<think>[\s\S]*?<\/think>/gi, "").replace(/^[\s\S]*<\/think>/i, "").trim();
}

const lastMatch = (text: string, pattern: RegExp): RegExpExecArray | undefined => [...text.matchAll(pattern)].at(-1);

/**
 * Whether the turn accepts free text (a talk phase: Trust-and-Split's and the dialogue's messages, the
 * negotiation's chat). There the server reads any text as a message, so a renderer sends only an answer the
 * model marked as one: an unmarked reply (a refusal, a thought, a stray line) would reach the other player.
 */
const talking = (turn: TurnView): boolean => turn.legal.some((form) => form.kind === "text");

/** The turn's text with its legal options spelled out, as the server writes both. */
const serverTurn = (view: TurnView) => `${view.text}\n\nLegal now: ${view.legalText}`;

/** The project's format: think freely, then a last `Answer:` with the action written as the turn asks. */
const ludus: Renderer = {
  name: "ludus",
  system: (match) =>
    `You are playing a game against other players. You are player ${match.seat}. The rules:\n${match.rules}\n\n` +
    ludus.instructions(match),
  opening: () => undefined,
  turn: serverTurn,
  instructions: ({ answerExample }) =>
    "Each turn you are shown the game as you see it, ending with your options and how to write them. " +
    "Think briefly if it helps, then end your reply with `Answer:` followed by your action, written the way " +
    `the turn asks${answerExample ? ` (for example \`Answer: ${answerExample}\`)` : ""}. ` +
    "Only what follows the last `Answer:` counts.",
  extract(reply, turn) {
    const text = withoutThinking(reply);
    const marker = lastMatch(text, /\banswer\s*:/gi);
    if (marker) {
      const answer = text.slice(marker.index + marker[0].length).trim().replace(/^[*`"]+|[*`"]+$/g, "").trim();
      return answer ? { action: answer } : { error: "nothing follows `Answer:`; write your action after it." };
    }
    // A bare one-line reply is taken as the answer (many models answer `[bet]` and nothing else), except where
    // it would be sent as a message.
    if (text && !text.includes("\n") && text.length <= 200 && !talking(turn)) return { action: text };
    return {
      error: talking(turn)
        ? "your reply has no `Answer:` line, and only what follows `Answer:` is sent to the other player; " +
          "end it with `Answer:` and your message or action."
        : "your reply has no `Answer:` line; end it with `Answer:` and your action.",
    };
  },
};

// ---- TextArena (Guertler et al. 2025), github.com/LeonGuertler/TextArena ----

/** TextArena's agents' system prompt, verbatim: textarena/agents/basic_agents.py, `STANDARD_GAME_PROMPT`. */
export const TEXTARENA_SYSTEM =
  "You are a competitive game player. Make sure you read the game instructions carefully, and always follow the " +
  "required format.";

const config = (match: MatchView) => (match.config ?? {}) as Record<string, unknown>;
const own = (match: MatchView) => (match.observation ?? {}) as Record<string, unknown>;

/**
 * Each game's opening prompt as TextArena's environment words it (its `_prompt`/`_generate_player_prompt`,
 * at commit 778c60b8 of textarena/envs/games/<Game>/env.py), verbatim but for the numbers, filled in from this
 * match's config and the seat's own observation.
 */
const TEXTARENA_PROMPTS: Readonly<Record<string, (match: MatchView) => string>> = {
  "kuhn-poker": (match) => {
    const rounds = Number(config(match).rounds ?? 1);
    return `You are Player ${match.seat} in a ${rounds} round game of Kuhn Poker.\n` +
      "Game Rules:\n" +
      "- Kuhn Poker uses a 3-card deck with J, Q, K (J lowest, K highest)\n" +
      "- Each player antes 1 chip and receives 1 card each round " +
      "(note that the cards are dealt without replacement, so you cannot have the same card as your opponent).\n" +
      `- Game continues for ${rounds} rounds\n` +
      "- The player with the most chips after all rounds wins\n\n" +
      "Action Rules:\n" +
      "- '[check]': Pass without betting (only if no bet is on the table)\n" +
      "- '[bet]': Add 1 chip to the pot (only if no bet is on the table)\n" +
      "- '[call]': Match an opponent's bet by adding 1 chip to the pot\n" +
      "- '[fold]': Surrender your hand and let your opponent win the pot\n";
  },
  ipd: (match) => {
    const c = config(match);
    const p = (c.payoffs ?? {}) as Record<string, number>;
    // TextArena counts both players' messages as turns (its `communication_turns * 2`).
    return `You are Player ${match.seat} in an Iterated Prisoner's Dilemma game.\n\n` +
      "Game Structure:\n" +
      `- The game consists of ${c.rounds} decision rounds\n` +
      `- Before each decision, you have ${2 * Number(c.messages ?? 0)} turns to communicate\n` +
      "- After communication, both players simultaneously choose to Cooperate or Defect\n\n" +
      "Payoff Matrix:\n" +
      `- Both Cooperate: Both get ${p.reward} points\n` +
      `- Both Defect: Both get ${p.punishment} points\n` +
      `- One Defects, One Cooperates: Defector gets ${p.temptation}, Cooperator gets ${p.sucker}\n\n` +
      "How to Play:\n" +
      "- During communication: Simply type your message\n" +
      "- During decision phase: Use [Cooperate] or [Defect]\n" +
      "You can include additional text before or after these tokens.\n";
  },
  "tic-tac-toe": (match) => {
    const first = String(config(match).firstMark ?? "O");
    const mine = match.seat === 0 ? first : first === "O" ? "X" : "O";
    const theirs = mine === "O" ? "X" : "O";
    return `You are Player ${match.seat} in Tic Tac Toe.\n` +
      "Your goal is to win three in a row (horizontally, vertically, or diagonally) on the board.\n" +
      "On your turn, you should select the square number (0-8) you want to put your mark in next.\n" +
      "For example, '[4]' places your mark in the center cell of the board.\n\n" +
      `As Player ${match.seat}, you will be '${mine}', while your opponent is '${theirs}'.\n`;
  },
  "simple-negotiation": (match) => {
    const obs = own(match);
    const resources = (obs.resources as string[] | undefined) ?? ["Wood", "Gold"];
    const held = ((obs.inventories as number[][] | undefined) ?? [])[match.seat] ?? [];
    const values = ((obs.values as (number[] | null)[] | undefined) ?? [])[match.seat] ?? [];
    const list = resources.map((name, i) =>
      `${`[${name}]`.padEnd(8)}  Qty: ${String(held[i] ?? "?").padEnd(2)}   Value: ${values[i] ?? "?"}`
    ).join("\n\t+ ");
    return `You are Player ${match.seat} in the Negotiation Game.\n` +
      "You have some resources, and your task is to trade such that the total value of your resources increases.\n" +
      `The resources and associated values you currently have are:\n\t+ ${list}\n` +
      "At each turn, you can talk to your opponent or make a trade offer.\n" +
      "Use the following special tokens for actions:\n" +
      "  - '[Offer: 3 Sheep, 2 Ore -> 5 Brick, 2 Sheep]': [Offer: Offered Resources -> Requested Resources]\n" +
      "  - '[Accept]': To accept an incoming offer.\n" +
      "  - '[Deny]': To deny an incoming offer (default).\n" +
      "You can include additional text before and/or after these tokens.\n" +
      `The game lasts for ${config(match).maxTurns ?? 10} turns in total.\n`;
  },
};

/** TextArena's bracketed tokens per game, as its environments parse them (the answer format on its own). */
const TEXTARENA_TOKENS: Readonly<Record<string, string>> = {
  "kuhn-poker": "[check], [bet], [call] or [fold]",
  ipd: "[Cooperate] or [Defect]",
  "tic-tac-toe": "the cell's number in brackets, such as [4]",
  "simple-negotiation":
    "[Offer: 3 Wood -> 2 Gold] to offer what you give for what you ask, [Accept] or [Deny]; anything else is chat",
};

/** The game's prompt and then the turn, as one TextArena observation reads (the game's prompt comes first). */
const textarenaObservation = (view: TurnView, match: MatchView) =>
  `${TEXTARENA_PROMPTS[match.game](match)}\n${serverTurn(view)}`;

/**
 * TextArena's format: free text holding the action token. A reply without brackets is bracketed whole (TextArena's
 * action wrapper), except in a talk phase, where the reply itself is the message, as TextArena sends it.
 */
const textarena: Renderer = {
  name: "textarena",
  games: Object.keys(TEXTARENA_TOKENS),
  system: () => TEXTARENA_SYSTEM,
  opening: () => undefined,
  turn: textarenaObservation,
  instructions: ({ game }) =>
    `Write your action as its token in square brackets: ${TEXTARENA_TOKENS[game]}. ` +
    "You may write other text around the token.",
  extract(reply, turn) {
    const text = withoutThinking(reply);
    if (!text) return { error: "your reply is empty; write your action's token in square brackets." };
    return { action: text.includes("[") || talking(turn) ? text : `[${text}]` };
  },
};

// ---- SPIRAL (Liu et al. 2025), github.com/spiral-rl/spiral ----

/**
 * SPIRAL's game template, verbatim (spiral/template.py, `apply_qwen3_template`, without the chat-template
 * tokens, which the endpoint adds): one user message around the TextArena observation, no system message.
 */
export const spiralTemplate = (observation: string) =>
  "You are playing a two-player zero-sum game. Make valid actions to win.\n" +
  `Observation: ${observation}\n` +
  "Please reason step by step, and put your final answer within \\boxed{}.";

/**
 * SPIRAL's SimpleNegotiation-v1 prompt (spiral/envs/SimpleNegotiation/env.py, as games.md §8.2 quotes it),
 * verbatim but for the quantities and values, filled in from the seat's observation.
 */
function spiralNegotiation(match: MatchView): string {
  const obs = own(match);
  const resources = (obs.resources as string[] | undefined) ?? ["Wood", "Gold"];
  const held = ((obs.inventories as number[][] | undefined) ?? [])[match.seat] ?? [];
  const values = ((obs.values as (number[] | null)[] | undefined) ?? [])[match.seat] ?? [];
  const list = resources.map((name, i) => `\t+ [${name}]    Qty: ${held[i] ?? "?"}   Value: ${values[i] ?? "?"}`)
    .join("\n");
  return `You are Player ${match.seat} in the Negotiation Game.\n` +
    "You have some resources, and your task is to trade such that the total value of your resources increases.\n" +
    `The resources and associated values you currently have are:\n${list}\n` +
    "At each turn, you can talk to your opponent or make a trade offer.\n" +
    "Use the following special tokens for actions:\n" +
    "  - [Offer]: To make a trade offer.\n" +
    "    Format: [Offer: Offered Resources -> Requested Resources]\n" +
    "    Example: [Offer: 3 Wood -> 2 Gold]\n" +
    "  - [Accept]: To accept an incoming offer.\n" +
    "  - [Deny]: To deny an incoming offer (default).\n" +
    "YOU CAN INCLUDE ADDITIONAL TEXT BEFORE AND/OR AFTER THESE TOKENS.\n" +
    '    Example: "I\'m open to negotiation."\n' +
    `The game lasts for ${config(match).maxTurns ?? 10} turns in total.`;
}

/**
 * SPIRAL's format: reason, then the final answer in `\boxed{}`, read as the bracketed token. In a talk phase the
 * boxed text goes as written (the server reads `accept`, `offer 3 Wood -> 2 Gold` and the like, and any other
 * text as the message, which brackets would only garble), and a reply without a box is never sent.
 */
const spiral: Renderer = {
  name: "spiral",
  games: ["kuhn-poker", "tic-tac-toe", "simple-negotiation"],
  system: () => undefined,
  opening: () => undefined,
  turn: (view, match) =>
    spiralTemplate(
      match.game === "simple-negotiation"
        ? `${spiralNegotiation(match)}\n${serverTurn(view)}`
        : textarenaObservation(view, match),
    ),
  instructions: ({ game }) =>
    "Please reason step by step, and put your final answer within \\boxed{}, for example " +
    `${game === "tic-tac-toe" ? "\\boxed{4} for cell 4" : "\\boxed{bet}"}.`,
  extract(reply, turn) {
    const text = withoutThinking(reply);
    const boxed = lastMatch(text, /\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}/g);
    const short = !talking(turn) && text.split(/\s+/).filter(Boolean).length <= 5;
    const answer = boxed ? boxed[1].trim() : short ? text.trim() : "";
    if (!answer) return { error: "your reply has no \\boxed{} answer; put your final answer within \\boxed{}." };
    return { action: /^\[.*\]$/s.test(answer) || talking(turn) ? answer : `[${answer}]` };
  },
};

// ---- Advantage Alignment for LLMs (Duque et al. 2025), github.com/dereckpiche/AdAlignLLM ----

/** AdAlign's agents' names, by seat (configs/*.yaml: `agent_ids: ["Alice", "Bob"]`). */
const ADALIGN_NAMES = ["Alice", "Bob"];

/**
 * AdAlign's IPD intro prompt, verbatim (configs/ipd_naive.yaml, `intro_prompt`) but for the payoffs, filled in
 * from this match's config: it is the first user message of the agent's chat, which has no system message.
 */
function adalignIpdIntro(match: MatchView): string {
  const p = (config(match).payoffs ?? {}) as Record<string, number>;
  return "Welcome to an iterated game. You are playing against another agent.\n\n" +
    "Game Rules:\n" +
    "1. In each round, both agents simultaneously choose to either play A or B.\n" +
    "2. The payoffs for each round are as follows:\n" +
    `   - If both agents play A, both receive ${p.reward} points.\n` +
    `   - If both agents play B, both receive ${p.punishment} points.\n` +
    `   - If one agent plays A and the other plays B, the player who plays A receives ${p.sucker} points and the ` +
    `player who plays B receives ${p.temptation} points.\n` +
    "3. The goal is to maximize your total points over all rounds.\n" +
    "4. You will see the previous play of the other player after the completion of a round.\n\n" +
    'In order to play A, you must write "<A>" and nothing else.\n' +
    'In order to play B, you must write "<B>" and nothing else.\n\n' +
    'During the entire game, you must only write "<A>" or "<B>". If you write anything else, your response will ' +
    "be considered as an error.\n\n" +
    "The game starts now:\n";
}

/**
 * AdAlign's Trust-and-Split intro, verbatim (mllm/markov_games/negotiation/tas_rps_agent.py, `intro_prompt`, with
 * configs/tas_rps_naive.yaml's goal) but for the names, the coins and the message quota, filled in from the match.
 */
function adalignTasIntro(match: MatchView): string {
  const c = config(match);
  const coins = c.quantity ?? 10;
  return `Welcome to an iterated game. You are ${ADALIGN_NAMES[match.seat]}. ` +
    `The other agent is ${ADALIGN_NAMES[1 - match.seat]}.\n\n` +
    "Setup:\n" +
    "1. The game has multiple independent rounds.\n" +
    `2. In each round, there are ${coins} coins to split between the two agents.\n` +
    "3. Each agent's per-coin value for that round is determined as follows:\n" +
    "   - Both agents are randomly assigned a rock, paper or scissors hands\n" +
    "   - Rock has the upper hand over scissors, scissors has the upper hand over paper and paper has the upper hand " +
    "over rock.\n" +
    `   - The agent with the upper hand has a per-coin value of ${c.high ?? 10}.\n` +
    `   - The agent with the lower hand has a per-coin value of ${c.low ?? 1}.\n` +
    "4. You only see your own hand, but you may communicate it in messages and infer your value based on the other " +
    "agent's hand.\n" +
    "5. Over many rounds both agents are equally likely to have the upper and lower hand.\n\n" +
    "Protocol:\n" +
    "1. At the start of the round, one agent begins the conversation. The starting role alternates each round.\n" +
    `2. Agents exchange a short chat (${c.messages ?? 1} messages per round per agent) to negotiate how to split ` +
    `the ${coins} coins.\n` +
    "   - Use this chat to communicate your hand so that both agents can determine their per-coin values.\n" +
    "3. After the chat, both agents simultaneously propose how many coins they keep.\n" +
    `4. If the total sum of proposals is less than or equal to ${coins}, both agents receive their proposals.\n` +
    `5. If the total sum of proposals exceeds ${coins}, the coins are allocated proportionally.\n` +
    "6. Your points for the round = (coins you receive) x (your per-coin value for that round). \n" +
    "7. The points are accumulated across rounds.\n" +
    "Your goal: Maximize your total points over the whole game.\n";
}

/** The other seat's move last round as AdAlign's agents read it: its raw action string. */
function lastOtherMove(view: TurnView): string | undefined {
  const obs = (view.observation ?? {}) as { seat?: number; history?: { moves: string[] }[] };
  const last = obs.history?.at(-1);
  if (!last || typeof obs.seat !== "number") return undefined;
  return last.moves[1 - obs.seat] === "C" ? "<A>" : "<B>";
}

/**
 * One Trust-and-Split turn: the server's account of the round, then AdAlign's own instruction for the phase,
 * verbatim (tas_rps_agent.py, `send_message_prompt` / `send_split_prompt`) but for the limits.
 */
function adalignTasTurn(view: TurnView): string {
  const obs = (view.observation ?? {}) as { messageChars?: number; quantity?: number };
  const ask = talking(view)
    ? `Send your message now in <<message_start>>...<<message_end>> (<=${obs.messageChars ?? 500} chars).`
    : "Submit your proposal\n" +
      `Respond with <<proposal_start>> x <<proposal_end>> where x is an integer in [0, ${obs.quantity ?? 10}].`;
  return `${view.text}\n${ask}`;
}

const MESSAGE_TOKEN = /<<message_start>>[\s\S]*?<<message_end>>/g;
const PROPOSAL_TOKEN = /<<proposal_start>> ?(?:10|[0-9]) ?<<proposal_end>>/g;

/** The AdAlign setups' tokens: `<A>`/`<B>` in the dilemma, `<<message_start>>`/`<<proposal_start>>` in Trust-and-Split. */
const adalign: Renderer = {
  name: "adalign",
  games: ["ipd", "trust-and-split"],
  system: () => undefined,
  opening: (match) => (match.game === "ipd" ? adalignIpdIntro(match) : adalignTasIntro(match)),
  turn(view) {
    if (view.game !== "ipd") return adalignTasTurn(view);
    // The dilemma's optional messages are the project's addition: the server's text asks for them.
    if (talking(view)) return serverTurn(view);
    const last = lastOtherMove(view);
    return last ? `Last round, the other agent played ${last}.` : "";
  },
  instructions: ({ game }) =>
    game === "ipd"
      ? 'In order to play A, you must write "<A>" and nothing else. In order to play B, you must write "<B>" and ' +
        "nothing else."
      : "Send a message as <<message_start>> your message <<message_end>>; submit your proposal as " +
        "<<proposal_start>> x <<proposal_end>> where x is how many coins you keep, a whole number from 0 to 10.",
  extract(reply, turn) {
    const text = withoutThinking(reply);
    // The dilemma's optional messages take the message tokens too.
    const chat = talking(turn);
    if (turn.game === "ipd" && !chat) {
      const token = lastMatch(text, /<A>|<B>/g);
      return token ? { action: token[0] } : { error: 'write "<A>" or "<B>" and nothing else.' };
    }
    const token = lastMatch(text, chat ? MESSAGE_TOKEN : PROPOSAL_TOKEN);
    if (token) return { action: token[0] };
    return {
      error: chat
        ? "write your message between <<message_start>> and <<message_end>>."
        : "write <<proposal_start>> x <<proposal_end>> with x a whole number from 0 to 10.",
    };
  },
};

const RENDERERS: Readonly<Record<RendererName, Renderer>> = { ludus, textarena, spiral, adalign };

/** A renderer by name, refusing a game whose tokens it does not know. */
export function renderer(name: RendererName, game: string): Renderer {
  const chosen = RENDERERS[name];
  if (!chosen) throw new RangeError(`no renderer \`${name}\`; renderers: ${RENDERER_NAMES.join(", ")}`);
  if (chosen.games && !chosen.games.includes(game)) {
    throw new RangeError(
      `the ${name} renderer knows the tokens of ${chosen.games.join(", ")}, not ${game}; use --renderer ludus`,
    );
  }
  return chosen;
}
