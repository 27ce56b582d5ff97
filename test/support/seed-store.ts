import type { ReplayStore } from "../../db/store.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";

export interface SeedOptions {
  readonly game: string;
  readonly matches: number;
  readonly variant?: string;
  readonly config?: unknown;
  /** One built-in strategy spec per seat; "random" in every seat by default. */
  readonly strategies?: readonly string[];
  /** Seeds are `${seed}/${i}`, so a seeding is reproducible. */
  readonly seed?: string;
}

/**
 * Plays matches between built-in strategies through the real Match, which records them in `store` as
 * the server does; resolves with their ids once every record is durable.
 */
export async function seedStore(store: ReplayStore, options: SeedOptions): Promise<string[]> {
  const live = new LiveMatches({ store, lingerMs: 0 });
  const ids: string[] = [];
  for (let i = 0; i < options.matches; i++) {
    const match = live.create({
      game: options.game,
      variant: options.variant,
      config: options.config,
      seed: `${options.seed ?? options.game}/${i}`,
      seats: (options.strategies ?? ["random", "random"]).map((strategy) => ({ strategy })),
    });
    ids.push(match.id);
  }
  await store.writer.drain();
  return ids;
}
