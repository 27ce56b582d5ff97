import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { getGame } from "../../games/registry.ts";
import type { DonorObservation } from "../../games/donor-game/game.ts";
import type { EvolutionRecord, EvolvedAgent, GenerationRecord, NewEvolution } from "../../db/league.ts";
import type { ReplayStore } from "../../db/store.ts";
import type { StepRecordRow } from "../../db/records.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import { closeCutOff } from "./cut-off.ts";

/**
 * The Donor Game's cultural evolution (Vallinder & Hughes, "Cultural Evolution of Cooperation among LLM Agents",
 * 2024): a population of agents plays a generation (one Donor Game match), the better half by final resources
 * survives, and each new agent takes a survivor's strategy as its own — for a built-in, the survivor's strategy
 * with its numeric argument moved a little (`mutation`); an LLM agent (`llm` in the population) writes its own with
 * the survivors' strategies and scores as advice in its strategy prompt (clients/llm/strategy.ts), as in the paper,
 * while a surviving LLM agent keeps the strategy it wrote. LLM seats are played by a model client over the protocol
 * (`LlmSeats`: the CLI wires clients/llm/generation.ts in), built-ins in-process. Repeated for `generations`, over `seeds` independent runs. Every
 * generation's match is recorded (unrated: a population plays itself), and each generation's agents, mean
 * resources and donation share are stored, so an interrupted evolution resumes where it stopped and its curve can
 * be drawn.
 */

export class EvolutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EvolutionError";
  }
}

/** The population entry of an LLM agent. */
export const LLM_AGENT = "llm";

/** A generation's seats as the model client gets them: an LLM agent (a survivor keeps its strategy) or a built-in. */
export type GenerationSeat = { readonly llm: true; readonly keep?: string } | { readonly strategy: string };

/**
 * Plays a generation's LLM seats: creates its match (every LLM seat the client's, built-ins the server's) and
 * answers with the match's id, and, once it has ended, each LLM seat's strategy by seat.
 */
export type LlmSeats = (generation: {
  readonly config: Record<string, unknown>;
  readonly seed: string;
  readonly seats: readonly GenerationSeat[];
  readonly advice: readonly { readonly strategy: string; readonly score: number }[];
}) => Promise<{ readonly match: string; readonly strategies: Promise<ReadonlyMap<number, string>> }>;

export interface EvolutionRequest {
  /** The first generation's strategies, repeated in order to fill the agents (default DEFAULT_POPULATION); `llm` is an LLM agent. */
  readonly population?: readonly string[];
  /** Donor Game config overrides (agents, mechanism, ...); `names` and `generation` are the evolution's own. */
  readonly config?: Record<string, unknown>;
  readonly generations?: number;
  readonly seeds?: number;
  readonly mutation?: number;
  readonly seed?: string;
}

/** From stingy to generous, unconditional and reciprocating: a first generation with something to select. */
export const DEFAULT_POPULATION: readonly string[] = [
  "donate:0",
  "donate:0.25",
  "donate:0.5",
  "donate:0.75",
  "reciprocator:0",
  "reciprocator:0.5",
  "reciprocator:1",
  "donate:1",
];

const GAME = "donor-game";

export function checkEvolution(request: EvolutionRequest, live: LiveMatches): NewEvolution {
  const game = getGame(GAME);
  const own = ["names", "generation"].filter((k) => request.config && k in request.config);
  if (own.length) {
    throw new EvolutionError(`the evolution sets ${own.join(" and ")} itself; leave them out of the config`);
  }
  const { config } = configure(game, request.config ?? {});
  const agents = (config as { agents: number }).agents;
  const population = request.population?.length ? request.population : DEFAULT_POPULATION;
  if (population.length > agents) {
    throw new EvolutionError(`${population.length} strategies for ${agents} agents: give at most one per agent`);
  }
  for (const spec of population) if (spec !== LLM_AGENT) live.checkInProcess(spec, game, config);
  const generations = request.generations ?? 10;
  const seeds = request.seeds ?? 1;
  const mutation = request.mutation ?? 0.05;
  if (!Number.isInteger(generations) || generations < 1 || generations > 1000) {
    throw new EvolutionError(`generations must be a whole number from 1 to 1000, got ${generations}`);
  }
  if (!Number.isInteger(seeds) || seeds < 1 || seeds > 1000) {
    throw new EvolutionError(`seeds must be a whole number from 1 to 1000, got ${seeds}`);
  }
  if (!(mutation >= 0 && mutation <= 1)) throw new EvolutionError(`mutation must be in [0, 1], got ${mutation}`);
  return { config: request.config ?? {}, population, generations, seeds, mutation, seed: request.seed ?? "1" };
}

/** One generation's agents before it plays (an LLM agent's strategy is empty until it has written one). */
type Agent = Pick<EvolvedAgent, "name" | "strategy" | "llm">;

export interface EvolutionReport {
  readonly evolution: EvolutionRecord;
  readonly generations: readonly GenerationRecord[];
  /** Per generation, the mean over runs: what the paper plots. */
  readonly curve: readonly { generation: number; meanResources: number; donationFraction: number }[];
}

export async function runEvolution(
  store: ReplayStore,
  live: LiveMatches,
  e: EvolutionRecord,
  onGeneration?: (g: GenerationRecord) => void,
  llm?: LlmSeats,
): Promise<EvolutionReport> {
  if (e.population.includes(LLM_AGENT) && !llm) {
    throw new EvolutionError("this evolution has LLM agents: give the model to play them (--model and --base-url)");
  }
  const stored = new Map((await store.league.generations(e.id)).map((g) => [`${g.run}/${g.generation}`, g]));
  for (const cut of await store.league.cutOffGenerations(e.id)) {
    await closeCutOff(
      store,
      cut.matchId,
      "its evolution was interrupted; the resumed evolution played the generation again",
    );
  }
  const { agents: count, games } = configure(getGame(GAME), e.config).config as { agents: number; games: number };
  for (let run = 0; run < e.seeds; run++) {
    let agents: Agent[] = Array.from({ length: count }, (_, i) => {
      const spec = e.population[i % e.population.length];
      return { name: `agent-${i + 1}`, ...(spec === LLM_AGENT ? { strategy: "", llm: true } : { strategy: spec }) };
    });
    let advice: { strategy: string; score: number }[] = [];
    for (let generation = 1; generation <= e.generations; generation++) {
      let record = stored.get(`${run}/${generation}`);
      if (!record) {
        const seating = { run, generation, games, advice, llm };
        record = await playGeneration(store, live, e, seating, agents);
        await store.league.putGeneration(e.id, record);
      }
      onGeneration?.(record);
      advice = record.agents.filter((a) => a.survived && a.llm && a.strategy)
        .map((a) => ({ strategy: a.strategy, score: a.resources }));
      agents = nextGeneration(
        record,
        generation + 1,
        new Rng(`${e.seed}/${run}/${generation}/offspring`, 0),
        e.mutation,
      );
    }
  }
  await store.league.endEvolution(e.id);
  return await evolutionReport(store, (await store.league.evolution(e.id)) ?? e);
}

/** A stored evolution with its curve, finished or not. */
export async function evolutionReport(store: ReplayStore, e: EvolutionRecord): Promise<EvolutionReport> {
  const generations = await store.league.generations(e.id);
  const byGeneration = Map.groupBy(generations, (g) => g.generation);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    evolution: e,
    generations,
    curve: [...byGeneration].sort(([a], [b]) => a - b).map(([generation, gs]) => ({
      generation,
      meanResources: mean(gs.map((g) => g.meanResources)),
      donationFraction: mean(gs.map((g) => g.donationFraction)),
    })),
  };
}

interface Seating {
  readonly run: number;
  readonly generation: number;
  readonly games: number;
  /** The previous generation's surviving LLM strategies, for the new LLM agents' strategy prompt. */
  readonly advice: readonly { strategy: string; score: number }[];
  readonly llm?: LlmSeats;
}

async function playGeneration(
  store: ReplayStore,
  live: LiveMatches,
  e: EvolutionRecord,
  { run, generation, games, advice, llm }: Seating,
  agents: readonly Agent[],
): Promise<GenerationRecord> {
  const config = { ...e.config, generation, names: agents.map((a) => a.name) };
  const seed = `${e.seed}/${run}/${generation}`;
  let match: Match;
  let written: Promise<ReadonlyMap<number, string>> | undefined;
  if (agents.some((a) => a.llm)) {
    const seats = agents.map((a): GenerationSeat => a.llm ? { llm: true, ...(a.strategy && { keep: a.strategy }) } : a);
    const seated = await llm!({ config, seed, seats, advice });
    // Made through the gateway on the same server: live for a minute after it ends.
    const made = live.get(seated.match);
    if (!made) throw new EvolutionError(`the model's match ${seated.match} is not on this server`);
    match = made;
    written = seated.strategies;
  } else {
    match = await live.createWhenWritable({
      game: GAME,
      config,
      seats: agents.map((a) => ({ strategy: a.strategy })),
      seed,
      rated: false,
    });
  }
  await store.league.putGeneration(e.id, {
    run,
    generation,
    matchId: match.id,
    agents: agents.map((a) => ({ ...a, resources: 0, donated: 0, survived: false })),
  });
  const [end, strategies] = await Promise.all([
    match.durableEnd(),
    written?.catch((error: Error) => {
      throw new EvolutionError(`the LLM agents of generation ${generation} of run ${run} failed: ${error.message}`);
    }),
  ]);
  if (end.reason !== "completed") {
    throw new EvolutionError(`generation ${generation} of run ${run} ended ${end.reason} (match ${match.id})`);
  }
  // An LLM agent's strategy is what it wrote (or kept) for this generation.
  const played = agents.map((a, i) => (a.llm ? { ...a, strategy: strategies?.get(i) ?? a.strategy } : a));
  const donated = donationShares(await store.steps(match.id), agents.length);
  // The better half by final resources survives; ties go to the earlier seat.
  const order = agents.map((_, i) => i).sort((a, b) => end.returns[b] - end.returns[a] || a - b);
  const survivors = new Set(order.slice(0, agents.length / 2));
  const decisions = donated.filter((d) => !Number.isNaN(d));
  return {
    run,
    generation,
    matchId: match.id,
    agents: played.map((a, i): EvolvedAgent => ({
      ...a,
      resources: end.returns[i],
      donated: Number.isNaN(donated[i]) ? 0 : donated[i], // a seat that never had anything to give
      survived: survivors.has(i),
    })),
    meanResources: end.returns.reduce((a, b) => a + b, 0) / (agents.length * games),
    donationFraction: decisions.length ? decisions.reduce((a, b) => a + b, 0) / decisions.length : 0,
  };
}

/** Each seat's mean share of its resources given as a donor (NaN for a seat that never donated anything it had). */
function donationShares(steps: readonly StepRecordRow[], seats: number): number[] {
  const sum = new Array<number>(seats).fill(0);
  const n = new Array<number>(seats).fill(0);
  for (const step of steps) {
    const you = (step.observation as DonorObservation).you;
    const action = step.action as { type?: string; amount?: number } | null;
    if (!you || you.role !== "donor" || !(you.resources > 0) || !action) continue;
    sum[step.seat] += action.type === "donate" ? (action.amount ?? 0) / you.resources : 0;
    n[step.seat]++;
  }
  return sum.map((s, i) => (n[i] ? s / n[i] : NaN));
}

/** The survivors, and as many new agents, each a copy of a survivor's strategy with its argument mutated. */
function nextGeneration(record: GenerationRecord, generation: number, rng: Rng, mutation: number): Agent[] {
  const survivors = record.agents.filter((a) => a.survived).map(({ name, strategy, llm }): Agent => ({
    name,
    strategy,
    ...(llm && { llm }),
  }));
  const offspring = survivors.map((_, k): Agent => {
    const parent = rng.pick(survivors);
    const name = `agent-g${generation}.${k + 1}`;
    // A new LLM agent writes its own strategy, with every survivor's as advice.
    return parent.llm ? { name, strategy: "", llm: true } : { name, strategy: mutate(parent.strategy, rng, mutation) };
  });
  return [...survivors, ...offspring];
}

/** `name:x` with x in [0, 1] moved by a normal step of size `sigma` (kept in [0, 1]); other strategies as they are. */
export function mutate(spec: string, rng: Rng, sigma: number): string {
  const at = spec.indexOf(":");
  const arg = at < 0 ? NaN : Number(spec.slice(at + 1));
  if (!(arg >= 0 && arg <= 1) || sigma === 0) return spec;
  // Box–Muller from the run's own stream: the same seed evolves the same way.
  const step = Math.sqrt(-2 * Math.log(1 - rng.float())) * Math.cos(2 * Math.PI * rng.float());
  const moved = Math.min(1, Math.max(0, arg + sigma * step));
  return `${spec.slice(0, at)}:${Number(moved.toFixed(3))}`;
}
