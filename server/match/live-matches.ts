import { randomBytes } from "node:crypto";
import { configure } from "../../games/core/config.ts";
import { getGame } from "../../games/registry.ts";
import { createStrategy } from "../../policies/baselines/index.ts";
import type { ConductPolicy, CreateFrame, SeatKind } from "../../protocol/frames.ts";
import type { ClockSpec } from "./clock.ts";
import type { MatchRecord } from "../../db/records.ts";
import type { ReplayStore } from "../../db/store.ts";
import { Match, type Participant, RestoreError } from "./match.ts";

/** An unknown match id or invite, or a seat that cannot be taken: said to the client as is. */
export class MatchLookupError extends Error {
  constructor(readonly code: "unknown_match" | "match_full", message: string) {
    super(message);
    this.name = "MatchLookupError";
  }
}

export interface NewMatch {
  readonly game: string;
  readonly variant?: string;
  readonly config?: unknown;
  readonly seed?: string;
  /** One per seat: a participant, `{ strategy: "name[:arg]" }` for a built-in, or undefined for an open seat. */
  readonly seats: readonly (Participant | { readonly strategy: string } | undefined)[];
}

/** New matches are refused while the replay store cannot take their records. */
export class StoreUnavailableError extends Error {
  readonly code = "store_unavailable";
  constructor(message: string) {
    super(message);
    this.name = "StoreUnavailableError";
  }
}

/** A private match as a `create` frame (or a browser's room options) asks for it. */
export type PrivateMatchRequest = Omit<CreateFrame, "type">;

export interface LiveMatchesOptions {
  readonly clocks?: Partial<Record<SeatKind, ClockSpec>>;
  readonly conduct?: Partial<ConductPolicy>;
  /** How long an ended match stays reachable, so a late resume still gets its `match_end`. */
  readonly lingerMs?: number;
  /** The replay store: every match is recorded there. */
  readonly store?: ReplayStore;
}

/** An id that is hard to guess: invites are capabilities, match ids are public. */
function randomId(bytes: number): string {
  return randomBytes(bytes).toString("base64url");
}

/** Every live match of this server process, by id and by invite. */
export class LiveMatches {
  private readonly byId = new Map<string, Match>();
  private readonly byInvite = new Map<string, Match>();
  private readonly invites = new Map<string, string>();

  constructor(private readonly options: LiveMatchesOptions = {}) {}

  /** Validates the game, variant, config and strategies (throwing their own clear errors), then opens the match. */
  create(spec: NewMatch): Match {
    this.checkAccepting();
    const game = getGame(spec.game);
    const { variant, config } = configure(game, spec.config ?? {}, spec.variant);
    const count = game.seatCount(config);
    if (spec.seats.length > count) {
      throw new RangeError(`${game.id} (${variant}) has ${count} seats, not ${spec.seats.length}`);
    }
    const participants = Array.from({ length: count }, (_, seat): Participant | undefined => {
      const s = spec.seats[seat];
      if (s === undefined || "kind" in s) return s;
      return { kind: "builtin", name: s.strategy, strategy: createStrategy(game.id, s.strategy) };
    });
    const match = new Match({
      id: randomId(9),
      game,
      variant,
      config,
      seed: spec.seed ?? BigInt(`0x${randomBytes(8).toString("hex")}`).toString(),
      participants,
      clocks: this.options.clocks,
      conduct: this.options.conduct,
      journal: this.options.store?.writer,
    });
    this.track(match);
    match.open();
    return match;
  }

  /** Throws StoreUnavailableError while the replay store's write buffer is full. */
  checkAccepting(): void {
    const writer = this.options.store?.writer;
    if (!writer?.full) return;
    throw new StoreUnavailableError(
      `new matches are refused: the replay store is unavailable (${
        writer.failure ?? "writes are backed up"
      }) and ${writer.buffered} records wait to be written; try again shortly`,
    );
  }

  /**
   * Brings back the matches a stopped server left unfinished, from their logs. A match whose log no
   * longer replays (its game changed) is closed in the store with reason `error`.
   */
  async restore(): Promise<{ restored: Match[]; failed: { id: string; error: string }[] }> {
    const store = this.options.store;
    const restored: Match[] = [];
    const failed: { id: string; error: string }[] = [];
    if (!store) return { restored, failed };
    for (const record of await store.unfinished()) {
      try {
        const match = this.rebuild(record);
        match.restore(record, await store.steps(record.id));
        this.track(match);
        restored.push(match);
      } catch (error) {
        const message = (error as Error).message;
        failed.push({ id: record.id, error: message });
        await store.writer.writeMatch({
          ...record,
          statuses: record.statuses.map(() => "ERROR"),
          endReason: "error",
          endedAt: new Date(),
        });
      }
    }
    return { restored, failed };
  }

  private rebuild(record: MatchRecord): Match {
    const game = getGame(record.game);
    if (game.version !== record.gameVersion) {
      throw new RestoreError(
        record.id,
        `it was played under ${game.id} version ${record.gameVersion}, this server has ${game.version}`,
      );
    }
    return new Match({
      id: record.id,
      game,
      variant: record.variant,
      config: record.config,
      seed: record.seed,
      participants: record.seats.map((seat): Participant | undefined => {
        if (!seat) return undefined;
        if (seat.kind === "builtin") {
          const name = seat.strategy ?? seat.name;
          return { kind: "builtin", name, strategy: createStrategy(game.id, name) };
        }
        if (seat.kind === "policy") throw new RestoreError(record.id, "policy seats cannot be restored yet");
        return { kind: seat.kind, name: seat.name, ...(seat.tokenId ? { tokenId: seat.tokenId } : {}) };
      }),
      clocks: this.options.clocks,
      conduct: record.conduct as ConductPolicy,
      journal: this.options.store?.writer,
      createdAt: record.createdAt,
    });
  }

  /**
   * Opens a private match: the creator's seat (default 0) goes to `creator`, or stays open for them to
   * claim on joining; each named opponent is `"open"` (for the invite) or `"strategy:<name[:arg]>"`.
   */
  createPrivate(request: PrivateMatchRequest, creator?: Participant): { match: Match; seat: number } {
    const mine = request.seat ?? 0;
    const seats: (Participant | { strategy: string } | undefined)[] = [];
    for (const [key, spec] of Object.entries(request.opponents ?? {})) {
      const seat = Number(key);
      if (seat === mine) throw new RangeError(`seat ${seat} is yours; name opponents for the other seats`);
      if (spec === "open") continue;
      if (!spec.startsWith("strategy:")) {
        throw new RangeError(`an opponent is "open" or "strategy:<name>", got ${JSON.stringify(spec)}`);
      }
      seats[seat] = { strategy: spec.slice("strategy:".length) };
    }
    seats[mine] = creator;
    const { game, variant, config, seed } = request;
    return { match: this.create({ game, variant, config, seed, seats }), seat: mine };
  }

  private track(match: Match): void {
    this.byId.set(match.id, match);
    const invite = randomId(12);
    this.byInvite.set(invite, match);
    this.invites.set(match.id, invite);
    match.subscribe((event) => {
      if (event.kind !== "end") return;
      setTimeout(() => {
        this.byId.delete(match.id);
        this.byInvite.delete(invite);
        this.invites.delete(match.id);
      }, this.options.lingerMs ?? 60_000).unref?.();
    });
  }

  get(id: string): Match | undefined {
    return this.byId.get(id);
  }

  inviteOf(match: Match): string {
    return this.invites.get(match.id)!;
  }

  /** A match by id (to resume or spectate) or by invite (to take an open seat). */
  find(idOrInvite: string): { match: Match; invited: boolean } {
    const invited = this.byInvite.get(idOrInvite);
    if (invited) return { match: invited, invited: true };
    const match = this.byId.get(idOrInvite);
    if (match) return { match, invited: false };
    throw new MatchLookupError("unknown_match", `no live match or invite \`${idOrInvite}\``);
  }

  /** Takes the first open seat of the match an invite names. */
  joinByInvite(invite: string, participant: Participant): { match: Match; seat: number } {
    const { match, invited } = this.find(invite);
    if (!invited) {
      throw new MatchLookupError("unknown_match", `\`${invite}\` is a match id; an open seat is taken with its invite`);
    }
    const seat = match.openSeats()[0];
    if (seat === undefined) throw new MatchLookupError("match_full", `match ${match.id} has no open seat`);
    match.claim(seat, participant);
    return { match, seat };
  }

  all(): Match[] {
    return [...this.byId.values()];
  }

  /** Ends every match (server shutdown). */
  abortAll(): void {
    for (const match of this.byId.values()) match.abort();
  }
}
