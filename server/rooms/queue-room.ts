import { type Client, Room } from "@colyseus/core";
import type { RoomContext } from "./room-context.ts";

/**
 * Where a person waits for a game (`client.joinOrCreate("queue", {game, variant, name})`): the same pool
 * as the bots. When seated, the client gets `matched` {match, game, ticket} and joins the match's room
 * with `joinOrCreate(game, {matchId, ticket})`.
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

  override onJoin(client: Client, options: { game?: string; variant?: string; name?: string } = {}): void {
    if (typeof options.game !== "string") throw new Error("say which `game` to queue for");
    if (options.variant !== undefined && typeof options.variant !== "string") throw new Error("`variant` is a name");
    const name = (typeof options.name === "string" ? options.name : "").trim().slice(0, 40) || "guest";
    const { ticket, fillAt } = this.context.matchmaker.enqueue({
      game: options.game,
      variant: options.variant,
      participant: { kind: "human", name },
      seated: (match, seat) => {
        this.waiting.delete(client.sessionId);
        client.send("matched", {
          type: "matched",
          match: match.id,
          game: match.game.id,
          seat,
          ticket: this.context.issue(match, seat),
        });
      },
    });
    this.waiting.set(client.sessionId, ticket.id);
    client.send("queued", { type: "queued", ticket: ticket.id, game: ticket.game, variant: ticket.variant, fillAt });
  }

  override onLeave(client: Client): void {
    const ticket = this.waiting.get(client.sessionId);
    this.waiting.delete(client.sessionId);
    if (ticket) this.context.matchmaker.cancel(ticket);
  }
}
