import { describe, expect, it } from "vitest";
import type { Action } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import { allInstances, type Instance } from "../../games/deal-or-no-deal/instances.ts";
import { games } from "../../games/registry.ts";
import { randomAction } from "../../policies/baselines/random.ts";

/**
 * The config every seat and spectator is sent (`publicConfig`) and the rules text must not tell a
 * seat what only the other seat knows: two configs that differ only in one seat's private part
 * must look the same, in the config, the rules and every view of the other seat and the public,
 * move for move, until the game reveals it.
 */

/** Raw configs that differ only in what `hidden` alone may know, for the games whose config holds secrets. */
const TWINS: Record<string, (hidden: number, k: number) => [Record<string, unknown>, Record<string, unknown>]> = {
  "deal-or-no-deal": (hidden, k) => {
    const [a, b] = instanceTwins(hidden)[(k * 7919) % instanceTwins(hidden).length];
    return [{ instance: a }, { instance: b }];
  },
  "simple-negotiation": (hidden, k) => {
    const values = (own: number[]) => (hidden === 0 ? [own, [15, 5]] : [[5, 15], own]);
    return [{ values: values([k % 7, 20 - (k % 5)]) }, { values: values([3 + (k % 11), k % 3]) }];
  },
};

const byPool = new Map<number, [Instance, Instance][]>();

/** Pairs of Deal or No Deal instances with the same pool and the same values for all but `hidden`. */
function instanceTwins(hidden: number): [Instance, Instance][] {
  let pairs = byPool.get(hidden);
  if (pairs === undefined) {
    const groups = new Map<string, Instance[]>();
    for (const instance of allInstances()) {
      const key = `${instance.pool} ${instance.values[1 - hidden]}`;
      groups.set(key, [...(groups.get(key) ?? []), instance]);
    }
    pairs = [...groups.values()].filter((g) => g.length > 1).map((g) => [g[0], g[g.length - 1]]);
    byPool.set(hidden, pairs);
  }
  return pairs;
}

/** What `viewer` sees, as data and as text. */
function views(game: AnyGame, state: unknown, viewer: number | "public"): string {
  const obs = game.observe(state, viewer);
  return JSON.stringify([obs, game.describe(obs)]);
}

for (const game of games) {
  describe(`${game.id}: the public config`, () => {
    for (const variant of Object.keys(game.variants)) {
      const twins = TWINS[game.id];
      if (twins === undefined) {
        it(`${variant}: is the config itself, as JSON`, () => {
          const { config } = configure(game, {}, variant);
          expect(JSON.parse(JSON.stringify(game.publicConfig(config)))).toEqual(JSON.parse(JSON.stringify(config)));
        });
        continue;
      }

      it(`${variant}: configs that differ in one seat's secrets give the same public config, rules and views`, () => {
        let compared = 0;
        for (let k = 0; k < 30; k++) {
          const hidden = k & 1;
          const viewer = 1 - hidden;
          const configs = twins(hidden, k).map((raw) => configure(game, raw, variant).config);
          expect(JSON.stringify(configs[0])).not.toBe(JSON.stringify(configs[1]));
          const [pub0, pub1] = configs.map((c) => JSON.stringify(game.publicConfig(c)));
          expect(pub1).toBe(pub0);
          expect(JSON.parse(pub0)).toEqual(game.publicConfig(configs[0]));
          expect(game.rules(configs[1])).toBe(game.rules(configs[0]));
          const rngs = configs.map(() => new Rng(`public-${k}`));
          const states = configs.map((c, i) => game.init(c, rngs[i]));
          const picker = new Rng(`public-picker-${k}`);
          for (let toAct = game.toAct(states[0]); toAct.length > 0; toAct = game.toAct(states[0])) {
            for (const who of [viewer, "public" as const]) {
              expect(views(game, states[1], who)).toBe(views(game, states[0], who));
            }
            const moves: (Action | undefined)[] = [];
            for (const seat of toAct) {
              const space = game.legal(states[0], seat);
              expect(game.legal(states[1], seat)).toEqual(space);
              moves[seat] = randomAction(picker.pick(space), picker);
            }
            states.forEach((state, i) => game.apply(state, moves, rngs[i]));
            compared++;
          }
        }
        expect(compared).toBeGreaterThan(60);
      });
    }
  });
}

describe("deal-or-no-deal: a fixed instance's public part", () => {
  it("is its pool, which every seat sees from the start", () => {
    const game = games.find((g) => g.id === "deal-or-no-deal")!;
    const instance = { pool: [1, 2, 3], values: [[8, 1, 0], [4, 0, 2]] };
    const { config } = configure(game, { instance });
    expect(game.publicConfig(config)).toMatchObject({ instance: { pool: [1, 2, 3] } });
    expect(JSON.stringify(game.publicConfig(config))).not.toContain("values");
    const state = game.init(config, new Rng(1));
    expect(game.observe(state, "public").pool).toEqual([1, 2, 3]);
  });
});
