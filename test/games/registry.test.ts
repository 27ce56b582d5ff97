import { describe, expect, it } from "vitest";
import { configure } from "../../games/core/config.ts";
import { Episode } from "../../games/core/episode.ts";
import { GameRegistry, games, UnknownGameError, UnknownVersionError } from "../../games/registry.ts";
import { kuhnPoker } from "../../games/kuhn-poker/game.ts";

/** Games are keyed by (id, version): a bumped game keeps its earlier versions loadable. */

// A bumped Kuhn poker: the same rules under version 2 (what a rules change would register beside version 1).
const kuhnV2 = { ...kuhnPoker, version: 2 };

describe("the game registry", () => {
  const registry = new GameRegistry([kuhnV2], [kuhnPoker]);

  it("serves the current version by default and every kept version by number", () => {
    expect(registry.get("kuhn-poker")).toBe(kuhnV2);
    expect(registry.get("kuhn-poker", 1)).toBe(kuhnPoker);
    expect(registry.get("kuhn-poker", 2)).toBe(kuhnV2);
    expect(registry.versions("kuhn-poker")).toEqual([1, 2]);
    // A match recorded under version 1 plays again under version 1.
    const { config } = configure(kuhnPoker, {});
    const episode = new Episode(registry.get("kuhn-poker", 1), config, "kept");
    expect(episode.observe(0)).toEqual(new Episode(kuhnPoker, config, "kept").observe(0));
  });

  it("names the versions that exist for one that does not, and the games for an unknown id", () => {
    expect(() => registry.get("kuhn-poker", 3)).toThrow(UnknownVersionError);
    expect(() => registry.get("kuhn-poker", 3)).toThrow("kuhn-poker version 3 is not in this build (versions: 1, 2)");
    expect(() => registry.get("go")).toThrow(UnknownGameError);
    expect(() => registry.get("go")).toThrow("unknown game `go` (games: kuhn-poker)");
  });

  it("refuses a version registered twice, or an earlier one that is not earlier", () => {
    expect(() => new GameRegistry([kuhnPoker], [kuhnPoker])).toThrow(/registered twice/);
    expect(() => new GameRegistry([kuhnPoker], [kuhnV2])).toThrow(/earlier than the current one/);
    expect(() => new GameRegistry([], [kuhnPoker])).toThrow(/no current one/);
    expect(() => new GameRegistry([kuhnPoker, kuhnV2])).toThrow("kuhn-poker is listed twice as a current game");
  });

  it("holds every hosted game at its current version", () => {
    const hosted = new GameRegistry(games);
    for (const game of games) expect(hosted.get(game.id)).toBe(game);
  });
});
