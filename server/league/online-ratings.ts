import type { RatedMatch, SkillRating } from "../../db/league.ts";
import { playerId } from "../../protocol/players.ts";
import type { ReplayStore } from "../../db/store.ts";
import type { Match } from "../match/match.ts";
import { newRating, rateMatch } from "./ratings/online.ts";

/** How long after a failed batch the ratings try again (from the store: what failed is still unrated there). */
const RETRY_MS = 5_000;

/** How long ended matches gather before their ratings are written in one batch. */
const GATHER_MS = 100;

/**
 * Keeps the online ratings (OpenSkill, per game and variant) up to date as rated matches end: a match is rated once
 * its end is durable, in batches as group commit writes (one transaction for every match that ended while the
 * previous batch was written), each at most once (the store marks it in the same transaction). A server that
 * stopped between a match's end and its rating catches up at its next start (`catchUp`), in the order they ended.
 */
export class OnlineRatings {
  private readonly pending = new Map<string, { match: RatedMatch; done: () => void; fail: (e: Error) => void }[]>();
  private writing?: Promise<void>;
  /** Set while matches gather for the next batch. */
  private gathering?: ReturnType<typeof setTimeout>;
  private retry?: ReturnType<typeof setTimeout>;
  /** Ratings as last written, per game and variant (loaded at the first look): what pairing reads, never waiting. */
  private readonly known = new Map<string, Map<string, SkillRating>>();

  constructor(private readonly store: ReplayStore) {}

  /** Rates `match` once it has ended completed and its end is durable (nothing for an unrated one). */
  watch(match: Match): void {
    if (!match.rated) return;
    const off = match.subscribe((event) => {
      if (event.kind !== "end") return;
      off();
      if (event.end.reason !== "completed") return;
      const players = Array.from({ length: match.seatCount }, (_, s) => match.participant(s)!);
      const rated = { matchId: match.id, players: players.map(playerId), returns: event.end.returns };
      // A batch that fails stays unrated in the store, where `retryLater` (or the next start) finds it.
      match.deliver(() => this.add(match.game.id, match.variant, rated).catch(() => {}));
    });
  }

  /**
   * A player's rating as last written, or undefined (also while the game's ratings are first being loaded: the
   * queue pairs such a player as a new one until they are).
   */
  skill(game: string, variant: string, player: string): SkillRating | undefined {
    const key = JSON.stringify([game, variant]);
    const table = this.known.get(key);
    if (table) return table.get(player);
    const loading = new Map<string, SkillRating>();
    this.known.set(key, loading);
    this.store.league.ratings(game, variant).then(
      (rows) => {
        for (const r of rows) if (!loading.has(r.player)) loading.set(r.player, { mu: r.mu, sigma: r.sigma });
      },
      () => this.known.delete(key), // looked up again next time
    );
    return undefined;
  }

  /** Rates what an earlier process left unrated; returns how many matches it rated. */
  async catchUp(): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await this.store.league.unrated(5_000);
      if (batch.length === 0) return total;
      await Promise.all(batch.map((m) => this.add(m.game, m.variant, m)));
      total += batch.length;
    }
  }

  /** Resolves once every match handed over so far is rated. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.gathering) {
        clearTimeout(this.gathering);
        this.gathering = undefined;
        this.startWriting();
      }
      if (!this.writing) return;
      await this.writing;
    }
  }

  /** Stops retrying; what is left unrated is rated at the next start. */
  close(): void {
    clearTimeout(this.retry);
  }

  /** After a failed batch (the store away), catches up once it answers again. */
  private retryLater(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.catchUp().catch(() => this.retryLater());
    }, RETRY_MS);
    Deno.unrefTimer(this.retry);
  }

  private add(game: string, variant: string, match: RatedMatch): Promise<void> {
    const key = JSON.stringify([game, variant]);
    return new Promise((done, fail) => {
      const queue = this.pending.get(key) ?? [];
      queue.push({ match, done, fail });
      this.pending.set(key, queue);
      this.gather();
    });
  }

  /**
   * Lets matches gather for GATHER_MS before a batch is written. A batch's transaction costs ~1.4 ms on the embedded
   * store whatever its size, and each match ~40 µs more: rated one at a time, a queue's thousand matches a second took
   * most of the server's thread. A rating is not waited for by anyone playing.
   */
  private gather(): void {
    if (this.writing || this.gathering) return;
    this.gathering = setTimeout(() => {
      this.gathering = undefined;
      this.startWriting();
    }, GATHER_MS);
  }

  private startWriting(): void {
    this.writing ??= this.write().finally(() => {
      this.writing = undefined;
      if (this.pending.size > 0) this.gather();
    });
  }

  /** Writes what has gathered, a batch per game and variant; what ends meanwhile gathers for the next. */
  private async write(): Promise<void> {
    const gathered = [...this.pending];
    this.pending.clear();
    for (const [key, batch] of gathered) {
      const [game, variant] = JSON.parse(key) as [string, string];
      try {
        const written = new Map<string, SkillRating>();
        await this.store.league.rate(game, variant, batch.map((b) => b.match), (before, returns, players) => {
          const after = rateMatch(before.map((r) => r ?? newRating()), returns);
          players.forEach((p, i) => written.set(p, after[i]));
          return after;
        });
        const table = this.known.get(key);
        for (const [player, rating] of written) table?.set(player, rating);
        for (const b of batch) b.done();
      } catch (error) {
        for (const b of batch) b.fail(error as Error);
        this.retryLater();
      }
    }
  }
}
