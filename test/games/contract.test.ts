import { describe, expect, it } from "vitest";
import { ActionError, describeSpace } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { gameInfo, games } from "../../games/registry.ts";
import { randomAction } from "../../policies/baselines/random.ts";
import { record, replay } from "../support/playout.ts";

/** Properties every registered game must keep, checked over random playouts of every variant. */

const SEEDS = Array.from({ length: 12 }, (_, i) => `contract-${i}`);

for (const game of games) {
  describe(`${game.id}: the game contract`, () => {
    it("publishes a complete registry entry", () => {
      const info = gameInfo(game);
      expect(info.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(info.summary.length).toBeGreaterThan(40);
      expect(Object.keys(info.variants)).toContain(game.defaultVariant);
      expect(JSON.parse(JSON.stringify(info))).toEqual(info);
      expect(Object.keys((info.config as { properties: object }).properties).length).toBeGreaterThan(0);
    });

    it("declares the OpenSpiel properties (chance, dynamics, information, utility) its playouts show", () => {
      let chance = false;
      let simultaneous = false;
      for (const variant of Object.keys(game.variants)) {
        const { config } = configure(game, {}, variant);
        for (const seed of SEEDS.slice(0, 4)) {
          const rng = new Rng(seed);
          const state = game.start(config);
          for (let step = 0; step < 5000; step++) {
            const odds = game.chance(state);
            if (odds.length > 0) {
              chance = true;
              game.resolve(state, rng.int(odds.length));
              continue;
            }
            const toAct = game.toAct(state);
            if (toAct.length === 0) break;
            if (toAct.length > 1) simultaneous = true;
            const moves = [];
            for (const seat of toAct) moves[seat] = randomAction(rng.pick(game.legal(state, seat)), rng);
            game.play(state, moves);
          }
          const sum = game.returns(state).reduce((a: number, b: number) => a + b, 0);
          if (game.utility === "zero-sum") expect(Math.abs(sum)).toBeLessThan(1e-9);
          if (game.utility === "identical") expect(new Set(game.returns(state)).size).toBe(1);
        }
      }
      expect(game.chanceMode).toBe(chance ? "explicit-stochastic" : "deterministic");
      expect(game.dynamics).toBe(simultaneous ? "simultaneous" : "sequential");
      // Several seats acting at once hide each one's move from the others until the step is played.
      if (game.dynamics === "simultaneous") expect(game.information).toBe("imperfect");
      const info = gameInfo(game);
      for (const key of ["utility", "chanceMode", "information", "dynamics", "answerExample", "caps"] as const) {
        expect(info[key]).toEqual(game[key]);
      }
    });

    for (const variant of Object.keys(game.variants)) {
      const { config } = configure(game, {}, variant);

      it(`${variant}: replays byte for byte from (seed, actions)`, () => {
        for (const seed of SEEDS.slice(0, 4)) {
          const first = record(game, config, seed);
          expect(record(game, config, seed)).toEqual(first);
          expect(replay(game, config, seed, first.moves)).toEqual(first);
        }
      });

      it(`${variant}: gives finite rewards and returns, and describes every view`, () => {
        for (const seed of SEEDS) {
          const rec = record(game, config, seed);
          for (const r of [...rec.rewards, rec.returns]) {
            expect(r).toHaveLength(game.seatCount(config));
            for (const x of r) expect(Number.isFinite(x)).toBe(true);
          }
        }
        expect(game.rules(config).length).toBeGreaterThan(80);
      });

      it(`${variant}: legal actions match who is to act, and parse back as themselves`, () => {
        const rng = new Rng(`${variant}-legal`);
        const picker = new Rng(`${variant}-picker`);
        const state = game.init(config, rng);
        const seats = game.seatCount(config);
        const simultaneous = game.simultaneous?.(config) ?? false;
        expect(gameInfo(game).variants[variant].simultaneous).toBe(simultaneous);
        for (let toAct = game.toAct(state); toAct.length > 0; toAct = game.toAct(state)) {
          // A config declared simultaneous has every seat in every step.
          if (simultaneous) expect(toAct).toHaveLength(seats);
          const moves = new Array(seats).fill(undefined);
          for (let seat = 0; seat < seats; seat++) {
            const space = game.legal(state, seat);
            expect(space.length > 0).toBe(toAct.includes(seat));
            if (!toAct.includes(seat)) {
              expect((game.parse({ type: "anything" }, state, seat) as ActionError).code).toBe("not_your_turn");
              continue;
            }
            expect(describeSpace(space).length).toBeGreaterThan(0);
            const action = randomAction(picker.pick(space), picker);
            const wire = JSON.parse(JSON.stringify(action));
            expect(game.parse(wire, state, seat)).toEqual(wire);
            expect(game.parse(JSON.stringify(wire), state, seat)).toEqual(wire);
            expect(game.parse({ type: "no-such-action" }, state, seat)).toBeInstanceOf(ActionError);
            moves[seat] = action;
          }
          game.apply(state, moves, rng);
        }
        expect(game.legal(state, 0)).toEqual([]);
      });

      it(`${variant}: observations are JSON, fresh, and textual`, () => {
        const rng = new Rng(`${variant}-obs`);
        const picker = new Rng(`${variant}-obs-picker`);
        const state = game.init(config, rng);
        const seats = game.seatCount(config);
        for (let toAct = game.toAct(state); toAct.length > 0; toAct = game.toAct(state)) {
          for (const viewer of [...Array.from({ length: seats }, (_, s) => s), "public" as const]) {
            const obs = game.observe(state, viewer);
            const json = JSON.stringify(obs);
            expect(JSON.parse(json)).toEqual(obs);
            scramble(obs);
            expect(JSON.stringify(game.observe(state, viewer))).toBe(json);
            expect(game.describe(game.observe(state, viewer)).length).toBeGreaterThan(20);
          }
          const moves = new Array(seats).fill(undefined);
          for (const seat of toAct) moves[seat] = randomAction(picker.pick(game.legal(state, seat)), picker);
          game.apply(state, moves, rng);
        }
      });

      it(`${variant}: a clone goes its own way`, () => {
        const rng = new Rng(`${variant}-clone`);
        const picker = new Rng(`${variant}-clone-picker`);
        const state = game.init(config, rng);
        const seats = game.seatCount(config);
        const copy = game.clone(state);
        const before = JSON.stringify(game.observe(copy, "public"));
        const simultaneous = game.simultaneous?.(config) ?? false;
        expect(gameInfo(game).variants[variant].simultaneous).toBe(simultaneous);
        for (let toAct = game.toAct(state); toAct.length > 0; toAct = game.toAct(state)) {
          // A config declared simultaneous has every seat in every step.
          if (simultaneous) expect(toAct).toHaveLength(seats);
          const moves = new Array(seats).fill(undefined);
          for (const seat of toAct) moves[seat] = randomAction(picker.pick(game.legal(state, seat)), picker);
          game.apply(state, moves, rng);
        }
        expect(JSON.stringify(game.observe(copy, "public"))).toBe(before);
        expect(game.toAct(copy).length).toBeGreaterThan(0);
      });
    }
  });
}

/** Overwrites every field of an observation in place, to prove it shares nothing with the state. */
function scramble(value: unknown): void {
  if (Array.isArray(value)) {
    value.forEach(scramble);
    value.length = 0;
  } else if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) {
      scramble((value as Record<string, unknown>)[key]);
      (value as Record<string, unknown>)[key] = "scrambled";
    }
  }
}
