import { isActionError } from "./action.ts";
import { Episode } from "./episode.ts";
import type { AnyGame } from "./game.ts";
import { maskIds, shapeSize } from "./numeric.ts";
import { Rng, type Seed } from "./rng.ts";

/**
 * A golden playthrough, as OpenSpiel's integration_tests/playthroughs: one seeded match of a game variant
 * written out state by state — every seat's observation, text, tensor, legal actions and mask, the moves,
 * rewards and returns — so that any change of behaviour shows up as a diff and forces a deliberate version
 * bump. Moves are drawn uniformly over the legal action ids (the numeric face), from stream 1 of the seed.
 */

/** Steps printed in full; the rest of a long match is played and summed up. */
const PRINTED_STEPS = 12;

/** The playthrough of `variant` of `game` with seed `seed`, as text. */
export function playthrough(game: AnyGame, variant: string, seed: Seed = "playthrough"): string {
  const config = game.schema.parse(game.variants[variant].config);
  const seats = game.seatCount(config);
  const shape = game.observationShape(config);
  const count = game.actionCount(config);
  const out: string[] = [
    `game: ${game.id}`,
    `version: ${game.version}`,
    `variant: ${variant}`,
    `config: ${JSON.stringify(config)}`,
    `seed: ${JSON.stringify(String(seed))}`,
    `seats: ${seats}`,
    `observationShape: ${JSON.stringify(shape)}`,
    `actionCount: ${count}`,
  ];
  const chance: string[] = [];
  const episode = new Episode(game, config, seed, (outcome, odds) => {
    chance.push(`chance: outcome ${outcome} of ${odds.length} (p = ${round(odds[outcome])})`);
  });
  const picker = new Rng(seed, 1);
  const tensor = new Float32Array(shapeSize(shape));
  const mask = new Uint8Array(count);
  const moves: unknown[] = new Array(seats).fill(undefined);
  let later = 0;
  while (true) {
    const printing = episode.steps < PRINTED_STEPS;
    if (printing) {
      out.push("", `# step ${episode.steps}`, ...chance.splice(0));
      out.push(`toAct: ${JSON.stringify(episode.toAct)}`, `returns: ${numbers(episode.returns())}`);
      for (let seat = 0; seat < seats; seat++) {
        const observation = episode.observe(seat);
        game.encode(observation, tensor);
        episode.legalMask(seat, mask);
        out.push(
          `seat ${seat}:`,
          `  observation: ${JSON.stringify(observation)}`,
          ...game.describe(observation).split("\n").map((line) => `  | ${line}`),
          `  tensor: ${nonzero(tensor)}`,
          `  legal: ${JSON.stringify(episode.legal(seat))}`,
          `  legal ids: ${JSON.stringify(maskIds(mask))}`,
        );
      }
      out.push(`public: ${JSON.stringify(episode.observe("public"))}`);
    } else chance.length = 0;
    if (episode.over) break;
    const ids: string[] = [];
    for (const seat of episode.toAct) {
      const legal = maskIds(episode.legalMask(seat, mask));
      const id = legal[picker.int(legal.length)];
      const action = episode.actionOf(id, seat);
      if (isActionError(action)) throw new Error(`${game.id}: legal id ${id} of seat ${seat} gave ${action.message}`);
      moves[seat] = action;
      ids.push(`seat ${seat}: id ${id} = ${JSON.stringify(action)}`);
    }
    const rewards = episode.step(moves as never);
    moves.fill(undefined);
    if (printing) out.push(...ids.map((move) => `move ${move}`), `rewards: ${numbers(rewards)}`);
    else later++;
  }
  if (later > 0) out.push("", `# ${later} more steps played, not printed`);
  out.push("", `# over after ${episode.steps} steps`, `returns: ${numbers(episode.returns())}`, "");
  return out.join("\n");
}

/** A number as the playthrough prints it: at most six decimals, so a file reads the same on every machine. */
function round(x: number): string {
  return String(Math.round(x * 1e6) / 1e6);
}

function numbers(xs: readonly number[]): string {
  return `[${xs.map(round).join(", ")}]`;
}

/** A tensor's non-zero entries as `index=value`, OpenSpiel's ◉ marks in a form that stays short. */
function nonzero(tensor: Float32Array): string {
  const entries: string[] = [];
  for (let i = 0; i < tensor.length; i++) if (tensor[i] !== 0) entries.push(`${i}=${round(tensor[i])}`);
  return `${tensor.length} entries, non-zero: ${entries.length ? entries.join(" ") : "none"}`;
}
