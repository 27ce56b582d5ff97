import { describe, expect, it } from "vitest";
import type { Action } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import * as kuhn from "../../games/kuhn-poker/game.ts";
import * as leduc from "../../games/leduc-poker/game.ts";
import { randomAction } from "../../policies/baselines/random.ts";

/**
 * Hidden information, by construction: two matches that differ only in the other seat's private card
 * must look the same to a seat (structured view and text) and to the public, move for move, until the
 * rules reveal the cards at a showdown. A fold reveals nothing, so views stay equal to the end.
 */

interface Poker {
  readonly game: AnyGame;
  readonly cards: number;
  deal(state: unknown, c0: number, c1: number): void;
  /** Deals the public card if the hand waits for it (Leduc). */
  reveal(state: unknown, card: number): void;
}

const games: Poker[] = [
  {
    game: kuhn.kuhnPoker,
    cards: kuhn.CARDS.length,
    deal: (s, c0, c1) => kuhn.deal(s as kuhn.KuhnState, c0, c1),
    reveal: () => {},
  },
  {
    game: leduc.leducPoker,
    cards: leduc.CARDS.length,
    deal: (s, c0, c1) => leduc.deal(s as leduc.LeducState, c0, c1),
    reveal: (s, card) => {
      const state = s as leduc.LeducState;
      if (leduc.leducPoker.chance(state).length > 0) leduc.revealPublic(state, card);
    },
  },
];

function views(game: AnyGame, state: unknown, viewer: number): string {
  const own = game.observe(state, viewer);
  const pub = game.observe(state, "public");
  return JSON.stringify([own, game.describe(own), pub, game.describe(pub)]);
}

for (const poker of games) {
  describe(`${poker.game.id}: hidden information`, () => {
    it("a seat's and the public's views do not depend on the other's card before a showdown", () => {
      const rng = new Rng(`hidden-${poker.game.id}`);
      let compared = 0;
      for (let trial = 0; trial < 400; trial++) {
        const viewer = trial & 1;
        // The viewer's card, two candidates for the other's, and a public card none of them holds.
        const [own, other, otherAlt, board] = rng.shuffle(Array.from({ length: poker.cards }, (_, i) => i));
        const twins = [other, otherAlt].map((hidden) => {
          const state = poker.game.start(configure(poker.game).config);
          poker.deal(state, viewer === 0 ? own : hidden, viewer === 0 ? hidden : own);
          return state;
        });
        let last: Action | undefined;
        while (poker.game.toAct(twins[0]).length > 0) {
          expect(views(poker.game, twins[1], viewer)).toBe(views(poker.game, twins[0], viewer));
          compared++;
          const seat = poker.game.toAct(twins[0])[0];
          last = randomAction(rng.pick(poker.game.legal(twins[0], seat)), rng);
          const moves: (Action | undefined)[] = [undefined, undefined];
          moves[seat] = last;
          for (const state of twins) {
            poker.game.play(state, moves);
            poker.reveal(state, board ?? 0);
          }
        }
        if (last?.type === "fold") {
          expect(views(poker.game, twins[1], viewer)).toBe(views(poker.game, twins[0], viewer));
        }
      }
      expect(compared).toBeGreaterThan(800);
    });
  });
}
