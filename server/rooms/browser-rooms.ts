import { createAuthContext, matchMaker } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { games } from "../../games/registry.ts";
import type { LiveMatches } from "../match/live-matches.ts";
import type { Matchmaker } from "../matchmaking/matchmaker.ts";
import { MatchRoom } from "./match-room.ts";
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

let running = false;

/**
 * Colyseus 0.18 on the server's own HTTP port, for browsers using `@colyseus/sdk`: one room type per
 * registered game (MatchRoom) and the `queue` room. We run Colyseus's matchmaker and websocket
 * transport but answer its one HTTP route (`POST /matchmake/:method/:room`) ourselves, so it sits
 * beside the API instead of taking over the server. Colyseus's matchmaker is process-global: one
 * BrowserRooms per process at a time.
 */
export class BrowserRooms {
  private constructor(private readonly transport: WebSocketTransport) {}

  static async start(options: { matches: LiveMatches; matchmaker: Matchmaker }): Promise<BrowserRooms> {
    if (running) throw new Error("browser rooms are already running in this process");
    running = true;
    const transport = new WebSocketTransport({ noServer: true, maxPayload: 64 * 1024 });
    await matchMaker.setup();
    const context = new RoomContext(options.matches, options.matchmaker);
    for (const game of games) {
      matchMaker.defineRoomType(game.id, MatchRoom, { context }).filterBy(["matchId"]);
    }
    matchMaker.defineRoomType(QUEUE_ROOM, QueueRoom, { context });
    await matchMaker.accept();
    return new BrowserRooms(transport);
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
    req.on("end", async () => {
      if (size > MAX_BODY) return;
      let body: unknown;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
      } catch {
        return reply(400, { code: "bad_request", error: "matchmaking options must be a JSON object" });
      }
      try {
        const [, method, room] = route;
        const reservation = await matchMaker.controller.invokeMethod(
          method,
          decodeURIComponent(room),
          body as Record<string, unknown>,
          createAuthContext({ headers: new Headers(req.headers as Record<string, string>), req } as never),
        );
        reply(200, reservation);
      } catch (error) {
        const e = error as { code?: number; message?: string };
        reply(400, { code: e.code ?? 0, error: e.message ?? String(error) });
      }
    });
    return true;
  }

  async close(): Promise<void> {
    await matchMaker.gracefullyShutdown().catch(() => {});
    this.transport.shutdown();
    running = false;
  }
}
