import { describe, expect, it } from "vitest";
import type { Action, ActionForm } from "../../games/core/action.ts";
import { ConfigError, configSchema, configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { games, getGame } from "../../games/registry.ts";
import { randomAction } from "../../policies/baselines/random.ts";

/**
 * Every size a stranger may choose is capped, so that one match's stored observations (every
 * decision stores its seat's observation, which holds the match so far) stay bounded: each game is
 * played at the corners of its caps, talking as much as it may, and its observations must add up
 * to at most BOUND characters of JSON.
 */

const BOUND = 24_000_000;

const ITEMS = Array.from({ length: 10 }, (_, i) => String.fromCharCode(97 + i).repeat(20));
const NAMES = Array.from({ length: 100 }, (_, i) => `agent ${i} `.padEnd(40, "x"));

/**
 * The largest configs: every cap (each game's `caps`), and each joint bound on talk at its corners. A game with
 * none listed here is played at each variant's defaults.
 */
const LISTED_CORNERS: [string, string | undefined, Record<string, unknown>][] = [
  ["ipd", "classic", { rounds: 500 }],
  ["ipd", "lola", { rounds: 500 }],
  ["ipd", "classic", { rounds: 100, messages: 1, messageChars: 300 }],
  ["ipd", "classic", { rounds: 50, messages: 2, messageChars: 300 }],
  ["ipd", "classic", { rounds: 10, messages: 10, messageChars: 300 }],
  ["ipd", "classic", { rounds: 3, messages: 1, messageChars: 10_000 }],
  ["trust-and-split", "rps", { rounds: 100, messageChars: 300 }],
  ["trust-and-split", "rps", { rounds: 200, messages: 0, items: ITEMS, quantity: 1000 }],
  ["trust-and-split", "rps", { rounds: 100, messages: 1, messageChars: 300, items: ITEMS }],
  ["trust-and-split", "alternating", { rounds: 10, messages: 10, messageChars: 300, items: ITEMS }],
  ["trust-and-split", "no-press", { rounds: 200 }],
  ["kuhn-poker", "standard", { rounds: 300 }],
  ["kuhn-poker", "textarena", { rounds: 300 }],
  ["leduc-poker", "standard", { hands: 200 }],
  ["holdem", "hunl", { hands: 1000 }],
  ["holdem", "hulhe", { hands: 1000 }],
  ["holdem", "small", { hands: 1000 }],
  ["donor-game", "standard", { agents: 100, traceDepth: 5, names: NAMES }],
  ["donor-game", "costly-punishment", { agents: 100, traceDepth: 5, names: NAMES }],
  ["donor-game", "partner-choice", { agents: 100, traceDepth: 5, names: NAMES }],
  ["deal-or-no-deal", "alternating-offers", { maxTurns: 100, messageChars: 600 }],
  ["deal-or-no-deal", "dialogue", { maxTurns: 100, messageChars: 600 }],
  ["deal-or-no-deal", "dialogue", { maxTurns: 6, messageChars: 10_000 }],
  ["simple-negotiation", "standard", { maxTurns: 200, messageChars: 300 }],
  ["simple-negotiation", "long", { maxTurns: 6, messageChars: 10_000 }],
  ["tic-tac-toe", "textarena", {}],
];

const CORNERS = [
  ...LISTED_CORNERS,
  ...games.filter((g) => !LISTED_CORNERS.some(([id]) => id === g.id))
    .flatMap((g) => Object.keys(g.variants).map((v): [string, string, Record<string, unknown>] => [g.id, v, {}])),
];

/** One past each joint bound on talk. */
const TOO_TALKATIVE: [string, Record<string, unknown>, string][] = [
  ["ipd", { rounds: 101, messages: 1, messageChars: 1 }, "messages"],
  ["ipd", { rounds: 100, messages: 1, messageChars: 301 }, "messageChars"],
  ["trust-and-split", { rounds: 51, messages: 2, messageChars: 1 }, "messages"],
  ["trust-and-split", { rounds: 10, messages: 10, messageChars: 301 }, "messageChars"],
  ["deal-or-no-deal", { maxTurns: 100, messageChars: 601 }, "messageChars"],
  ["simple-negotiation", { maxTurns: 200, messageChars: 301 }, "messageChars"],
];

/** Long play: text at its longest wherever text may be sent, else any form but a fixed one where one is open. */
function talkative(space: readonly ActionForm[], rng: Rng): Action {
  const text = space.find((f) => f.kind === "text");
  if (text) return { type: text.type, text: "x".repeat(text.maxLength) } as Action;
  const open = space.filter((f) => f.kind !== "fixed");
  const action = randomAction(rng.pick(open.length > 0 ? open : space), rng) as unknown as Record<string, unknown>;
  if (action.give !== undefined) action.text = "y".repeat((space.find((f) => f.kind === "exchange")!).maxText);
  return action as unknown as Action;
}

/** One step past `cap` for a key: a number, a list (one more entry) or a text (one more character). */
function pastCap(id: string, key: string, cap: number): unknown {
  if (key === "items") return [...ITEMS, "k"];
  if (key === "gamedef") return "#".repeat(cap + 1);
  return id === "donor-game" && key === "agents" ? cap + 2 : cap + 1;
}

describe("config caps", () => {
  for (const game of games) {
    const caps = game.caps;

    it(`${game.id}: every cap is in the published schema and its description, and one past it is refused`, () => {
      const properties = configSchema(game).properties as Record<string, Record<string, unknown>>;
      for (const [key, cap] of Object.entries(caps)) {
        const property = properties[key];
        expect(property.maximum ?? property.maxItems ?? property.maxLength).toBe(cap);
        // The description states the cap, its thousands grouped or not.
        expect(property.description).toMatch(new RegExp(`\\b${String(cap).replace(/\B(?=(\d{3})+$)/g, ",?")}\\b`));
        let refused: unknown;
        try {
          configure(game, {
            [key]: pastCap(game.id, key, cap),
            ...(key !== "history" && caps.history ? { history: 0 } : {}),
          });
        } catch (e) {
          refused = e;
        }
        expect(refused, `${key} past ${cap}`).toBeInstanceOf(ConfigError);
        expect((refused as ConfigError).message).toContain(`\`${key}\``);
      }
    });
  }

  it("refuses one message or character past each bound on a match's talk, naming the key and the bound", () => {
    for (const [id, raw, key] of TOO_TALKATIVE) {
      const game = getGame(id);
      expect(() => configure(game, raw), `${id} ${JSON.stringify(raw)}`).toThrow(ConfigError);
      try {
        configure(game, raw);
      } catch (e) {
        expect((e as ConfigError).problems.join("; ")).toMatch(new RegExp(`^\`${key}\`: .*at most (100|60,000)`));
      }
    }
  });

  for (const [id, variant, raw] of CORNERS) {
    it(`${id} (${variant}) at ${JSON.stringify(raw).slice(0, 60)}: a whole match's observations stay bounded`, () => {
      const game = getGame(id);
      const { config } = configure(game, raw, variant);
      const rng = new Rng(`caps-${id}`);
      const picker = new Rng(`caps-picker-${id}`);
      const state = game.init(config, rng);
      const seats = game.seatCount(config);
      let total = 0;
      let decisions = 0;
      for (let toAct = game.toAct(state); toAct.length > 0; toAct = game.toAct(state)) {
        const moves: (Action | undefined)[] = new Array(seats).fill(undefined);
        for (const seat of toAct) {
          total += JSON.stringify(game.observe(state, seat)).length;
          decisions++;
          moves[seat] = talkative(game.legal(state, seat), picker);
        }
        game.apply(state, moves, rng);
      }
      expect(decisions).toBeGreaterThan(0);
      expect(total).toBeLessThan(BOUND);
    });
  }
});
