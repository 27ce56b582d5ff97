import { z } from "zod";
import type { AnyGame } from "./game.ts";

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
  const got = issue.path.length === 1 && issue.path[0] in raw
    ? ` (got ${JSON.stringify(raw[issue.path[0] as string])})`
    : "";
  return `${at}: ${issue.message.replace(/^Invalid input: /, "")}${got}`;
}

/** Validates a config for `game` under `variant` (the default when omitted). */
export function configure<C>(game: AnyGame, raw: unknown = {}, variant?: string): Resolved<C> {
  const name = variant ?? game.defaultVariant;
  const preset = game.variants[name];
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
