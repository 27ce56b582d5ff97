import { randomBytes } from "node:crypto";
import { createAuthContext, matchMaker } from "@colyseus/core";
import { setLogger } from "@colyseus/core/Logger";
import { WebSocketTransport } from "@colyseus/ws-transport";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { games } from "../../games/registry.ts";
import { unstorable } from "../../db/storable.ts";
import { requestRefusal } from "../match/live-matches.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { RateLimit } from "../rate-limit.ts";
import { MatchRoom, ROOM_OPTIONS } from "./match-room.ts";
import { QueueRoom } from "./queue-room.ts";
import { RoomContext } from "./room-context.ts";

/** The room type where people wait for a game. */
export const QUEUE_ROOM = "queue";

const MATCHMAKE = /^\/matchmake\/([A-Za-z]+)\/([^/?]+)$/;
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "POST, OPTIONS",
  "access-control-allow-headers": "content-type, authorization",
};
const MAX_BODY = 64 * 1024;
/** The matchmaking methods of @colyseus/sdk's client. */
const METHODS = new Set(["create", "joinOrCreate", "join", "joinById", "reconnect"]);
const GAME_ROOMS = new Set(games.map((g) => g.id));
/**
 * Anonymous private matches one address may open a second, by default: in bursts of ten times that, and
 * at most eight times that waiting for players at once.
 */
export const DEFAULT_ROOM_CREATES_PER_SECOND = 1;

/** A refusal of a matchmaking request: its HTTP status, the protocol's code and a sentence. */
class Refusal extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

let running = false;

/**
 * Colyseus's errors come with whole stack traces, one per malformed frame or refused join: a stranger
 * could fill the log. One line each, at most one a second (the rest counted).
 */
function quietLogger() {
  let last = 0;
  let dropped = 0;
  const line = (level: "error" | "warn" | "info", args: unknown[]) => {
    const now = performance.now();
    if (now - last < 1000) return void dropped++;
    last = now;
    const text = args.map((a) => String(a instanceof Error ? a.message : a).split("\n")[0]).join(" ");
    console[level](`ludus: rooms: ${text}${dropped ? ` (${dropped} more since)` : ""}`);
    dropped = 0;
  };
  return {
    debug() {},
    trace() {},
    info: (...args: unknown[]) => line("info", args),
    warn: (...args: unknown[]) => line("warn", args),
    error: (...args: unknown[]) => line("error", args),
  };
}

/**
 * Colyseus 0.18 on the server's own HTTP port, for browsers using `@colyseus/sdk`: one room type per
 * registered game (MatchRoom) and the `queue` room. We run Colyseus's matchmaker and websocket
 * transport but answer its one HTTP route (`POST /matchmake/:method/:room`) ourselves: the room of a match
 * is chosen by its match id, never by Colyseus's filters, so a request without one opens a new private
 * match (it never lands in someone else's), and only the request that created a private match can take
 * its creator's seat. Colyseus's matchmaker is process-global: one BrowserRooms per process at a time.
 *
 * In a cluster the matchmaker uses Colyseus's Redis presence and driver: a match's room is made on the process
 * that plays the match (the match's owner decides placement; a room only mirrors it), any process reserves a
 * seat in it, and the reservation names that process's public address, where the page's socket goes.
 */
export class BrowserRooms {
  private readonly creates = new Map<string, RateLimit>();
  /** Rooms being created for a match id, so two requests for one match make one room. */
  private readonly opening = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly transport: WebSocketTransport,
    private readonly context: RoomContext,
    private readonly cluster: Cluster,
    private readonly createsPerSecond: number,
  ) {}

  static async start(
    options: {
      matches: LiveMatches;
      matchmaker: Matchmaker;
      cluster: Cluster;
      holdMs: number;
      createsPerSecond?: number;
      /** Where browsers reach this process's rooms (in a cluster), e.g. `10.0.0.5:2567`. */
      publicAddress?: string;
    },
  ): Promise<BrowserRooms> {
    if (running) throw new Error("browser rooms are already running in this process");
    running = true;
    setLogger(quietLogger());
    const { matches, cluster } = options;
    const transport = new WebSocketTransport({ noServer: true, maxPayload: 64 * 1024 });
    const shared = cluster.rooms;
    await matchMaker.setup(
      shared?.presence,
      shared?.driver,
      shared ? options.publicAddress : undefined,
      // A match's room goes where the match is played; every other room (a new private match, the queue) here.
      async (_room: string, clientOptions: { matchId?: unknown }) => {
        const id = clientOptions?.matchId;
        if (typeof id !== "string" || matches.get(id)) return matchMaker.processId;
        const [owner] = await cluster.owners([id]);
        return owner?.live && owner.rooms ? owner.rooms : matchMaker.processId;
      },
    );
    const context = new RoomContext(matches, options.matchmaker, cluster.state, options.holdMs);
    for (const game of games) matchMaker.defineRoomType(game.id, MatchRoom, { context });
    // One queue room per process: a person waits on the process the page reached, in the cluster's pools.
    matchMaker.defineRoomType(QUEUE_ROOM, QueueRoom, { context }).filterBy(["node"]);
    await matchMaker.accept();
    return new BrowserRooms(
      transport,
      context,
      cluster,
      options.createsPerSecond ?? DEFAULT_ROOM_CREATES_PER_SECOND,
    );
  }

  /** This process's id in Colyseus's matchmaker (peers make the rooms of its matches there). */
  get processId(): string {
    return matchMaker.processId;
  }

  /** Takes the websocket upgrades of `http`, except those on `skipPath` (the bot gateway's). */
  attach(http: Server, skipPath: string): void {
    this.transport.attachToServer(http, {
      filter: (req: IncomingMessage) => new URL(req.url ?? "/", "http://localhost").pathname !== skipPath,
    });
  }

  /** Answers Colyseus's matchmaking requests; false for every other request. */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? "/").split("?")[0];
    const route = MATCHMAKE.exec(path);
    if (!route) return false;
    if (req.method === "OPTIONS") {
      res.writeHead(204, CORS).end();
      return true;
    }
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { ...CORS, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method !== "POST") {
      reply(405, { code: "method_not_allowed", error: `matchmaking is POST ${path}` });
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reply(413, { code: "too_large", error: `matchmaking options are at most ${MAX_BODY} bytes` });
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return;
      const [, method, room] = route;
      this.matchmake(method, room, Buffer.concat(chunks), req.socket.remoteAddress ?? "unknown").then(
        (reservation) => reply(200, reservation),
        (error) => {
          if (error instanceof Refusal) return reply(error.status, { code: error.code, error: error.message });
          const e = error as { code?: unknown; message?: string };
          reply(400, { code: e.code ?? "matchmake_failed", error: e.message ?? String(error) });
        },
      );
    });
    return true;
  }

  private async matchmake(method: string, rawRoom: string, body: Buffer, address: string): Promise<unknown> {
    if (!METHODS.has(method)) {
      throw new Refusal(
        404,
        "unknown_method",
        `no matchmaking method \`${method}\`; methods: ${[...METHODS].join(", ")}`,
      );
    }
    let room: string;
    let options: Record<string, unknown>;
    try {
      room = decodeURIComponent(rawRoom);
      options = body.length ? JSON.parse(body.toString("utf8")) : {};
    } catch {
      throw new Refusal(400, "bad_request", "matchmaking options must be a JSON object, and the room name valid text");
    }
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new Refusal(400, "bad_request", "matchmaking options must be a JSON object");
    }
    const unfit = unstorable(options);
    if (unfit) throw new Refusal(400, "bad_request", `matchmaking options: ${unfit}`);
    // Only the server names a creator: a client's own `creatorKey` or `creatorAddress` is dropped.
    const { creatorKey: _, creatorAddress: __, ...clean } = options;
    const auth = createAuthContext({ headers: new Headers(), req: {} } as never);
    try {
      if (method === "reconnect") return await matchMaker.reconnect(room, clean);
      if (room === QUEUE_ROOM) {
        if (method === "joinById") throw new Refusal(400, "bad_request", "the queue is joined with joinOrCreate");
        return await matchMaker.joinOrCreate(QUEUE_ROOM, { ...clean, node: this.cluster.node }, auth);
      }
      if (method === "joinById") return await this.matchRoom(undefined, room, clean, auth);
      if (!GAME_ROOMS.has(room)) {
        throw new Refusal(404, "unknown_room", `no room type \`${room}\`; rooms: ${[...GAME_ROOMS].join(", ")}, queue`);
      }
      const checked = ROOM_OPTIONS.safeParse(clean);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        throw new Refusal(400, "bad_request", `room options: \`${issue.path.join(".")}\`: ${issue.message}`);
      }
      if (typeof clean.matchId === "string") return await this.matchRoom(room, clean.matchId, clean, auth);
      if (method === "join") throw new Refusal(400, "bad_request", "`join` a match room with its `matchId`");
      return await this.createPrivate(room, clean, address, auth);
    } catch (error) {
      if (error instanceof Refusal) throw error;
      const refusal = requestRefusal(error);
      if (refusal) throw new Refusal(400, refusal.code, refusal.message);
      throw error;
    }
  }

  /** A new private match for the person asking: only this request's seat reservation can take the creator's seat. */
  private createPrivate(game: string, options: Record<string, unknown>, address: string, auth: unknown) {
    let limit = this.creates.get(address);
    if (!limit) {
      if (this.creates.size > 10_000) this.creates.clear(); // a bound on the bookkeeping itself
      this.creates.set(address, limit = new RateLimit(this.createsPerSecond, 10 * this.createsPerSecond));
    }
    if (!limit.take()) {
      throw new Refusal(
        429,
        "rate_limited",
        `at most ${this.createsPerSecond} new private matches a second from one address (\`ludus serve --room-creates\`)`,
      );
    }
    const maxWaiting = 8 * this.createsPerSecond;
    if (this.context.waitingFrom(address) >= maxWaiting) {
      throw new Refusal(
        429,
        "too_many_matches",
        `${maxWaiting} private matches from this address already wait for players; start or close some first`,
      );
    }
    const creatorKey = randomBytes(18).toString("base64url");
    return matchMaker.create(game, { ...options, creatorKey, creatorAddress: address }, auth as never);
  }

  /**
   * The room of live match `matchId` (made where the match is played when no browser has opened it yet), and a seat
   * reservation in it.
   */
  private async matchRoom(game: string | undefined, matchId: string, options: Record<string, unknown>, auth: unknown) {
    const { gameId, rooms } = await this.placeOf(matchId);
    if (game !== undefined && gameId !== game) {
      throw new Refusal(400, "bad_request", `match ${matchId} is a ${gameId} match, not ${game}`);
    }
    while (this.opening.has(matchId)) await this.opening.get(matchId)!.catch(() => {});
    const listed = await matchMaker.getRoomById(matchId);
    // A room left listed by a process that no longer plays the match (it stopped, a peer took the match over).
    if (listed && listed.processId !== rooms) await matchMaker.driver.remove(matchId);
    if (!listed || listed.processId !== rooms) {
      const opened = matchMaker.createRoom(gameId, { matchId });
      this.opening.set(matchId, opened);
      try {
        await opened;
      } catch (error) {
        // Another process had it made meanwhile: that room is the one to join.
        if (!await matchMaker.getRoomById(matchId)) throw error;
      } finally {
        this.opening.delete(matchId);
      }
    }
    return await matchMaker.joinById(matchId, { ...options, matchId }, auth as never);
  }

  /** The game of live match `matchId` and the rooms' process of the node playing it. */
  private async placeOf(matchId: string): Promise<{ gameId: string; rooms: string }> {
    const match = this.context.matches.get(matchId);
    if (match && !match.suspended) return { gameId: match.game.id, rooms: matchMaker.processId };
    // This server is stopping to restart: its next start restores the match, and its pages come back then.
    if (match && !this.cluster.rooms) {
      throw new Refusal(503, "server_stopping", `the server is restarting; match ${matchId} goes on once it is back`);
    }
    const [owner] = this.cluster.rooms ? await this.cluster.owners([matchId]) : [];
    const record = owner && await this.context.matches.store?.match(matchId);
    if (!owner || !record) throw new Refusal(404, "unknown_match", `no live match \`${matchId}\``);
    if (!owner.live || !owner.rooms) {
      throw new Refusal(
        503,
        "server_stopping",
        `match ${matchId} is being moved to another server process after its own stopped; try again shortly`,
      );
    }
    return { gameId: record.game, rooms: owner.rooms };
  }

  async close(): Promise<void> {
    await matchMaker.gracefullyShutdown().catch(() => {});
    this.transport.shutdown();
    running = false;
  }
}
