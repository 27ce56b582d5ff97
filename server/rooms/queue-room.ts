import { type Client, Room } from "@colyseus/core";
import type { RoomContext } from "./room-context.ts";

/**
 * Where a person waits for a game (`client.joinOrCreate("queue", {game, variant, name})`): the same pool
 * as the bots, on every process of a cluster (each process has a queue room of its own). When seated, the client
 * gets `matched` {match, game, ticket} and joins the match's room with `joinOrCreate(game, {matchId, ticket})`.
 */
export class QueueRoom extends Room {
  private context!: RoomContext;
  private readonly waiting = new Map<string, string>();

  override onCreate(options: { context: RoomContext }): void {
    this.context = options.context;
    this.maxMessagesPerSecond = 5; // it takes no messages at all: a flood only closes the flooder
    this.onMessage("*", (client, type) =>
      client.send("error", {
        type: "error",
        code: "unknown_type",
        message: `the queue takes no messages (got \`${String(type)}\`); leave the room to stop waiting`,
      }));
  }

  override async onJoin(client: Client, options: { game?: string; variant?: string; name?: string } = {}) {
    if (typeof options.game !== "string") throw new Error("say which `game` to queue for");
    if (options.variant !== undefined && typeof options.variant !== "string") throw new Error("`variant` is a name");
    const name = (typeof options.name === "string" ? options.name : "").trim().slice(0, 40) || "guest";
    const matchmaker = this.context.matchmaker;
    const ticket = matchmaker.ticket({
      game: options.game,
      variant: options.variant,
      participant: { kind: "human", name },
    });
    this.waiting.set(client.sessionId, ticket.id);
    const { fillAt } = await matchmaker.enqueue(ticket, (match, seat) => {
      this.waiting.delete(client.sessionId);
      this.context.issue(match, seat).then(
        (seatTicket) => client.send("matched", { type: "matched", match, game: ticket.game, seat, ticket: seatTicket }),
        (error: Error) =>
          client.send("error", {
            type: "error",
            code: "store_unavailable",
            message: `a seat was found but could not be handed over (${error.message}); queue again`,
          }),
      );
    });
    client.send("queued", { type: "queued", ticket: ticket.id, game: ticket.game, variant: ticket.variant, fillAt });
  }

  override onLeave(client: Client): void {
    const ticket = this.waiting.get(client.sessionId);
    this.waiting.delete(client.sessionId);
    if (ticket) void this.context.matchmaker.cancel(ticket).catch(() => {});
  }
}
