import { type AnyGame, NumericFaceError } from "../../games/core/game.ts";
import { shapeSize } from "../../games/core/numeric.ts";
import { registry, UnknownGameError, UnknownVersionError } from "../../games/registry.ts";
import { QueryError } from "../query.ts";
import type { MatchFilter } from "../store.ts";

/** A `tensors.parquet` export's spec, checked before anything is read; its encoder (tensors.ts) loads Arrow, this not. */

/** What a tensors export is fixed to: the game version and variant whose shapes its columns have. */
export interface TensorSpec {
  readonly game: AnyGame;
  readonly variant: string;
  /** The config given over the variant's (`config`), whose shapes the columns have; undefined: the variant's own. */
  readonly config?: Readonly<Record<string, unknown>>;
  readonly shape: readonly number[];
  readonly size: number;
  readonly actions: number;
  readonly seats: number;
}

/** A tensors export's `config` as text (a query parameter, a flag): a JSON object. */
export function parseTensorConfig(text: string): Record<string, unknown> {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    config = undefined;
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new QueryError(
      `\`config\` must be a JSON object of config keys over the variant's (e.g. {"rounds":3}), got ${
        JSON.stringify(text.slice(0, 200))
      }`,
    );
  }
  return config as Record<string, unknown>;
}

/**
 * The game, version, variant and shapes a tensors export covers, from its filter and `config`: `game` is required;
 * the version defaults to the current one, the variant to the game's default, and the config to the variant's
 * (`config` replaces the keys it names). Refusals name what exists.
 */
export function tensorSpec(filter: MatchFilter, override?: Readonly<Record<string, unknown>>): TensorSpec {
  if (filter.game === undefined) {
    throw new QueryError(
      "`tensors.parquet` needs `game`: its columns have one game's shapes (see `ludus games` for each)",
    );
  }
  let game: AnyGame;
  try {
    game = registry.get(filter.game, filter.version);
  } catch (error) {
    if (error instanceof UnknownGameError || error instanceof UnknownVersionError) throw new QueryError(error.message);
    throw error;
  }
  const variant = filter.variant ?? game.defaultVariant;
  if (!Object.hasOwn(game.variants, variant)) {
    throw new QueryError(
      `${game.id} has no variant \`${variant}\`; variants: ${Object.keys(game.variants).join(", ")}`,
    );
  }
  const parsed = game.schema.safeParse({ ...game.variants[variant].config, ...override });
  if (!parsed.success) {
    throw new QueryError(
      `\`config\` ${JSON.stringify(override)} is not a ${game.id} config: ${
        parsed.error.issues.map((i) => `${i.path.join(".") || "config"}: ${i.message}`).join("; ")
      }`,
    );
  }
  const config = parsed.data;
  try {
    const shape = game.observationShape(config);
    return {
      game,
      variant,
      ...(override === undefined ? {} : { config: override }),
      shape,
      size: shapeSize(shape),
      actions: game.actionCount(config),
      seats: game.seatCount(config),
    };
  } catch (error) {
    if (error instanceof NumericFaceError) throw new QueryError(`no tensors for ${variant}: ${error.message}`);
    throw error;
  }
}

/** The filter a tensors export reads with: its variant made explicit, so its cursor names it. */
export const tensorFilter = (filter: MatchFilter, spec: TensorSpec): MatchFilter => ({
  ...filter,
  version: spec.game.version,
  variant: spec.variant,
});
