import { LudusError } from "./errors.ts";

/** What a game's variant looks like to a bot choosing seats: how many there are, and the variant's name. */
export interface Table {
  readonly seats: number;
  /** The variant asked for, or the game's default. */
  readonly variant: string;
}

/** A variant's seat count from the server's catalog (`GET /games/<id>`, on the gateway's host and port). */
export async function gameTable(gatewayUrl: string, game: string, variant?: string): Promise<Table> {
  const http = new URL(gatewayUrl);
  http.protocol = http.protocol === "wss:" ? "https:" : "http:";
  http.pathname = `/games/${encodeURIComponent(game)}`;
  let response: Response;
  try {
    response = await fetch(http);
  } catch (error) {
    throw new LudusError("connection_failed", `cannot reach ${http}: ${(error as Error).message}`);
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new LudusError("unknown_game", body?.message ?? `${http} answered HTTP ${response.status}`);
  const name = variant ?? body.defaultVariant;
  const info = body.variants?.[name];
  if (!info) {
    throw new LudusError(
      "bad_config",
      `${game} has no variant \`${name}\`; variants: ${Object.keys(body.variants ?? {}).join(", ")}`,
    );
  }
  return { seats: info.seats, variant: name };
}
