import { z } from "zod";
import type { AnyGame } from "./game.ts";
import { grouped } from "./text.ts";

/**
 * The most characters of messages that one match may carry, all players' together. Every decision's
 * observation holds the talk so far, so a match's stored observations grow with its length times its
 * talk; this bound, with each game's caps on its length, keeps them to about twenty megabytes.
 */
export const MAX_MATCH_TEXT = 60_000;

/** The most messages one player sends in a match of rounds that open with talk (the IPD, Trust-and-Split). */
export const MAX_MESSAGES = 100;

/**
 * The `messageChars` key: the longest `what` (a message), at most 10,000 characters, with the match's
 * bound on all its text stated as `product` ≤ MAX_MATCH_TEXT (the game's check enforces it).
 */
export function messageCharsKey(defaultChars: number, product: string, what = "message") {
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

/**
 * What is wrong with the talk of a match of `rounds` rounds in which each of two players sends
 * `messages` messages of at most `messageChars` characters before every move (nothing when it fits).
 */
export function talkProblems(
  rounds: number,
  messages: number,
  messageChars: number,
): { readonly path: "messages" | "messageChars"; readonly message: string }[] {
  const problems: { path: "messages" | "messageChars"; message: string }[] = [];
  if (rounds * messages > MAX_MESSAGES) {
    problems.push({
      path: "messages",
      message: `a player would send rounds × messages = ${grouped(rounds * messages)} messages in a match; at ` +
        `most ${MAX_MESSAGES} are allowed (fewer rounds or messages)`,
    });
  }
  const text = textProblem(2 * rounds * messages, messageChars, "2 × rounds × messages × messageChars");
  if (text) {
    problems.push({ path: "messageChars", message: `${text} (a lower messageChars, or fewer rounds or messages)` });
  }
  return problems;
}

/**
 * Why a match of at most `count` messages of at most `messageChars` characters could carry too much
 * text (undefined when it cannot), the product written as `product`.
 */
export function textProblem(count: number, messageChars: number, product: string): string | undefined {
  const text = count * messageChars;
  return text > MAX_MATCH_TEXT
    ? `a match's messages could hold ${product} = ${grouped(text)} characters; at most ${grouped(MAX_MATCH_TEXT)} ` +
      "are allowed"
    : undefined;
}

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
