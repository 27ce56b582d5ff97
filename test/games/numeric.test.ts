import { describe, expect, it } from "vitest";
import { ActionError } from "../../games/core/action.ts";
import { Episode } from "../../games/core/episode.ts";
import { maskIds, shapeSize } from "../../games/core/numeric.ts";
import { Rng } from "../../games/core/rng.ts";
import { games, numericInfo } from "../../games/registry.ts";

/**
 * The numeric face every game offers learners, checked over random playouts of every variant that pick
 * only masked action ids: a numeric policy can always play on, every masked id is a legal action that
 * maps back to its id, unmasked ids are refused naming the legal ones, and tensors are finite and a
 * function of the observation alone.
 */

const SEEDS = Array.from({ length: 6 }, (_, i) => `numeric-${i}`);

/**
 * `actual` equals `expected` bit for bit. Checked as bytes first: an `expect` per tensor entry, or vitest's deep
 * equality on every tensor of every playout, was most of this file's time; the deep comparison says what differs.
 */
function expectSameTensor(actual: Float32Array, expected: Float32Array): void {
  const a = new Uint8Array(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) expect(actual).toEqual(expected);
}

for (const game of games) {
  describe(`${game.id}: the numeric face`, () => {
    for (const [variant, { config: preset }] of Object.entries(game.variants)) {
      const config = game.schema.parse(preset);
      it(`${variant}: fixed shapes, masks that match the legal actions, tensors from observations`, () => {
        const info = numericInfo(game, config);
        expect(info).toHaveProperty("observationShape");
        const shape = game.observationShape(config);
        const count = game.actionCount(config);
        for (const n of shape) expect(Number.isInteger(n) && n > 0).toBe(true);
        expect(Number.isInteger(count) && count > 0).toBe(true);
        const seats = game.seatCount(config);
        const mask = new Uint8Array(count);
        const tensor = new Float32Array(shapeSize(shape));
        const again = new Float32Array(shapeSize(shape)).fill(Number.NaN);
        for (const seed of SEEDS) {
          const episode = new Episode(game, config, seed);
          const picker = new Rng(seed, 7);
          while (!episode.over) {
            const moves = new Array(seats).fill(undefined);
            for (let seat = 0; seat < seats; seat++) {
              const observation = episode.observe(seat);
              tensor.fill(Number.NaN);
              game.encode(observation, tensor);
              if (!tensor.every(Number.isFinite)) expect([...tensor].filter((x) => !Number.isFinite(x))).toEqual([]);
              game.encode(JSON.parse(JSON.stringify(observation)), again);
              expectSameTensor(again, tensor);
              if (game.encodeState) {
                // The fast path writes exactly the observation's tensor.
                again.fill(Number.NaN);
                game.encodeState(episode.state, seat, again);
                expectSameTensor(again, tensor);
              }
              mask.fill(7);
              const ids = maskIds(episode.legalMask(seat, mask));
              if (!mask.every((bit) => bit === 0 || bit === 1)) expect([...mask].filter((b) => b > 1)).toEqual([]);
              if (!episode.toAct.includes(seat)) {
                expect(ids).toEqual([]);
                expect(episode.actionOf(0, seat)).toBeInstanceOf(ActionError);
                continue;
              }
              expect(ids.length).toBeGreaterThan(0);
              for (const id of ids) {
                const action = episode.actionOf(id, seat);
                expect(action).not.toBeInstanceOf(ActionError);
                expect(episode.parse(action, seat)).not.toBeInstanceOf(ActionError);
                expect(episode.actionId(action as never, seat)).toBe(id);
              }
              const refused = [count, -1, 0.5, ...Array.from(mask.keys()).filter((id) => mask[id] === 0)];
              for (const id of refused.slice(0, 4)) {
                const error = episode.actionOf(id, seat) as ActionError;
                expect(error).toBeInstanceOf(ActionError);
                expect(error.code).toBe("illegal_action");
                expect(error.message).toContain(`ids ${ids.join(", ")}`);
              }
              moves[seat] = episode.actionOf(ids[picker.int(ids.length)], seat);
            }
            episode.step(moves);
          }
          for (let seat = 0; seat < seats && game.encodeState; seat++) {
            game.encode(episode.observe(seat), tensor);
            game.encodeState(episode.state, seat, again);
            expectSameTensor(again, tensor); // at the end too
          }
        }
      });

      it(`${variant}: chance is explicit, its odds a distribution`, () => {
        const state = game.start(config);
        const rng = new Rng(`${variant}-chance`);
        for (let guard = 0; guard < 10_000; guard++) {
          const odds = game.chance(state);
          if (odds.length === 0) break;
          expect(game.toAct(state)).toEqual([]);
          expect(odds.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
          game.resolve(state, rng.int(odds.length));
        }
        expect(game.chance(state)).toEqual([]);
        expect(game.toAct(state).length).toBeGreaterThan(0);
      });
    }
  });
}
