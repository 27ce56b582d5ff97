import { configure } from "../../games/core/config.ts";
import { strategiesFor } from "../../policies/baselines/index.ts";
import { type AnyGame, twoPlayerZeroSum } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import { policySeatName } from "../../policies/onnx/spec.ts";
import { type LiveMatches, StoreUnavailableError } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";
import { StrategyError } from "../../policies/strategy.ts";

/**
 * Self-play for a learning policy: keeps `live` matches of `game` running, each between the policy's latest
 * version (at the match's creation) and an opponent — the latest version again, or, with probability
 * `snapshotShare`, a past version drawn uniformly (fictitious self-play against its own history). The learner's
 * seat alternates, so it plays every seat. Every match is recorded like any other: the trainer reads them back
 * from the tensors dataset.
 *
 * A method that learns an average strategy samples with another policy: it registers that one as
 * `<name>.behaviour` before each version of `<name>`, and self-play then seats the behaviour's latest version
 * (the versions of `<name>` still pace the matches) in both seats, never a snapshot: such a method learns only from
 * trajectories its behaviour sampled alone, and its average already holds the history snapshots would bring.
 */

export interface SelfPlayOptions {
  readonly game: AnyGame;
  readonly variant: string;
  /** The learning policy's name. */
  readonly name: string;
  /** Matches kept running at once (default 64). */
  readonly live?: number;
  /** The share of matches against a past version rather than the latest (default 0.2). */
  readonly snapshotShare?: number;
  /** Seeds the opponent draws and the seat order (default 1). */
  readonly seed?: number;
  /**
   * Matches to play with each version, after which the generator waits for the next one (default: no bound).
   * A trainer that needs N matches a step gets them, and the server's time goes to exporting them rather than
   * to matches of a version about to be replaced.
   */
  readonly perVersion?: number;
  /**
   * A policy per seat (`<name>.0`, `<name>.1`, ...) instead of one in every seat, as general-sum games want (shared
   * parameters lose cooperation), and the built-ins a seat meets instead of the other seat's policy with probability
   * `poolShare` (default 0.5; half of those meet a past version of the other seat instead, once there is one).
   */
  readonly perSeat?: { readonly pool: readonly string[]; readonly poolShare?: number };
}

export class SelfPlay {
  private readonly rng: Rng;
  /** The names the learning policies are registered under: one, or one per seat (`<name>.0`, `<name>.1`, ...). */
  private readonly names: readonly string[];
  private running = 0;
  private stopped = false;
  private created = 0;
  private unsubscribe?: () => void;
  /** The latest version's id, and the matches created with it so far. */
  private version?: string;
  private ofVersion = 0;
  /** The version whose seating was refused (quarantined), said once. */
  private refused?: string;
  /** Matches that ended, and the decisions they held. */
  ended = 0;
  decisions = 0;

  constructor(
    private readonly matches: LiveMatches,
    private readonly policies: PolicyRuntime,
    private readonly options: SelfPlayOptions,
  ) {
    this.rng = new Rng(options.seed ?? 1, 0);
    const { name, perSeat, game, variant } = options;
    const seats = game.seatCount(configure(game, {}, variant).config);
    this.names = perSeat ? Array.from({ length: seats }, (_, s) => `${name}.${s}`) : [name];
  }

  /** Starts filling the live matches; waits for the policy's first version if it has none yet. */
  start(): void {
    this.unsubscribe = this.policies.onRegistered((record) => {
      if (this.names.includes(record.name)) this.fill();
    });
    this.fill();
  }

  /** Creates no more matches; those running finish. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
  }

  private fill(): void {
    const names = this.names;
    if (names.some((name) => this.policies.versions(name).length === 0)) return;
    // A step's versions are registered seat after seat: matches wait for the last seat's, so none mixes a new
    // version of one seat with the old one of another.
    const versions = this.policies.versions(names.at(-1)!);
    const live = this.options.live ?? 64;
    const latest = versions.at(-1)!;
    if (latest.id !== this.version) [this.version, this.ofVersion] = [latest.id, 0];
    const bound = this.options.perVersion ?? Infinity;
    while (!this.stopped && this.running < live && this.ofVersion < bound) {
      this.ofVersion++;
      let match: Match;
      try {
        match = this.create(versions);
      } catch (error) {
        if (error instanceof StrategyError) {
          // A version that cannot be seated (quarantined: over its budget) plays no more: the next one registered will.
          if (this.refused !== latest.id) console.error(`ludus: self-play of ${this.options.name}: ${error.message}`);
          this.refused = latest.id;
          this.ofVersion--;
          return;
        }
        if (!(error instanceof StoreUnavailableError)) throw error;
        // The store is backed up: try again once it has had a moment to write.
        setTimeout(() => this.fill(), 100);
        return;
      }
      this.running++;
      match.subscribe((event) => {
        if (event.kind === "step") this.decisions += event.step.moves.filter((m) => m !== undefined).length;
        if (event.kind !== "end") return;
        this.running--;
        this.ended++;
        this.fill();
      });
    }
  }

  private create(versions: readonly { version: number }[]): Match {
    // Counted per version whoever sits opposite: the trainer learns from every match its latest version plays.
    const { game, variant, name, perSeat } = this.options;
    if (perSeat) return this.matches.create({ game: game.id, variant, seats: this.perSeatLineUp(perSeat) });
    const behaviour = `${name}${BEHAVIOUR_SUFFIX}`;
    const seated = this.policies.versions(behaviour).length > 0 ? behaviour : name;
    const latest = `policy:${seated}`;
    const past = seated === name && versions.length > 1 && this.rng.float() < (this.options.snapshotShare ?? 0.2);
    const opponent = past
      ? policySeatName(seated, versions[Math.floor(this.rng.float() * (versions.length - 1))].version, false)
      : latest;
    const seats = (this.created++ % 2 === 0 ? [latest, opponent] : [opponent, latest]).map((strategy) => ({
      strategy,
    }));
    return this.matches.create({ game: game.id, variant, seats });
  }

  /** Each seat's latest policy; or one seat's against a built-in of the pool, or the other seat's past version. */
  private perSeatLineUp(perSeat: NonNullable<SelfPlayOptions["perSeat"]>): { strategy: string }[] {
    const names = this.names;
    const seats = names.map((n) => `policy:${n}`);
    if (this.rng.float() < (perSeat.poolShare ?? 0.5)) {
      const learner = Math.floor(this.rng.float() * names.length);
      for (let seat = 0; seat < names.length; seat++) {
        if (seat === learner) continue;
        const past = this.policies.versions(names[seat]).slice(0, -1);
        const pick = <T>(from: readonly T[]) => from[Math.floor(this.rng.float() * from.length)];
        if (past.length > 0 && (perSeat.pool.length === 0 || this.rng.float() < 0.5)) {
          seats[seat] = policySeatName(names[seat], pick(past).version, false);
        } else if (perSeat.pool.length > 0) seats[seat] = pick(perSeat.pool);
      }
    }
    return seats.map((strategy) => ({ strategy }));
  }
}

/** Where a policy that learns an average registers the policy it samples with: `<name>.behaviour`. */
const BEHAVIOUR_SUFFIX = ".behaviour";

/**
 * How a learning policy of `game` sits: one policy everywhere (by default in two-player zero-sum games, where one
 * symmetric policy learns both seats), or a policy per seat meeting the game's built-ins.
 */
export function seatingFor(
  game: AnyGame,
  variant: string,
  perSeat = !twoPlayerZeroSum(game, configure(game, {}, variant).config),
): Pick<SelfPlayOptions, "perSeat"> {
  if (!perSeat) return {};
  const own = strategiesFor(game.id).filter((s) => s.game === game.id && (!s.arg || s.arg.default !== undefined));
  return { perSeat: { pool: own.map((s) => s.name) } };
}
