import { configure } from "../../games/core/config.ts";
import { setImmediate } from "node:timers";
import { Rng } from "../../games/core/rng.ts";
import { getGame } from "../../games/registry.ts";
import { type LiveMatches, requestRefusal, StoreUnavailableError } from "../match/live-matches.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { RateLimit } from "../rate-limit.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import { isPolicySpec, parsePolicySpec, POLICY_PREFIX, policySeatName } from "../../policies/onnx/spec.ts";
import type { Match, MatchResult } from "../match/match.ts";

/**
 * The league scheduler: keeps `live` matches of one game running continuously between the members of a population,
 * choosing who meets whom the way AlphaStar's league does (Vinyals et al., Nature 2019).
 *
 * Every member in turn is the focal player of the next match; its opponent depends on its role:
 * - `main` (a main agent): prioritised fictitious self-play against the whole league, weighted by f_hard(x) = (1−x)²
 *   where x is its estimated chance of beating the opponent (it practises against what beats it); a share of its
 *   matches (`selfPlayShare`) against itself;
 * - `main-exploiter`: only the main agents, weighted by f_var(x) = x(1−x) (opponents it is level with teach most);
 * - `league-exploiter`: the whole league, by f_hard;
 * - `fixed`: the co-player pool (built-ins, past snapshots): never focal, only met.
 * With `weighting` the main agents' and league exploiters' rule can be f_var or uniform instead.
 *
 * x comes from the scheduler's own results, per ordered pair, with a Beta(1, 1) prior (½ before any match), so a
 * population is explored evenly at first and focused as results come in. Matches between main agents and fixed
 * co-players are rated; a match with an exploiter is practice (unrated): exploiters are trained to beat the mains,
 * and their wins would drag the mains' public ratings around without saying anything about the field.
 */

export type LeagueRole = "main" | "main-exploiter" | "league-exploiter" | "fixed";
export const LEAGUE_ROLES: readonly LeagueRole[] = ["main", "main-exploiter", "league-exploiter", "fixed"];

export type Weighting = "hard" | "var" | "uniform";
export const WEIGHTINGS: readonly Weighting[] = ["hard", "var", "uniform"];

export interface LeagueMember {
  /** A built-in strategy (`name[:arg]`) or a policy (`policy:<name>[@v]`). */
  readonly player: string;
  readonly role: LeagueRole;
}

export interface LeagueOptions {
  readonly game: string;
  readonly variant?: string;
  readonly members: readonly LeagueMember[];
  /** Matches kept running at once. */
  readonly live: number;
  /** The main agents' and league exploiters' opponent weighting (default hard). */
  readonly weighting?: Weighting;
  /** At most this many new matches a second (default: as many as `live` allows): a league that runs day and night. */
  readonly ratePerSecond?: number;
  /**
   * Snapshots: where given, each new version of a learning member's policy (a `policy:<name>` member that is not
   * fixed: it plays its latest version) turns the version before into a fixed member, so the learner keeps meeting
   * its past selves (fictitious self-play's history, AlphaStar's past players).
   */
  readonly policies?: PolicyRuntime;
  /** Told of a member retired because it can no longer be seated (a policy version removed), and why. */
  readonly onRetired?: (member: LeagueMember, why: string) => void;
  /** Matches to play in all, then stop (default: until `stop`). */
  readonly matches?: number;
  /** The share of a main agent's matches against itself (default 0: a fixed main learns nothing from it). */
  readonly selfPlayShare?: number;
  readonly seed?: string;
}

/** A league that cannot run as asked: what was wrong and what is allowed. */
export class LeagueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LeagueError";
  }
}

const warnRetired = (member: LeagueMember, why: string) =>
  console.warn(`ludus: league member ${member.player} can no longer be seated and is retired: ${why}`);

/** PFSP's weightings of the focal player's chance x of beating an opponent. */
export const WEIGHT: Readonly<Record<Weighting, (x: number) => number>> = {
  hard: (x) => (1 - x) ** 2,
  var: (x) => x * (1 - x),
  uniform: () => 1,
};

export class LeagueScheduler {
  private readonly rng: Rng;
  private readonly variant: string;
  private readonly game: AnyGame;
  private readonly config: unknown;
  /** The population: the members given, then the snapshots taken as learners move on. */
  private readonly members: LeagueMember[];
  /** Members that can no longer be seated: no longer chosen, by index. */
  private readonly retired = new Set<number>();
  /** Wins (1, ½ for a draw) and matches of member i against member j, from i's side, by `i,j`. */
  private readonly won = new Map<string, number>();
  private readonly played = new Map<string, number>();
  private readonly focal: number[];
  private unsubscribe?: () => void;
  private turn = 0;
  private running = 0;
  private stopped = false;
  private retry?: ReturnType<typeof setTimeout>;
  private filling = false;
  private readonly pace?: RateLimit;
  private created = 0;
  private idle?: () => void;
  private done?: Promise<void>;
  /** Matches that ended, and of them the rated ones. */
  ended = 0;
  rated = 0;

  constructor(private readonly matches: LiveMatches, private readonly options: LeagueOptions) {
    const game = getGame(options.game);
    const { variant, config } = configure(game, {}, options.variant);
    [this.game, this.variant, this.config] = [game, variant, config];
    const { members, live } = options;
    const seats = game.seatCount(config);
    if (seats !== 2) {
      throw new LeagueError(`the league pairs two players a match; ${game.id} (${variant}) has ${seats} seats`);
    }
    if (members.length < 2) throw new LeagueError(`a league needs at least 2 members, got ${members.length}`);
    const twice = members.find((m, i) => members.findIndex((o) => o.player === m.player) !== i);
    if (twice) throw new LeagueError(`member ${twice.player} is named twice: each member enters once`);
    for (const m of members) {
      if (!LEAGUE_ROLES.includes(m.role)) {
        throw new LeagueError(`member ${m.player} has role ${m.role}; roles: ${LEAGUE_ROLES.join(", ")}`);
      }
      // A learner whose trainer has not registered its first version yet waits for it (see `waiting`).
      if (!this.unregisteredLearner(m)) matches.checkInProcess(m.player, game, config);
    }
    this.focal = members.flatMap((m, i) => (m.role === "fixed" ? [] : [i]));
    if (this.focal.length === 0) throw new LeagueError("a league needs at least one member that is not fixed");
    if (members.some((m) => m.role === "main-exploiter") && !members.some((m) => m.role === "main")) {
      throw new LeagueError("main exploiters play the main agents, and this league has none");
    }
    const store = matches.store;
    if (!Number.isInteger(live) || live < 1) throw new LeagueError(`live must be a whole number ≥ 1, got ${live}`);
    // Each live match may hold its record and a few decisions unwritten; past a quarter of the store's buffer, a
    // store that stalls for a moment would refuse every other new match on the server.
    const most = store ? Math.floor(store.writer.capacity / 4) : Infinity;
    if (live > most) {
      throw new LeagueError(
        `${live} live matches is more than the store can take: it holds ${store!.writer.capacity} unwritten records, ` +
          `so at most ${most} live matches (raise the server's --max-unwritten, or keep fewer running)`,
      );
    }
    if (options.ratePerSecond !== undefined) {
      if (!(options.ratePerSecond > 0)) {
        throw new LeagueError(`the rate must be a positive number of matches a second, got ${options.ratePerSecond}`);
      }
      this.pace = new RateLimit(options.ratePerSecond, Math.max(1, Math.min(live, options.ratePerSecond)));
    }
    this.rng = new Rng(options.seed ?? "league", 0);
    this.members = [...members];
  }

  /**
   * Whether `member` is a learning policy (`policy:<name>`, no version named) with no version registered yet: a
   * league may start before its trainer registers the first, and the member plays from then on.
   */
  private unregisteredLearner(member: LeagueMember): boolean {
    const policies = this.options.policies;
    if (!policies || member.role === "fixed" || !isPolicySpec(member.player)) return false;
    const { ref, version, greedy } = parsePolicySpec(member.player);
    return version === undefined && !greedy && policies.versions(ref).length === 0;
  }

  /** Starts filling the live matches (and, with `policies`, taking snapshots of the learners). */
  start(): void {
    this.unsubscribe = this.options.policies?.onRegistered((record) => {
      const learner = this.members.some((m) => m.role !== "fixed" && m.player === `${POLICY_PREFIX}${record.name}`);
      if (learner) this.fillSoon(); // a learner may have waited for its first version
      if (!learner || record.version < 2) return;
      const snapshot = policySeatName(record.name, record.version - 1, false);
      if (!this.members.some((m) => m.player === snapshot)) this.members.push({ player: snapshot, role: "fixed" });
    });
    this.fill();
  }

  /** The population now: the members given and the snapshots added since, less those retired. */
  population(): readonly LeagueMember[] {
    return this.members.filter((_, i) => !this.retired.has(i));
  }

  /** Creates no more matches; resolves once those running have ended. */
  stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.retry);
    if (this.over) this.idle?.();
    return this.finished();
  }

  /** Nothing runs and nothing more will (stopped, or `matches` played). */
  private get over(): boolean {
    return this.running === 0 && (this.stopped || this.created === this.options.matches);
  }

  /** Resolves once no match runs and none will be made (stopped, or `matches` played). */
  finished(): Promise<void> {
    if (this.over) return Promise.resolve();
    return this.done ??= new Promise((resolve) => (this.idle = resolve));
  }

  /** The focal member's estimated chance of beating `opponent` (½ before they met). */
  chance(focal: number, opponent: number): number {
    const k = `${focal},${opponent}`;
    return ((this.won.get(k) ?? 0) + 1) / ((this.played.get(k) ?? 0) + 2);
  }

  /** Matches between each ordered pair of the population so far: how the scheduler spread them. */
  pairings(): number[][] {
    const n = this.members.length;
    return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => this.played.get(`${i},${j}`) ?? 0));
  }

  /** The opponent the focal member meets next, by its role. */
  pick(focal: number): number {
    const members = this.members;
    const role = members[focal].role;
    if (role === "main" && this.rng.float() < (this.options.selfPlayShare ?? 0)) return focal;
    const candidates = members.flatMap((m, j) =>
      j !== focal && !this.retired.has(j) && !this.unregisteredLearner(m) &&
        (role !== "main-exploiter" || m.role === "main")
        ? [j]
        : []
    );
    if (candidates.length === 0) return focal; // everyone else retired: it can still play itself
    const weighting = role === "main-exploiter" ? "var" : this.options.weighting ?? "hard";
    // A small floor keeps every candidate reachable: x is an estimate, and one that reads 1 today may not tomorrow.
    const weights = candidates.map((j) => Math.max(1e-3, WEIGHT[weighting](this.chance(focal, j))));
    let r = this.rng.float() * weights.reduce((a, b) => a + b, 0);
    for (let k = 0; k < candidates.length; k++) if ((r -= weights[k]) < 0) return candidates[k];
    return candidates.at(-1)!;
  }

  private fill(): void {
    this.filling = false;
    // An end counts only after `create` returned (even for matches of built-ins over inside it), so a turn of the
    // event loop makes at most `live` matches.
    while (!this.stopped && this.running < this.options.live) {
      if (this.options.matches !== undefined && this.created >= this.options.matches) return;
      if (this.pace && !this.pace.take()) {
        this.retry = setTimeout(() => this.fill(), 1000 / this.pace.rate);
        return;
      }
      // Until a waiting learner's first version comes, the others play; with none able to, nothing does.
      const able = (i: number) => !this.retired.has(i) && !this.unregisteredLearner(this.members[i]);
      if (!this.focal.some(able)) return;
      const focal = this.focal[this.turn++ % this.focal.length];
      if (!able(focal)) continue;
      const opponent = this.pick(focal);
      const members = this.members;
      const exploiter = [focal, opponent].some((i) => members[i].role.endsWith("exploiter"));
      const seats = this.rng.float() < 0.5 ? [focal, opponent] : [opponent, focal];
      let match: Match;
      try {
        match = this.matches.create({
          game: this.options.game,
          variant: this.variant,
          // The match is the focal member's to learn from: its seat is the learner, its opponent's is not.
          seats: seats.map((i) => ({ strategy: members[i].player, ...(i === focal && { learner: true }) })),
          rated: !exploiter && focal !== opponent,
          seed: `${this.options.seed ?? "league"}/${this.turn}`,
        });
      } catch (error) {
        if (error instanceof StoreUnavailableError) {
          // The store's buffer is full: let it write. A stopping server starts nothing more.
          if (error.code === "store_unavailable") this.retry = setTimeout(() => this.fill(), 100);
          else void this.stop();
          return;
        }
        const refused = requestRefusal(error);
        if (!refused) throw error;
        this.retire(seats, refused.message);
        continue;
      }
      this.created++;
      this.running++;
      // An end counts once it is durable (its rating is then under way).
      match.durableEnd().then((end) => {
        this.countEnd(match, seats, end);
        this.fillSoon();
      });
    }
  }

  /**
   * Retires the members of a refused match that can no longer be seated; stops once no member may choose, or when
   * the refusal is none of theirs (nothing would change on the next try).
   */
  private retire(seats: readonly number[], why: string): void {
    let retired = 0;
    for (const i of new Set(seats)) {
      try {
        this.matches.checkInProcess(this.members[i].player, this.game, this.config);
      } catch {
        this.retired.add(i);
        retired++;
        (this.options.onRetired ?? warnRetired)(this.members[i], why);
      }
    }
    if (retired === 0) console.warn(`ludus: a league stops: its matches are refused (${why})`);
    if (retired === 0 || this.focal.every((i) => this.retired.has(i))) void this.stop();
  }

  private fillSoon(): void {
    if (this.filling || this.stopped) return;
    this.filling = true;
    setImmediate(() => this.fill());
  }

  private countEnd(match: Match, seats: readonly number[], end: MatchResult): void {
    this.running--;
    this.ended++;
    if (match.rated) this.rated++;
    if (end.reason === "completed") this.record(seats, end.returns);
    if (this.over) this.idle?.();
  }

  private record(seats: readonly number[], returns: readonly number[]): void {
    const [a, b] = seats;
    if (a === b) return;
    const score = returns[0] > returns[1] ? 1 : returns[0] === returns[1] ? 0.5 : 0;
    const add = (map: Map<string, number>, key: string, x: number) => map.set(key, (map.get(key) ?? 0) + x);
    add(this.won, `${a},${b}`, score);
    add(this.won, `${b},${a}`, 1 - score);
    add(this.played, `${a},${b}`, 1);
    add(this.played, `${b},${a}`, 1);
  }
}
