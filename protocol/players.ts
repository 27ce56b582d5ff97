import type { SeatKind } from "./frames.ts";

/** Players as the HTTP API, the players table and ratings name them. */

export const PLAYER_KINDS: readonly SeatKind[] = ["human", "bot", "llm", "builtin", "policy"];

/**
 * Who a seat is, as the players table and ratings name it: `kind:name`, a policy by its exact version
 * (`policy:kuhn-cfr@4`: a policy seat's name is already its spec, so it is not prefixed twice).
 */
export const playerId = (seat: { readonly kind: string; readonly name: string }): string =>
  seat.name.startsWith(`${seat.kind}:`) ? seat.name : `${seat.kind}:${seat.name}`;

/** The seat (kind and name) a player id stands for: its kind before the first colon, its name after. */
export function seatOfPlayer(id: string): { kind: SeatKind; names: string[] } | undefined {
  const colon = id.indexOf(":");
  const kind = id.slice(0, colon) as SeatKind;
  if (colon < 1 || !PLAYER_KINDS.includes(kind) || colon === id.length - 1) return undefined;
  // A seat's name may already be the whole id (a policy's spec), or the part after the kind.
  return { kind, names: [id.slice(colon + 1), id] };
}
