import { describe, expect, it } from "vitest";
import { renderer, RENDERER_NAMES, type RendererName } from "../../clients/llm/index.ts";
import type { MatchView, TurnView } from "../../clients/llm/renderers.ts";
import { ActionError, type ActionForm, describeSpace } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import { games } from "../../games/registry.ts";
import { randomAction } from "../../clients/sdk/index.ts";

/**
 * Every answer form a renderer's prompt lists as legal ("Legal now: …", the server's words) must come back, written
 * as that renderer asks for answers, as the action it names: a model that does exactly what the prompt says is never
 * refused. Over every game, variant and renderer that knows the game, at every decision of two random matches each.
 */

/** A listed form filled in as a model would: the middle of a range, the first resource of a trade, a short text. */
function fillIn(listed: string): { written: string; message?: string } {
  const message = "hello from the model";
  const text = /^(\S+) <text[^>]*>$/.exec(listed);
  if (text) return { written: `${text[1]} ${message}`, message };
  const written = listed
    .replace(/<give: ([A-Za-z]+) 1-\d+[^>]*>/, (_, resource) => `1 ${resource}`)
    .replace(/<get: (?:.*, )?([A-Za-z]+) 1-\d+>/, (_, resource) => `1 ${resource}`)
    .replace(
      /<(?:\w+: )?(integer|number) in \[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]>/g,
      (_, kind, min, max) => {
        const middle = (Number(min) + Number(max)) / 2;
        return String(kind === "integer" ? Math.floor(middle) : middle);
      },
    );
  return { written };
}

/**
 * The replies a model following `name`'s answer format writes for a listed form. In a talk phase (`talk`) the reply is
 * sent as the message or action it is, so only a marked answer goes (ludus's `Answer:`, spiral's box, adalign's tokens).
 */
function replies(name: RendererName, form: { written: string; message?: string }, talk: boolean): string[] {
  const { written, message } = form;
  switch (name) {
    case "ludus":
      return [`I weigh my options.\nAnswer: ${written}`, ...(talk ? [] : [written])];
    case "textarena":
      // TextArena sends a talk phase's reply as typed; elsewhere an action is its token in brackets, alone or in text,
      // and a bare reply is bracketed whole.
      return talk ? [message ?? written] : [written, `[${written}]`, `I weigh my options and play [${written}].`];
    case "spiral":
      return [`I weigh my options.\n\\boxed{${message ?? written}}`];
    case "adalign":
      return message !== undefined ? [`<<message_start>>${message}<<message_end>>`] : [];
  }
}

type Game = AnyGame & {
  init(config: unknown, rng: Rng): unknown;
  apply(state: unknown, moves: unknown[], rng: Rng): unknown;
};

const knows = (name: RendererName, game: string) => {
  try {
    renderer(name, game);
    return true;
  } catch {
    return false;
  }
};

describe("every answer form a renderer's prompt lists parses as the action it names", () => {
  for (const name of RENDERER_NAMES) {
    for (const game of games.filter((g) => knows(name, g.id))) {
      it(`${name} × ${game.id}`, () => {
        const g = game as unknown as Game;
        const render = renderer(name, game.id);
        let checked = 0;
        for (const variant of Object.keys(game.variants)) {
          const { config } = configure(game, {}, variant);
          for (const seed of ["a", "b"]) {
            const rng = new Rng(`${variant}-${seed}`);
            const pick = new Rng(`pick-${variant}-${seed}`);
            const state = g.init(config, rng);
            const match = (seat: number): MatchView => ({
              game: game.id,
              seat,
              rules: g.rules(config as never),
              config: g.publicConfig(config as never),
              observation: g.observe(state as never, seat),
            });
            const opening = new Map<number, MatchView>();
            for (let step = 0; step < 300; step++) {
              const toAct = g.toAct(state as never);
              if (toAct.length === 0) break;
              const moves: unknown[] = [];
              for (const seat of toAct) {
                if (!opening.has(seat)) opening.set(seat, match(seat));
                const legal = g.legal(state as never, seat) as readonly ActionForm[];
                const observation = g.observe(state as never, seat);
                const view: TurnView = {
                  game: game.id,
                  text: g.describe(observation as never),
                  observation,
                  legal,
                  legalText: describeSpace(legal),
                };
                const line = /^Legal now: (.*)$/m.exec(render.turn(view, opening.get(seat)!))?.[1];
                for (const listed of line?.split(" | ") ?? []) {
                  const form = fillIn(listed);
                  const named = g.parse(form.written, state as never, seat);
                  expect(named, `${game.id} lists "${listed}"`).not.toBeInstanceOf(ActionError);
                  const talk = legal.some((f) => f.kind === "text");
                  for (const reply of replies(name, form, talk)) {
                    const read = render.extract(reply, view);
                    const where = `${name} × ${game.id} (${variant}), listed "${listed}", reply ${
                      JSON.stringify(reply)
                    }`;
                    expect(read, where).toHaveProperty("action");
                    const sent = (read as { action: string }).action;
                    expect(g.parse(sent, state as never, seat), `${where}, sent ${JSON.stringify(sent)}`).toEqual(
                      named,
                    );
                    checked++;
                  }
                }
                moves[seat] = randomAction(legal, () => pick.float());
              }
              g.apply(state, moves.map((m, seat) => m === undefined ? m : g.parse(m, state as never, seat)), rng);
            }
          }
        }
        // adalign's own tokens (<A>/<B>, the proposal) are its prompt's only forms outside a talk phase.
        if (name !== "adalign") expect(checked, `${name} × ${game.id}`).toBeGreaterThan(0);
      });
    }
  }
});
