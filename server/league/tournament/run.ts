import { configure } from "../../../games/core/config.ts";
import { getGame } from "../../../games/registry.ts";
import type { NewTournament, SlotRecord, TournamentFormat, TournamentRecord } from "../../../db/league.ts";
import { playerId } from "../../../protocol/players.ts";
import type { ReplayStore } from "../../../db/store.ts";
import { yieldToEventLoop } from "../../../db/sql.ts";
import type { LiveMatches } from "../../match/live-matches.ts";
import type { Participant } from "../../match/match.ts";
import { defaultSwissRounds, fixedPairings, FORMATS, type PlannedSlot, slotsOf, swissPairings } from "./schedule.ts";
import { type Standings, standings, swissTable } from "./standings.ts";
import { closeCutOff } from "../cut-off.ts";
import { eachInParallel } from "../in-parallel.ts";
import type { LoopShare } from "../loop-share.ts";

/**
 * Runs a tournament on this process's live matches: its slots are played with a bounded number at once, each
 * counted once its end is durable, rated online as it ends, and the table computed from the store. Interrupted
 * (a crash, SIGKILL), it resumes from its row: ended slots stay, a slot whose match was cut off is played again
 * on its seed, and its cut-off match is closed as aborted.
 */

/** A tournament that cannot be run as asked: what was wrong and what is allowed. */
export class TournamentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TournamentError";
  }
}

export interface TournamentRequest {
  readonly game: string;
  readonly variant?: string;
  readonly config?: unknown;
  readonly format: TournamentFormat;
  /** Each deal twice with the seats swapped; implied by the duplicate format. */
  readonly duplicate?: boolean;
  readonly players: readonly string[];
  readonly matches: number;
  /** Swiss only (default ⌈log₂ players⌉). */
  readonly rounds?: number;
  readonly seed: string;
}

/** A player that a language model plays through the gateway: `llm:<name>`, its model named by the run. */
export const isLlmPlayer = (spec: string): boolean => spec.startsWith("llm:");
/** A program connected to the server with a token of that name plays it: `bot:<name>`. */
export const isBotPlayer = (spec: string): boolean => spec.startsWith("bot:");
/** Players seated through the gateway rather than played in-process. */
export const isRemotePlayer = (spec: string): boolean => isLlmPlayer(spec) || isBotPlayer(spec);

/** How a run seats its remote players (`llm:` and `bot:`). */
export interface RemotePlayers {
  /** Who sits for `player`: a seat held for its token, which the match waits for. */
  participant(player: string): Participant;
  /** Gives the player's connection its seats of a match just made. */
  seat(player: string, match: string): void;
}

/** The largest tournament one run schedules: beyond it, split it or use the league scheduler. */
export const MAX_SLOTS = 10_000_000;

/** Checks a request (game, config, players, format) and returns the tournament to store, or a TournamentError. */
export function checkTournament(request: TournamentRequest, matches: LiveMatches): NewTournament {
  const game = getGame(request.game);
  const { variant, config } = configure(game, request.config ?? {}, request.variant);
  const seats = game.seatCount(config);
  if (seats !== 2) {
    throw new TournamentError(
      `tournaments pair two players a match; ${game.id} (${variant}) has ${seats} seats. ` +
        "Games of more seats are rated by the league scheduler and scenarios, not by pairings",
    );
  }
  if (!FORMATS.includes(request.format)) {
    throw new TournamentError(`unknown format ${JSON.stringify(request.format)}: choose one of ${FORMATS.join(", ")}`);
  }
  const players = request.players;
  if (players.length < 2) {
    throw new TournamentError(`a ${request.format} tournament needs at least 2 players, got ${players.length}`);
  }
  const twice = players.find((p, i) => players.indexOf(p) !== i);
  if (twice !== undefined) {
    throw new TournamentError(`player ${twice} is named twice: each player enters once`);
  }
  for (const player of players) if (!isRemotePlayer(player)) matches.checkInProcess(player, game, config);
  const duplicate = request.format === "duplicate" || request.duplicate === true;
  if (duplicate) {
    if (game.chance(game.start(config)).length === 0) {
      throw new TournamentError(
        `duplicate matches replay each deal with the seats swapped, and ${game.id} (${variant}) deals nothing at ` +
          "its start (no chance event): both matches of a deal would differ only by the seats. Use round-robin",
      );
    }
    if (request.matches % 2 !== 0) {
      throw new TournamentError(
        `duplicate matches come in pairs (each deal in both seatings): --matches must be even, got ${request.matches}`,
      );
    }
  }
  if (request.rounds !== undefined && request.format !== "swiss") {
    throw new TournamentError(`rounds are for the swiss format; a ${request.format} plays every pairing once`);
  }
  const rounds = request.format === "swiss" ? request.rounds ?? defaultSwissRounds(players.length) : null;
  const tournament = {
    game: game.id,
    variant,
    config,
    format: request.format,
    duplicate,
    players,
    matches: request.matches,
    rounds,
    seed: request.seed,
  };
  const total = plannedSlots(tournament);
  if (total > MAX_SLOTS) {
    throw new TournamentError(`this tournament would play ${total} matches; one run plays at most ${MAX_SLOTS}`);
  }
  return tournament;
}

/** How many matches a tournament plays in all. */
export function plannedSlots(t: Pick<TournamentRecord, "format" | "players" | "matches" | "rounds">): number {
  const n = t.players.length;
  if (t.format === "swiss") return (t.rounds ?? 1) * Math.floor(n / 2) * t.matches;
  return fixedPairings(t.format, n).length * t.matches;
}

export interface RunOptions {
  /** Matches played at once (default 64). */
  readonly concurrency?: number;
  /** After each match counted: how many are done of how many. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Seats the `llm:` and `bot:` players; required when there are some. */
  readonly remote?: RemotePlayers;
  /** The event loop's share this run takes turns in, on a server that also serves others. */
  readonly share?: LoopShare;
}

const ended = (s: SlotRecord | undefined) => s !== undefined && s.endReason !== null;

export async function runTournament(
  store: ReplayStore,
  live: LiveMatches,
  t: TournamentRecord,
  options: RunOptions = {},
): Promise<Standings> {
  const league = store.league;
  const total = plannedSlots(t);
  const models = t.players.filter(isLlmPlayer);
  if (models.length > 0 && !options.remote) {
    throw new TournamentError(
      `${models.join(", ")} ${models.length > 1 ? "are" : "is"} played by a model: give --models`,
    );
  }
  const bots = t.players.filter(isBotPlayer);
  if (bots.length > 0 && !options.remote) {
    throw new TournamentError(
      `${bots.join(", ")}: connected bots play in tournaments a server runs (POST /tournaments on it)`,
    );
  }
  let slots = await league.slots(t.id);
  const ratings = live.ratings;
  if (!ratings) throw new Error("a tournament needs live matches that rate (LiveMatches with `ratings`)");
  // Matches that ended before an interruption but were not yet rated (rating is once per match, whoever asks).
  await ratings.catchUp();
  let done = slots.filter(ended).length;
  options.onProgress?.(done, total);
  const rounds = t.format === "swiss" ? t.rounds ?? 1 : 1;
  let firstSlot = 0;
  for (let round = 0; round < rounds; round++) {
    const pairings = roundPairings(t, slots, round);
    const planned = slotsOf(pairings, { matches: t.matches, duplicate: t.duplicate, round, firstSlot, seed: t.seed });
    firstSlot += pairings.length * t.matches;
    const bySlot = new Map(slots.map((s) => [s.slot, s]));
    const todo = (function* () {
      for (const p of planned) if (!ended(bySlot.get(p.slot))) yield p;
    })();
    await eachInParallel(todo, options.concurrency ?? 64, async (slot) => {
      // A slot's store work can resolve through microtasks alone (PGlite's do): without a turn of the event loop
      // between slots, a long tournament would keep every socket and timer of the process waiting.
      await (options.share ? options.share.turn() : yieldToEventLoop());
      await playSlot(store, live, t, slot, bySlot.get(slot.slot), options.remote);
      options.onProgress?.(++done, total);
    });
    slots = await league.slots(t.id);
  }
  await ratings.flush();
  await league.endTournament(t.id);
  return await tournamentStandings(store, (await league.tournament(t.id)) ?? t, slots);
}

/** A round's pairings: fixed for every format but Swiss, whose rounds pair by the points of the rounds before. */
function roundPairings(t: TournamentRecord, slots: readonly SlotRecord[], round: number): [number, number][] {
  if (t.format !== "swiss") return fixedPairings(t.format, t.players.length);
  const table = swissTable(t.players.length, slots, round);
  return swissPairings(table.points, table.met, table.byes).pairings;
}

/** The table of a stored tournament, finished or not. */
export async function tournamentStandings(
  store: ReplayStore,
  t: TournamentRecord,
  slots?: readonly SlotRecord[],
): Promise<Standings> {
  const all = slots ?? await store.league.slots(t.id);
  const ids = [
    ...new Set(all.flatMap((s) => (s.seatRecords ?? []).flatMap((seat) => (seat ? [playerId(seat)] : [])))),
  ];
  const online = ids.length ? await store.league.ratings(t.game, t.variant, ids) : [];
  return standings(t, all, plannedSlots(t), online);
}

async function playSlot(
  store: ReplayStore,
  live: LiveMatches,
  t: TournamentRecord,
  slot: PlannedSlot,
  earlier: SlotRecord | undefined,
  remote: RemotePlayers | undefined,
): Promise<void> {
  if (earlier) {
    await closeCutOff(
      store,
      earlier.matchId,
      "its tournament was interrupted; the resumed tournament played the slot again on the same seed",
    );
  }
  const match = await live.createWhenWritable({
    game: t.game,
    variant: t.variant,
    config: t.config,
    seed: slot.seed,
    seats: slot.seats.map((p) =>
      isRemotePlayer(t.players[p]) ? remote!.participant(t.players[p]) : { strategy: t.players[p] }
    ),
    rated: true,
  });
  for (const player of new Set(slot.seats.map((p) => t.players[p]).filter(isRemotePlayer))) {
    remote!.seat(player, match.id);
  }
  await store.league.putSlot(t.id, { ...slot, matchId: match.id });
  await match.durableEnd();
}
