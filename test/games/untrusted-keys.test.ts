import { describe, expect, it } from "vitest";
import { type Action, ActionError, type ActionForm, typeName } from "../../games/core/action.ts";
import { ConfigError, configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import { HUNL_GAMEDEF } from "../../games/holdem/gamedef.ts";
import { games, getGame } from "../../games/registry.ts";
import { createStrategy, strategiesFor } from "../../policies/baselines/index.ts";
import { randomAction } from "../../policies/baselines/random.ts";
import { StrategyError } from "../../policies/strategy.ts";

/**
 * Every name a plain object inherits. A look-up of a sender's word in a plain object finds these
 * (`obj[key]`, `key in obj`), so each must be refused as any unknown word is: with the usual error,
 * never accepted and never thrown as a TypeError.
 */
const INHERITED = [
  "constructor",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "__proto__",
  "__defineGetter__",
  "__lookupGetter__",
];

/** A copy of `base` with `key` as an own property, as JSON.parse makes it (even `__proto__`). */
function withKey(base: object, key: string, value: unknown): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(base));
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function expectThrows(fn: () => unknown, type: typeof ConfigError | typeof StrategyError, name: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown, `${name} was accepted`).toBeInstanceOf(type);
  expect((thrown as Error).message).toContain(name);
}

/** An ActionError whose message is a sentence, not a function's source. */
function expectRefused(result: unknown, what: string): void {
  expect(result, what).toBeInstanceOf(ActionError);
  const error = result as ActionError;
  expect(typeof error.reason).toBe("string");
  expect(error.message).not.toMatch(/native code|function /);
}

/**
 * A refusal, or an action in which the name is at most the text of a message, exactly as written
 * (a message phase reads any text; `split 1 constructor` is a split of 1 with a word it ignores).
 */
function expectRefusedOrSaid(result: unknown, name: string, said: readonly string[], what: string): void {
  if (result instanceof ActionError) return expectRefused(result, what);
  const { text, ...rest } = result as { text?: unknown };
  expect(JSON.stringify(rest), `${what} became ${JSON.stringify(result)}`).not.toContain(name);
  if (text !== undefined) expect(said, `${what} became ${JSON.stringify(result)}`).toContain(text);
}

/** Inputs that smuggle `name` in as a field, an item or a resource of each legal form. */
function smuggled(form: ActionForm, name: string, rng: Rng): unknown[] {
  const valid = randomAction(form, rng) as unknown as Record<string, unknown>;
  const inputs: unknown[] = [withKey(valid, name, 1)];
  if (form.kind === "split") {
    const counts = Object.fromEntries(form.items.map((item) => [item, 0]));
    inputs.push(withKey({ type: form.type }, name, 1));
    inputs.push({ type: form.type, take: withKey(counts, name, 1) });
  }
  if (form.kind === "exchange") {
    inputs.push({ ...valid, give: withKey({}, name, 1) });
    inputs.push({ ...valid, get: withKey({}, name, 1) });
    inputs.push({ ...valid, give: withKey(valid.give as object, name, 1) });
    inputs.push(`${form.type} 1 ${name} -> 1 ${Object.keys(form.get)[0]}`);
  }
  return inputs;
}

describe("look-ups by a sender's word", () => {
  for (const game of games) {
    it(`${game.id}: inherited names are no variant and no config key`, () => {
      for (const name of INHERITED) {
        expectThrows(() => configure(game, {}, name), ConfigError, name);
        expectThrows(() => configure(game, withKey({}, name, 1)), ConfigError, name);
        expectThrows(() => configure(game, withKey({}, name, { rounds: 2 })), ConfigError, name);
      }
    });

    it(`${game.id}: inherited names are no strategy and no strategy argument`, () => {
      for (const name of INHERITED) {
        expectThrows(() => createStrategy(game.id, name), StrategyError, name);
        for (const def of strategiesFor(game.id)) {
          expect(() => createStrategy(game.id, `${def.name}:${name}`)).toThrow(StrategyError);
        }
      }
    });

    for (const variant of Object.keys(game.variants)) {
      it(`${game.id} (${variant}): inherited names are refused as action types, fields, items and text`, () => {
        let checked = 0;
        playout(game, variant, (state, seat, space, rng) => {
          for (const name of INHERITED) {
            const parse = (input: unknown) => game.parse(input, state, seat);
            expectRefused(parse({ type: name }), `{type: ${name}}`);
            expectRefused(parse(JSON.stringify({ type: name })), `"{type: ${name}}"`);
            expectRefusedOrSaid(parse(name), name, [name], name);
            for (const form of space) {
              const text = `${typeName(form)} ${name}`;
              expectRefusedOrSaid(parse(text), name, [name, text], text);
              for (const input of smuggled(form, name, rng)) {
                expectRefused(parse(input), `${JSON.stringify(input)} (${name})`);
                checked++;
              }
            }
          }
        });
        expect(checked).toBeGreaterThan(0);
      });
    }
  }

  it("holdem: an inherited name is no line of a game definition", () => {
    const holdem = getGame("holdem");
    for (const name of INHERITED) {
      const gamedef = HUNL_GAMEDEF.replace("END GAMEDEF", `${name} = 5\nEND GAMEDEF`);
      expectThrows(() => configure(holdem, { gamedef }), ConfigError, name);
    }
  });

  it("trust-and-split: an item named `constructor` is an item like any other", () => {
    const tas = getGame("trust-and-split");
    const { config } = configure(tas, { items: ["constructor"], messages: 0 });
    const state = tas.init(config, new Rng(1));
    expect(tas.parse({ type: "split", take: [3] }, state, 0)).toEqual({ type: "split", take: [3] });
    expect(tas.parse({ type: "split", constructor: 4 }, state, 0)).toEqual({ type: "split", take: [4] });
    expect(tas.parse({ type: "split", take: { constructor: 5 } }, state, 0)).toEqual({ type: "split", take: [5] });
    expect(tas.parse("split 6 constructor", state, 0)).toEqual({ type: "split", take: [6] });
    expectRefused(tas.parse({ type: "split", take: { toString: 5 } }, state, 0), "toString");
  });
});

/** Plays random actions through the first steps of a match, calling `check` for every seat to act. */
function playout(
  game: AnyGame,
  variant: string,
  check: (state: unknown, seat: number, space: readonly ActionForm[], rng: Rng) => void,
): void {
  const { config } = configure(game, {}, variant);
  const rng = new Rng(`untrusted-${game.id}-${variant}`);
  const state = game.init(config, rng);
  const seats = game.seatCount(config);
  for (let step = 0, toAct = game.toAct(state); step < 12 && toAct.length > 0; step++, toAct = game.toAct(state)) {
    const moves: (Action | undefined)[] = new Array(seats).fill(undefined);
    for (const seat of toAct) {
      const space = game.legal(state, seat);
      // Donor games have many seats acting at once: checking the first is enough.
      if (seat === toAct[0]) check(state, seat, space, rng);
      moves[seat] = randomAction(rng.pick(space), rng);
    }
    game.apply(state, moves, rng);
  }
}
