import type { AnyGame } from "../../games/core/game.ts";
import { Rng } from "../../games/core/rng.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import { policySeatName } from "../../policies/onnx/spec.ts";
import { type LiveMatches, StoreUnavailableError } from "../match/live-matches.ts";
import type { Match } from "../match/match.ts";

/**
 * Self-play for a learning policy: keeps `live` matches of `game` running, each between the policy's latest
 * version (at the match's creation) and an opponent — the latest version again, or, with probability
 * `snapshotShare`, a past version drawn uniformly (fictitious self-play against its own history). The learner's
 * seat alternates, so it plays every seat. Every match is recorded like any other: the trainer reads them back
 * from the tensors dataset.
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
}

export class SelfPlay {
  private readonly rng: Rng;
  private running = 0;
  private stopped = false;
  private created = 0;
  private waiting?: () => void;
  /** The latest version's id, and the matches created with it so far. */
  private version?: string;
  private ofVersion = 0;
  /** Matches that ended, and the decisions they held. */
  ended = 0;
  decisions = 0;

  constructor(
    private readonly matches: LiveMatches,
    private readonly policies: PolicyRuntime,
    private readonly options: SelfPlayOptions,
  ) {
    this.rng = new Rng(options.seed ?? 1, 0);
  }

  /** Starts filling the live matches; waits for the policy's first version if it has none yet. */
  start(): void {
    const unsubscribe = this.policies.onRegistered((record) => {
      if (record.name === this.options.name) this.fill();
    });
    this.waiting = unsubscribe;
    this.fill();
  }

  /** Creates no more matches; those running finish. */
  stop(): void {
    this.stopped = true;
    this.waiting?.();
  }

  private fill(): void {
    const versions = this.policies.versions(this.options.name);
    if (versions.length === 0) return;
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
    const { game, variant, name } = this.options;
    const latest = `policy:${name}`;
    const past = versions.length > 1 && this.rng.float() < (this.options.snapshotShare ?? 0.2);
    const opponent = past
      ? policySeatName(name, versions[Math.floor(this.rng.float() * (versions.length - 1))].version, false)
      : latest;
    const seats = (this.created++ % 2 === 0 ? [latest, opponent] : [opponent, latest]).map((strategy) => ({
      strategy,
    }));
    return this.matches.create({ game: game.id, variant, seats });
  }
}
