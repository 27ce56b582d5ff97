import type { TournamentRecord } from "../../../db/league.ts";
import type { ReplayStore } from "../../../db/store.ts";
import type { TokenStore } from "../../../db/tokens.ts";
import type { Gateway } from "../../gateway/gateway.ts";
import type { LiveMatches } from "../../match/live-matches.ts";
import type { Participant } from "../../match/match.ts";
import {
  checkTournament,
  isBotPlayer,
  isLlmPlayer,
  type RemotePlayers,
  runTournament,
  TournamentError,
  type TournamentRequest,
} from "./run.ts";
import { LoopShare } from "../loop-share.ts";

/** Tournaments a server plays at once: each takes matches in turns of the event loop's share for background play. */
export const MAX_HOSTED_TOURNAMENTS = 4;

/** A tournament refused because the server already plays as many as it takes at once. */
export class TournamentsBusyError extends TournamentError {
  constructor(running: number) {
    super(
      `this server is playing ${running} tournaments, the most it plays at once (${MAX_HOSTED_TOURNAMENTS}); ` +
        "start this one once one of them has ended (GET /tournaments lists them)",
    );
    this.name = "TournamentsBusyError";
  }
}

/**
 * Tournaments a server runs on its own live matches (`POST /tournaments`), so that programs connected to it play:
 * a `bot:<name>` player is whoever holds the live token of that name. Each slot's match is made with that player's
 * seat held for the token, and the token's oldest connection is given it (`match_start`, unasked); a program that is
 * not connected yet finds the match in `welcome.matches` and resumes it. Built-ins and policies play as in
 * `ludus tournament`; models (`llm:`) are the CLI's, which knows their endpoints.
 */
export class HostedTournaments {
  private readonly running = new Map<string, Promise<void>>();
  /** Their matches start only while the server's own work is served on time. */
  private readonly share = new LoopShare();

  constructor(
    private readonly store: ReplayStore,
    private readonly live: LiveMatches,
    private readonly gateway: Pick<Gateway, "seatHeld">,
    private readonly tokens: TokenStore,
  ) {}

  /** Checks and stores a tournament, or takes up a stored one (`resume`), and starts playing it. */
  async start(request: TournamentRequest & { readonly concurrency?: number }): Promise<TournamentRecord> {
    const models = request.players.filter(isLlmPlayer);
    if (models.length) {
      throw new TournamentError(
        `${models.join(", ")}: a server does not know a model's endpoint; run tournaments of models with ` +
          "`ludus tournament --models`",
      );
    }
    this.checkRoom();
    const remote = await this.remotePlayers(request.players);
    this.checkRoom();
    const t = await this.store.league.createTournament(checkTournament(request, this.live));
    this.play(t, remote, request.concurrency);
    return t;
  }

  /** Goes on with a stored tournament the server was running when it stopped. */
  async resume(id: string, concurrency?: number): Promise<TournamentRecord> {
    const t = await this.store.league.tournament(id);
    if (!t) throw new TournamentError(`no tournament ${id} in the store`);
    if (t.endedAt) throw new TournamentError(`tournament ${id} has ended`);
    if (this.running.has(id)) throw new TournamentError(`tournament ${id} is being played`);
    this.checkRoom();
    this.play(t, await this.remotePlayers(t.players), concurrency);
    return t;
  }

  /** Tournaments being played now, by id. */
  get ids(): string[] {
    return [...this.running.keys()];
  }

  private checkRoom(): void {
    if (this.running.size >= MAX_HOSTED_TOURNAMENTS) throw new TournamentsBusyError(this.running.size);
  }

  private play(t: TournamentRecord, remote: RemotePlayers, concurrency = 64): void {
    const run = runTournament(this.store, this.live, t, { concurrency, remote, share: this.share }).then(
      () => {},
      // A stopping server cuts its tournaments off: `resume` goes on with them after the next start.
      (error: Error) => console.error(`ludus: tournament ${t.id} stopped: ${error.message}`),
    ).finally(() => this.running.delete(t.id));
    this.running.set(t.id, run);
  }

  /** Each `bot:<name>` player's seat: held for the live token of that name. */
  private async remotePlayers(players: readonly string[]): Promise<RemotePlayers> {
    const held = new Map<string, Participant & { tokenId: string }>();
    for (const player of players.filter(isBotPlayer)) {
      const name = player.slice("bot:".length);
      const token = await this.tokens.named(name);
      if (!token || token.kind === "admin") {
        throw new TournamentError(`${player}: no player's token is named ${name} (\`ludus token list\` names them)`);
      }
      held.set(player, { kind: token.kind, name, tokenId: token.id });
    }
    return {
      participant: (player) => held.get(player)!,
      seat: (player, match) => void this.gateway.seatHeld(this.live.get(match)!, held.get(player)!.tokenId),
    };
  }
}
