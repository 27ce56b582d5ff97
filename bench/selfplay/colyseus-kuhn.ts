/**
 * The Colyseus peer of the selfplay bench: a minimal Kuhn poker room on Colyseus 0.18 with its own
 * websocket transport, as a Colyseus user would write it — no store, no clocks, no spectators. Two players
 * join a room (`joinOrCreate("kuhn")`) and play hand after hand in it: each hand sends `match_start` to both
 * (the seat's observation), a `turn` to the seat to act (observation and legal forms), an `ack` for each act
 * and `match_end` to both, the frames Ludus's gateway sends for the same loop; a player asks for the next hand
 * with `again`. The rules are Ludus's own (the pure episode engine), so only the server around them differs.
 *
 *   deno run -A bench/selfplay/colyseus-kuhn.ts --port P
 */
import { type Client, Room, Server } from "@colyseus/core";
import { setLogger } from "@colyseus/core/Logger";
import { WebSocketTransport } from "@colyseus/ws-transport";
import { parseArgs } from "node:util";
import { type Action, isActionError } from "../../games/core/action.ts";
import { configure } from "../../games/core/config.ts";
import { Episode } from "../../games/core/episode.ts";
import { getGame } from "../../games/registry.ts";

const KUHN = getGame("kuhn-poker");
const CONFIG = configure(KUHN).config;

class KuhnRoom extends Room {
  override maxClients = 2;
  private episode?: Episode;
  private seq = 0;
  private hands = 0;
  private readonly ready = new Set<string>();

  override onCreate(): void {
    this.onMessage("act", (client, message: { seq: number; action: Action }) => this.act(client, message));
    this.onMessage("again", (client) => {
      this.ready.add(client.sessionId);
      if (this.ready.size === 2) this.deal();
    });
  }

  override onJoin(): void {
    if (this.clients.length === 2) this.deal();
  }

  private seatOf(client: Client): number {
    return this.clients.indexOf(client);
  }

  private deal(): void {
    this.ready.clear();
    this.episode = new Episode(KUHN, CONFIG, `${this.roomId}-${this.hands++}`);
    this.clients.forEach((client, seat) =>
      client.send("match_start", { seat, observation: this.episode!.observe(seat) })
    );
    this.prompt();
  }

  private prompt(): void {
    const episode = this.episode!;
    if (episode.over) {
      const returns = episode.returns();
      this.clients.forEach((client, seat) => client.send("match_end", { seat, returns }));
      return;
    }
    const seat = episode.toAct[0];
    this.clients[seat].send("turn", {
      seq: ++this.seq,
      observation: episode.observe(seat),
      legal: episode.legal(seat),
    });
  }

  private act(client: Client, message: { seq: number; action: Action }): void {
    const episode = this.episode;
    const seat = this.seatOf(client);
    if (!episode || episode.over || episode.toAct[0] !== seat || message?.seq !== this.seq) {
      return client.send("error", { message: "not your turn" });
    }
    const action = episode.parse(message.action, seat);
    if (isActionError(action)) return client.send("error", { message: action.message });
    const moves: (Action | undefined)[] = [];
    moves[seat] = action;
    episode.step(moves);
    client.send("ack", { seq: message.seq });
    this.prompt();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: "string" } } });
  setLogger({ debug() {}, info() {}, warn() {}, error: console.error } as never);
  const server = new Server({ greet: false, transport: new WebSocketTransport({ perMessageDeflate: false }) });
  server.define("kuhn", KuhnRoom);
  await server.listen(Number(values.port), "127.0.0.1");
}
