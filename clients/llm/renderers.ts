import type { ActionForm } from "../../protocol/action-forms.ts";

/**
 * How the agent asks a model for an action and reads it back. The observation text is always the
 * server's own (`turn.text`); a renderer adds the answer format and finds the answer in the reply. What
 * it returns goes to the server as text, where the game's parser reads it (every game accepts its
 * published tokens), so legality is judged in one place. `ludus` is the default; the others ask for a
 * published setup's answer tokens (games.md gives their sources).
 */
export interface Renderer {
  readonly name: RendererName;
  /** The games whose tokens it knows; undefined for every game. */
  readonly games?: readonly string[];
  /** The answer-format paragraph of the system prompt. */
  instructions(game: string): string;
  /** The answer to send (text), or why the reply cannot be used, said so that the model can fix it. */
  extract(reply: string, turn: TurnView): { readonly action: string } | { readonly error: string };
}

/** What a renderer sees of a turn. */
export interface TurnView {
  readonly game: string;
  readonly text: string;
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

/** The project's format: think freely, then a last `Answer:` with the action written as the turn asks. */
const ludus: Renderer = {
  name: "ludus",
  instructions: () =>
    "Each turn you are shown the game as you see it, ending with your options and how to write them. " +
    "Think briefly if it helps, then end your reply with `Answer:` followed by your action, written the way " +
    "the turn asks (for example `Answer: [bet]`). Only what follows the last `Answer:` counts.",
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

/** TextArena's bracketed tokens per game, as its environments parse them. */
const TEXTARENA_TOKENS: Readonly<Record<string, string>> = {
  "kuhn-poker": "[check], [bet], [call] or [fold]",
  ipd: "[Cooperate] or [Defect]",
  "tic-tac-toe": "the cell's number in brackets, such as [4]",
  "simple-negotiation":
    "[Offer: 3 Wood -> 2 Gold] to offer what you give for what you ask, [Accept] or [Deny]; anything else is chat",
};

/**
 * TextArena's format: free text holding the action token. A reply without brackets is bracketed whole (TextArena's
 * action wrapper), except in a talk phase, where the reply itself is the message, as TextArena sends it.
 */
const textarena: Renderer = {
  name: "textarena",
  games: Object.keys(TEXTARENA_TOKENS),
  instructions: (game) =>
    `Write your action as its token in square brackets: ${TEXTARENA_TOKENS[game]}. ` +
    "You may write other text around the token.",
  extract(reply, turn) {
    const text = withoutThinking(reply);
    if (!text) return { error: "your reply is empty; write your action's token in square brackets." };
    return { action: text.includes("[") || talking(turn) ? text : `[${text}]` };
  },
};

/**
 * SPIRAL's format: reason, then the final answer in `\boxed{}`, read as the bracketed token. In a talk phase the
 * boxed text goes as written (the server reads `accept`, `offer 3 Wood -> 2 Gold` and the like, and any other
 * text as the message, which brackets would only garble), and a reply without a box is never sent.
 */
const spiral: Renderer = {
  name: "spiral",
  games: ["kuhn-poker", "tic-tac-toe", "simple-negotiation"],
  instructions: (game) =>
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

const MESSAGE_TOKEN = /<<message_start>>[\s\S]*?<<message_end>>/g;
const PROPOSAL_TOKEN = /<<proposal_start>> ?(?:10|[0-9]) ?<<proposal_end>>/g;

/** The AdAlign setups' tokens: `<A>`/`<B>` in the dilemma, `<<message_start>>`/`<<proposal_start>>` in Trust-and-Split. */
const adalign: Renderer = {
  name: "adalign",
  games: ["ipd", "trust-and-split"],
  instructions: (game) =>
    game === "ipd"
      ? 'To cooperate you must write "<A>" and nothing else; to defect, "<B>" and nothing else.'
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
