import { z } from "zod";
import { type AnyGame, NumericFaceError } from "./game.ts";
import { grouped } from "./text.ts";

/**
 * The most characters of messages that one match may carry, all players' together. Every decision's
 * observation holds the talk so far, so a match's stored observations grow with its length times its
 * talk; this bound, with each game's caps on its length, keeps them to about twenty megabytes.
 */
const MAX_MATCH_TEXT = 60_000;

/** The most messages one player sends in a match of rounds that open with talk (the IPD, Trust-and-Split). */
const MAX_MESSAGES = 100;

/**
 * How a game's talk is bounded: `rounds` that open with `messages` from each of two players (the IPD,
 * Trust-and-Split), or `turns` of which each carries at most one message (the negotiations).
 */
export type TalkShape = "rounds" | "turns";

/** The bound on a match's text, as its config documents it and its check reports it. */
const TALK_PRODUCT: Readonly<Record<TalkShape, string>> = {
  rounds: "2 × rounds × messages × messageChars",
  turns: "maxTurns × messageChars",
};

/**
 * The `messageChars` key: the longest `what` (a message), at most 10,000 characters, with the match's
 * bound on all its text stated (`checkTalk` enforces it).
 */
export function messageCharsKey(defaultChars: number, shape: TalkShape, what = "message") {
  const product = TALK_PRODUCT[shape];
  return z.int().min(1).max(10_000).default(defaultChars).describe(
    `longest ${what}, in characters, at most 10,000; a match's texts hold at most ${grouped(MAX_MATCH_TEXT)} ` +
      `characters in all (${product} ≤ ${grouped(MAX_MATCH_TEXT)})`,
  );
}

/** The `messages` key of rounds that open with talk, `what` saying who sends them when. */
export function messagesKey(defaultMessages: number, what: string) {
  return z.int().min(0).max(10).default(defaultMessages).describe(
    `${what}, at most 10; a player sends at most ${MAX_MESSAGES} messages in a match (rounds × messages ≤ ` +
      `${MAX_MESSAGES})`,
  );
}

type TalkConfig =
  | { readonly rounds: number; readonly messages: number; readonly messageChars: number }
  | { readonly maxTurns: number; readonly messageChars: number };

/** A config's check of its talk against the bounds above: an issue for each key that must come down. */
export function checkTalk(ctx: z.core.ParsePayload<TalkConfig>): void {
  const config = ctx.value;
  const { messageChars } = config;
  const issue = (path: "messages" | "messageChars", message: string) =>
    ctx.issues.push({ code: "custom", input: config[path as keyof TalkConfig], path: [path], message });
  const [shape, count, fewer] = "rounds" in config
    ? ["rounds", 2 * config.rounds * config.messages, " (a lower messageChars, or fewer rounds or messages)"] as const
    : ["turns", config.maxTurns, ""] as const;
  if ("rounds" in config && config.rounds * config.messages > MAX_MESSAGES) {
    issue(
      "messages",
      `a player would send rounds × messages = ${grouped(config.rounds * config.messages)} messages in a match; ` +
        `at most ${MAX_MESSAGES} are allowed (fewer rounds or messages)`,
    );
  }
  const text = count * messageChars;
  if (text > MAX_MATCH_TEXT) {
    issue(
      "messageChars",
      `a match's messages could hold ${TALK_PRODUCT[shape]} = ${grouped(text)} characters; at most ` +
        `${grouped(MAX_MATCH_TEXT)} are allowed${fewer}`,
    );
  }
}

/**
 * A poker match's observations list every finished hand, so its stored observations grow with hands²: past
 * `full` hands a match must bound the list with `history` (a long run between programs lists few or none).
 */
export function historyKey(full: number) {
  return z.int().min(0).max(full).optional().describe(
    `finished hands each observation lists, the newest (default: every hand; a match of more than ${full} hands ` +
      "must set it)",
  );
}

/** Refuses a match longer than `full` hands whose observations would list every hand. */
export function checkHistory(
  ctx: z.core.ParsePayload<{ history?: number | undefined }>,
  hands: number,
  full: number,
): void {
  if (hands > full && ctx.value.history === undefined) {
    ctx.issues.push({
      code: "custom",
      input: undefined,
      path: ["history"],
      message: `a match of more than ${full} hands must set \`history\` (at most ${full}): its observations cannot ` +
        `list all ${grouped(hands)} hands`,
    });
  }
}

/**
 * A perfect-recall tensor holds every finished hand: where a config's observations list fewer (`history`), the
 * game has no numeric face for it.
 */
export function checkFullHistory(game: string, hands: number, history: number | undefined): void {
  // At the end every hand is finished, so the observation must list all of them.
  if (history !== undefined && history < hands) {
    throw new NumericFaceError(
      game,
      `its observations list only the last ${history} of ${hands} hands (\`history\`), and the ` +
        `information-state tensor holds every finished hand: leave \`history\` unset or set it to ${hands} or more`,
    );
  }
}

/** The first finished hand an observation lists, under a config's `history` bound (hand indices from 0). */
export const firstListedHand = (handsDone: number, history: number | undefined): number =>
  history === undefined ? 0 : Math.max(0, handsDone - history);

/** A config or variant that a game refuses, with every problem found. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[], readonly gameId: string) {
    super(`invalid config for ${gameId}: ${problems.join("; ")}`);
    this.name = "ConfigError";
  }
}

/** A game's config, resolved: the variant's preset, the caller's overrides, then the defaults. */
export interface Resolved<C> {
  readonly variant: string;
  readonly config: C;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeIssue(issue: z.core.$ZodIssue, raw: Record<string, unknown>, allowed: string[]): string {
  const path = issue.path.map(String).join(".");
  const at = path ? `\`${path}\`` : "config";
  if (issue.code === "unrecognized_keys") {
    return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")} ` +
      `(allowed: ${allowed.join(", ")})`;
  }
  const got = issue.path.length === 1 && Object.hasOwn(raw, issue.path[0])
    ? ` (got ${JSON.stringify(raw[issue.path[0] as string])})`
    : "";
  return `${at}: ${issue.message.replace(/^Invalid input: /, "")}${got}`;
}

/** Validates a config for `game` under `variant` (the default when omitted). */
export function configure<C>(game: AnyGame, raw: unknown = {}, variant?: string): Resolved<C> {
  const name = variant ?? game.defaultVariant;
  // The name may come from a client: only the game's own variants count, never what an object inherits.
  const preset = Object.hasOwn(game.variants, name) ? game.variants[name] : undefined;
  if (!preset) {
    throw new ConfigError(
      [`unknown variant \`${name}\` (variants: ${Object.keys(game.variants).join(", ")})`],
      game.id,
    );
  }
  if (!isPlainObject(raw)) throw new ConfigError(["a config is a JSON object"], game.id);
  const merged = { ...preset.config, ...raw };
  const result = game.schema.safeParse(merged);
  if (!result.success) {
    const allowed = configKeys(game);
    throw new ConfigError(result.error.issues.map((issue) => describeIssue(issue, merged, allowed)), game.id);
  }
  return { variant: name, config: result.data as C };
}

/** The keys a game's config accepts. */
export function configKeys(game: AnyGame): string[] {
  const schema = configSchema(game);
  return Object.keys((schema.properties ?? {}) as Record<string, unknown>);
}

/** The config as JSON Schema, with defaults and descriptions: for docs, lobbies and clients. */
export function configSchema(game: AnyGame): Record<string, unknown> & { properties?: unknown } {
  const { $schema: _, ...schema } = z.toJSONSchema(game.schema, { io: "input", unrepresentable: "any" });
  return schema;
}
