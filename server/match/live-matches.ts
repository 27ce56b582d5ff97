import type { OnlineRatings } from "../league/online-ratings.ts";
import { randomBytes } from "node:crypto";
import { ConfigError, configure } from "../../games/core/config.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { getGame, UnknownGameError, UnknownVersionError } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import { StrategyError } from "../../policies/strategy.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import { isPolicySpec } from "../../policies/onnx/spec.ts";
import { PolicyError } from "../../policies/onnx/network.ts";
import type { ConductPolicy, CreateFrame, ErrorCode, SeatKind } from "../../protocol/frames.ts";
import type { ClockSpec } from "./clock.ts";
import type { MatchRecord } from "../../db/records.ts";
import type { ReplayStore } from "../../db/store.ts";
import { Match, MatchRequestError, type Participant, playsInProcess, RestoreError } from "./match.ts";
import { type ClusterState, matchSlot } from "../cluster/state.ts";

export { MatchRequestError };

export interface NewMatch {
  readonly game: string;
  readonly variant?: string;
  readonly config?: unknown;
  readonly seed?: string;
  /** The seed group the match belongs to (see CreateFrame.group). */
  readonly group?: string;
  /** Whether it counts for ratings (default false: practice). */
  readonly rated?: boolean;
  /**
   * One per seat: a participant, `{ strategy: "name[:arg]" }` for a built-in or `{ strategy: "policy:<name>" }`
   * for a registered policy, or undefined for an open seat.
   */
  readonly seats: readonly (Participant | { readonly strategy: string; readonly learner?: boolean } | undefined)[];
  /**
   * Its creator is told `created`, which promises a match that exists even after a crash: its record is
   * durable before anything is sent. Otherwise (a queue's pairing, self-play) a match that starts at once is
   * recorded as it starts, and its first frames do not wait for that write.
   */
  readonly announced?: boolean;
}

/** New matches are refused while the replay store cannot take their records, or while the server stops. */
export class StoreUnavailableError extends Error {
  constructor(readonly code: "store_unavailable" | "server_stopping", message: string) {
    super(message);
    this.name = "StoreUnavailableError";
  }
}

/**
 * The protocol's code and message for an expected refusal of a match request (a bad game, config or
 * strategy, a seat that cannot be had, a store that cannot take the match); undefined for anything else,
 * which is a bug. One table for the gateway and the browser rooms.
 */
export function requestRefusal(error: unknown): { code: ErrorCode; message: string } | undefined {
  if (error instanceof MatchRequestError || error instanceof StoreUnavailableError) return error;
  if (error instanceof UnknownGameError) return { code: "unknown_game", message: error.message };
  if (error instanceof ConfigError) return { code: "bad_config", message: error.message };
  if (error instanceof StrategyError || error instanceof PolicyError) {
    return { code: "bad_strategy", message: error.message };
  }
  return undefined;
}

/** A private match as a `create` frame (or a browser's room options) asks for it. */
export type PrivateMatchRequest = Omit<CreateFrame, "type">;

export interface LiveMatchesOptions {
  readonly clocks?: Partial<Record<SeatKind, ClockSpec>>;
  readonly conduct?: Partial<ConductPolicy>;
  /**
   * How long an ended match with a person in it (or any, without a store) stays in memory, so that a reloaded
   * page or a late resume still finds it; others are let go once their end is durable.
   */
  readonly lingerMs?: number;
  /** How long a match may wait for its open seats before it is aborted (invites expire). */
  readonly waitingTtlMs?: number;
  /** The replay store: every match is recorded there. */
  readonly store?: ReplayStore;
  /** The online ratings rated matches update as they end; without it nothing is rated here. */
  readonly ratings?: OnlineRatings;
  /** The registered policies seats may name (`policy:<name>`); without it such seats are refused. */
  readonly policies?: PolicyRuntime;
  /** Where each token's live matches count against its `maxMatches` (the cluster's, or this process's). */
  readonly state?: ClusterState;
}

/**
 * Logs a failure, but for the store or Redis being away: that is said where it is found out, once (a slot left behind
 * then is found out later, see gateway/token-slots.ts).
 */
export const quietWhileAway = (what: string) => (error: Error): void => {
  if (!(error instanceof StoreUnavailableError)) console.warn(`ludus: ${what}: ${error.message}`);
};

/** How long a run waits for a full write buffer before it asks again (`createWhenWritable`). */
const STORE_FULL_RETRY_MS = 100;

/** A private match whose invite nobody uses is aborted after this long. */
export const DEFAULT_WAITING_TTL_MS = 30 * 60_000;

/** An id that is hard to guess: invites are capabilities, match ids are public. */
function randomId(bytes: number): string {
  return randomBytes(bytes).toString("base64url");
}

const participantsOf = (match: Match) => Array.from({ length: match.seatCount }, (_, s) => match.participant(s));

/**
 * Every live match of this server process, by id and by invite; the tokens seated in each hold a slot for it in the
 * cluster's state until it ends (see gateway/token-slots.ts).
 */
export class LiveMatches {
  private readonly byId = new Map<string, Match>();
  private readonly byInvite = new Map<string, Match>();
  /** The tokens holding a slot for each live match, by match id. */
  private readonly slotsHeld = new Map<string, Set<string>>();
  /** Ended matches let go at once (see track), by id, with when, in that order: kept as long as others linger. */
  private readonly letGoAt = new Map<string, number>();
  private stopping = false;

  constructor(private readonly options: LiveMatchesOptions = {}) {
    // A policy over its budget must not hold a match (nor its own removal): what seats it ends in error.
    options.policies?.onQuarantined((id, why) => this.endSeating(id, `policy quarantined: ${why}`));
  }

  /** Ends every live match here that seats policy version `id` in error, `why` recorded; resolves once written. */
  async endSeating(id: string, why: string): Promise<void> {
    const seating = this.all().filter((m) => participantsOf(m).some((p) => p?.policy?.id === id));
    for (const match of seating) match.fail(why);
    await Promise.all(seating.filter((m) => !m.suspended).map((m) => m.durableEnd().catch(() => {})));
  }

  get store(): ReplayStore | undefined {
    return this.options.store;
  }

  get ratings(): OnlineRatings | undefined {
    return this.options.ratings;
  }

  /** Validates the game, variant, config and strategies (throwing their own clear errors), then opens the match. */
  create(spec: NewMatch): Match {
    this.checkAccepting();
    const game = getGame(spec.game);
    const { variant, config } = configure(game, spec.config ?? {}, spec.variant);
    const count = game.seatCount(config);
    if (spec.seats.length > count) {
      throw new MatchRequestError("bad_config", `${game.id} (${variant}) has ${count} seats, not ${spec.seats.length}`);
    }
    const seed = spec.seed ?? BigInt(`0x${randomBytes(8).toString("hex")}`).toString();
    const participants: (Participant | undefined)[] = [];
    let match: Match;
    try {
      for (let seat = 0; seat < count; seat++) {
        const s = spec.seats[seat];
        participants.push(
          s === undefined || "kind" in s
            ? s
            : { ...this.inProcess(s.strategy, game, config, seed, seat), ...(s.learner && { learner: true }) },
        );
      }
      if (participants.every(playsInProcess)) this.checkAccepting(true);
      match = this.open(game, variant, config, seed, participants, { group: spec.group, rated: spec.rated });
    } catch (error) {
      this.letGo(participants);
      throw error;
    }
    this.track(match);
    match.open(spec.announced);
    return match;
  }

  /**
   * `create`, waiting while the store's write buffer is full rather than refusing: for the runs that make their own
   * matches in-process (tournaments, evolutions, scenarios), which have no one to refuse to and only need the store
   * to catch up. A stopping server still refuses.
   */
  async createWhenWritable(spec: NewMatch): Promise<Match> {
    for (;;) {
      try {
        return this.create(spec);
      } catch (error) {
        if (!(error instanceof StoreUnavailableError && error.code === "store_unavailable")) throw error;
        await new Promise((resolve) => setTimeout(resolve, STORE_FULL_RETRY_MS));
      }
    }
  }

  /** A built-in strategy or a registered policy, as the participant of `seat`. */
  private inProcess(spec: string, game: AnyGame, config: unknown, seed: string, seat: number): Participant {
    if (!isPolicySpec(spec)) return { kind: "builtin", name: spec, strategy: createStrategy(game.id, spec) };
    const { name, policy, seat: play } = this.policies(spec).seat(spec, game, config, seed, seat);
    return { kind: "policy", name, policy, seat: play };
  }

  /** The registry a `policy:` seat comes from, or a StrategyError where this server has none. */
  private policies(spec: string): PolicyRuntime {
    if (this.options.policies) return this.options.policies;
    throw new StrategyError(`${spec}: this server has no policy registry to seat policies from`);
  }

  /** Throws the StrategyError a seat named `spec` would get in a match of `config`, seating nothing. */
  checkInProcess(spec: string, game: AnyGame, config: unknown): void {
    if (isPolicySpec(spec)) this.policies(spec).resolve(spec, game, config);
    else createStrategy(game.id, spec);
  }

  /** The policy versions of participants no longer playing, given back. */
  private letGo(participants: readonly (Participant | undefined)[]): void {
    for (const p of participants) if (p?.policy) this.options.policies?.release(p.policy.id);
  }

  private open(
    game: AnyGame,
    variant: string,
    config: unknown,
    seed: string,
    participants: readonly (Participant | undefined)[],
    { group, rated }: Pick<NewMatch, "group" | "rated">,
  ): Match {
    return new Match({
      id: randomId(9),
      game,
      variant,
      config,
      seed,
      participants,
      clocks: this.options.clocks,
      conduct: this.options.conduct,
      journal: this.options.store?.writer,
      invite: randomId(12),
      waitingTtlMs: this.options.waitingTtlMs ?? DEFAULT_WAITING_TTL_MS,
      group,
      rated,
    });
  }

  /**
   * Throws StoreUnavailableError while the server stops or the replay store's write buffer is full; for a match whose
   * seats are all in-process (`inProcess`), also while the store fails or does not answer: such matches pause then
   * (see GroupCommit.behind), and more of them would only wait.
   */
  checkAccepting(inProcess = false): void {
    if (this.stopping) {
      throw new StoreUnavailableError(
        "server_stopping",
        "the server is shutting down and starts no new matches; reconnect and try again shortly",
      );
    }
    const writer = this.options.store?.writer;
    if (inProcess && writer?.failure !== undefined && !writer.full) {
      throw new StoreUnavailableError(
        "store_unavailable",
        `new matches between in-process seats are refused: the replay store is unavailable (${writer.failure}) and ` +
          `${writer.buffered} records wait to be written; those playing wait for it too; try again shortly`,
      );
    }
    if (!writer?.full) return;
    throw new StoreUnavailableError(
      "store_unavailable",
      `new matches are refused: the replay store is unavailable (${
        writer.failure ?? "writes are backed up"
      }) and ${writer.buffered} records wait to be written; try again shortly`,
    );
  }

  /**
   * Brings back unfinished matches from their logs: those of `ids` (what this process claimed, see
   * db/nodes.ts), or every one. A match whose log no longer replays (its game changed) is closed in the store
   * with reason `error`; a store that fails meanwhile throws, leaving the rest for a later try.
   */
  async restore(ids?: readonly string[]): Promise<{ restored: Match[]; failed: { id: string; error: string }[] }> {
    const store = this.options.store;
    const restored: Match[] = [];
    const failed: { id: string; error: string }[] = [];
    // Those already here were restored by an earlier try (this one goes on where a failing store cut it short).
    const wanted = ids?.filter((id) => !this.byId.has(id));
    if (!store || wanted?.length === 0) return { restored, failed };
    for (const record of await store.unfinished(wanted)) {
      // The store failing here is not the match's fault: it throws, and the match is restored at the next try.
      const steps = await store.steps(record.id);
      let match: Match | undefined;
      try {
        match = this.rebuild(record);
        match.restore(record, steps);
        this.track(match);
        restored.push(match);
      } catch (error) {
        if (match) this.letGo(participantsOf(match));
        const message = (error as Error).message;
        failed.push({ id: record.id, error: message });
        await store.closeUnplayed(record, "error", message);
      }
    }
    return { restored, failed };
  }

  private rebuild(record: MatchRecord): Match {
    let game: AnyGame;
    try {
      game = getGame(record.game, record.gameVersion); // an earlier version that is kept plays on as it began
    } catch (error) {
      if (error instanceof UnknownVersionError) throw new RestoreError(record.id, error.message);
      throw error;
    }
    return new Match({
      id: record.id,
      game,
      variant: record.variant,
      config: record.config,
      seed: record.seed,
      participants: record.seats.map((seat, i): Participant | undefined => {
        if (!seat) return undefined;
        const learner = seat.learner ? { learner: true } : {};
        if (seat.kind === "builtin" || seat.kind === "policy") {
          try {
            // A policy seat's name is the exact version that played, which the store keeps while the match lives.
            return { ...this.inProcess(seat.strategy ?? seat.name, game, record.config, record.seed, i), ...learner };
          } catch (error) {
            if (error instanceof StrategyError) throw new RestoreError(record.id, error.message);
            throw error;
          }
        }
        // The agent the seat was recorded with (model, endpoint, sampling) stays with it across the restart.
        const { model, endpoint, sampling } = seat;
        const agent = model ?? endpoint ?? sampling
          ? { agent: { ...(model && { model }), ...(endpoint && { endpoint }), ...(sampling && { sampling }) } }
          : {};
        return {
          kind: seat.kind,
          name: seat.name,
          ...(seat.tokenId ? { tokenId: seat.tokenId } : {}),
          ...agent,
          ...learner,
        };
      }),
      clocks: this.options.clocks,
      conduct: record.conduct as ConductPolicy,
      journal: this.options.store?.writer,
      createdAt: record.createdAt,
      invite: record.invite ?? randomId(12),
      waitingTtlMs: this.options.waitingTtlMs ?? DEFAULT_WAITING_TTL_MS,
      group: record.group ?? undefined,
      rated: record.rated,
    });
  }

  /**
   * Opens a private match: the creator's seat (default 0) goes to `creator`, or stays open for them to claim
   * on joining; each named opponent is `"open"` (for the invite), `"strategy:<name[:arg]>"`, or `"self"`
   * (the creator plays that seat too); `agents` gives the creator's seats their own agents. Every seat number is
   * checked against the game's seats first.
   * Returns the creator's seats: its own first, then its `"self"` seats.
   */
  createPrivate(request: PrivateMatchRequest, creator?: Participant): { match: Match; seats: number[] } {
    const game = getGame(request.game);
    const { config } = configure(game, request.config ?? {}, request.variant);
    const count = game.seatCount(config);
    const seatNumber = (value: unknown, what: string): number => {
      const n = typeof value === "string" && /^\d{1,9}$/.test(value) ? Number(value) : value;
      if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n >= count) {
        throw new MatchRequestError(
          "bad_config",
          `${what} ${JSON.stringify(value)} is not a seat of this ${game.id} match: seats are 0 to ${count - 1}`,
        );
      }
      return n;
    };
    // `seat: null`: the creator takes no seat (a match between built-ins, say, that it only watches).
    const mine = request.seat === null ? null : seatNumber(request.seat ?? 0, "seat");
    const seats: (Participant | { strategy: string } | undefined)[] = new Array(count).fill(undefined);
    const own = mine === null ? [] : [mine];
    for (const [key, spec] of Object.entries(request.opponents ?? {})) {
      const seat = seatNumber(key, "opponent seat");
      if (seat === mine) {
        throw new MatchRequestError("bad_config", `seat ${seat} is yours; name opponents for the other seats`);
      }
      if (spec === "open") continue;
      if (spec === "self") {
        if (!creator) {
          throw new MatchRequestError("bad_config", '`"self"` seats are for bots (self-play over one connection)');
        }
        seats[seat] = creator;
        own.push(seat);
      } else if (typeof spec === "string" && spec.startsWith("strategy:")) {
        seats[seat] = { strategy: spec.slice("strategy:".length) };
      } else if (typeof spec === "string" && isPolicySpec(spec)) {
        seats[seat] = { strategy: spec };
      } else {
        throw new MatchRequestError(
          "bad_config",
          `an opponent is "open", "self", "strategy:<name>" or "policy:<name>[@<version>]", got ${
            JSON.stringify(spec)
          }`,
        );
      }
    }
    if (mine !== null) seats[mine] = creator;
    // Several models over one connection: a seat's own agent is recorded in place of the creator's.
    for (const [key, agent] of Object.entries(request.agents ?? {})) {
      const seat = seatNumber(key, "`agents` seat");
      if (!creator || !own.includes(seat)) {
        const held = seats[seat];
        throw new MatchRequestError(
          "bad_config",
          `\`agents\` names seat ${seat}, which ${
            held && "strategy" in held
              ? `the server plays (${JSON.stringify(held.strategy)})`
              : "is open for the invite"
          }: agents are for the seats this connection plays here (${
            own.length ? `seat${own.length > 1 ? "s" : ""} ${own.join(", ")}` : "none"
          }: \`seat\` and the "self" opponents)`,
        );
      }
      seats[seat] = { ...creator, agent };
    }
    const { variant, seed, group } = request;
    return {
      match: this.create({ game: game.id, variant, config: request.config, seed, group, seats, announced: true }),
      seats: own,
    };
  }

  private track(match: Match): void {
    this.byId.set(match.id, match);
    this.byInvite.set(match.invite, match);
    this.holdSlots(match);
    this.options.ratings?.watch(match);
    match.subscribe((event) => {
      if (event.kind === "seat") this.holdSlots(match);
      if (event.kind === "handed_over") return this.untrack(match);
      if (event.kind !== "end") return;
      this.letGo(participantsOf(match));
      this.byInvite.delete(match.invite);
      this.releaseSlots(match);
      const participants = participantsOf(match);
      // Nobody resumes a match the server played alone: it need not linger (self-play ends thousands a minute).
      if (participants.every(playsInProcess)) return void this.byId.delete(match.id);
      const forget = () => {
        if (this.byId.get(match.id) === match) this.byId.delete(match.id);
      };
      // A bot's late resume gets its `match_end` from the store, so a match without a person in it is let go
      // once its end is durable (bots through the queue end thousands a minute, and each lingering one held
      // ~6 KB of heap). A person's lingers, so that a page reloaded just after the end still shows how it ended.
      if (this.options.store && !participants.some((p) => p?.kind === "human")) {
        return match.deliver(() => {
          forget();
          this.forgetLetGo();
          this.letGoAt.set(match.id, performance.now());
        });
      }
      setTimeout(forget, this.options.lingerMs ?? 60_000).unref?.();
    });
  }

  /**
   * Lets go of a match another process plays now: it is not this process's to find any more (its tokens' slots
   * stay held: the match lives on there).
   */
  private untrack(match: Match): void {
    this.letGo(participantsOf(match));
    if (this.byId.get(match.id) === match) this.byId.delete(match.id);
    if (this.byInvite.get(match.invite) === match) this.byInvite.delete(match.invite);
    this.slotsHeld.delete(match.id);
  }

  /** Hands every live match over (this process lost its lease): they are its peers' to restore now. */
  handOverAll(): void {
    for (const match of [...this.byId.values()]) match.handOver();
  }

  /** Holds a slot for the match for each token newly seated in it. */
  private holdSlots(match: Match): void {
    const state = this.options.state;
    if (!state || match.ended) return;
    let held = this.slotsHeld.get(match.id);
    for (const token of match.tokens()) {
      if (held?.has(token)) continue;
      if (!held) this.slotsHeld.set(match.id, held = new Set());
      held.add(token);
      state.hold(token, matchSlot(match.id)).catch(
        quietWhileAway(`match ${match.id}: a token's slot could not be held`),
      );
    }
  }

  private releaseSlots(match: Match): void {
    for (const token of this.slotsHeld.get(match.id) ?? []) {
      this.options.state!.releaseSlot(token, matchSlot(match.id)).catch(
        quietWhileAway(`match ${match.id}: a token's slot could not be let go`),
      );
    }
    this.slotsHeld.delete(match.id);
  }

  get(id: string): Match | undefined {
    return this.byId.get(id);
  }

  /** The ids of the live matches of this process a token sits in (a scan: for when the cluster's state is away). */
  heldBy(tokenId: string): string[] {
    return this.all().filter((m) => !m.ended && !m.suspended && m.seatsOf(tokenId).length > 0).map((m) => m.id);
  }

  /**
   * Whether the match has ended, for a frame about a match the connection holds no seat of: one still in memory,
   * or let go at its end within the linger time. Throws `unknown_match` for any other id.
   */
  isOver(id: string): boolean {
    const live = this.byId.get(id);
    if (live) return live.ended;
    this.forgetLetGo();
    if (this.letGoAt.has(id)) return true;
    throw new MatchRequestError("unknown_match", `no live match or invite \`${id}\``);
  }

  /** Drops the let-go matches older than the linger time (the oldest come first). */
  private forgetLetGo(): void {
    const horizon = performance.now() - (this.options.lingerMs ?? 60_000);
    for (const [id, at] of this.letGoAt) {
      if (at >= horizon) return;
      this.letGoAt.delete(id);
    }
  }

  /** A match by id (to resume or spectate) or by invite (to take an open seat). */
  find(idOrInvite: string): { match: Match; invited: boolean } {
    const invited = this.byInvite.get(idOrInvite);
    if (invited) return { match: invited, invited: true };
    const match = this.byId.get(idOrInvite);
    if (match) return { match, invited: false };
    throw new MatchRequestError("unknown_match", `no live match or invite \`${idOrInvite}\``);
  }

  /** Takes the first open seat of the match an invite names (for a bot, one whose token sits there yet). */
  joinByInvite(invite: string, participant: Participant): { match: Match; seat: number } {
    const { match, invited } = this.find(invite);
    if (!invited) {
      throw new MatchRequestError(
        "unknown_match",
        `\`${invite}\` is a match id; an open seat is taken with its invite`,
      );
    }
    const mine = participant.tokenId === undefined ? [] : match.seatsOf(participant.tokenId);
    if (mine.length > 0) {
      throw new MatchRequestError(
        "already_seated",
        `this token already sits in seat ${mine.join(" and ")} of match ${match.id}; an invite is for another ` +
          'player (for self-play, create the match with `"self"` opponents or queue with `selfPlay`)',
      );
    }
    const seat = match.openSeats()[0];
    if (seat === undefined) throw new MatchRequestError("match_full", `match ${match.id} has no open seat`);
    match.claim(seat, participant);
    return { match, seat };
  }

  all(): Match[] {
    return [...this.byId.values()];
  }

  /**
   * Stops starting matches and puts every live match to rest (timers off, seats let go) without ending it:
   * its log is in the store, and the next start restores it.
   */
  suspendAll(): void {
    this.stopping = true;
    for (const match of this.byId.values()) match.suspend();
  }

  /** Refuses new matches from now on (a draining shutdown); live ones play on. */
  stopAccepting(): void {
    this.stopping = true;
  }
}
