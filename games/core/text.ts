import type { Viewer } from "./game.ts";

/** Wording shared by every game's text for LLM seats and spectators. */

/** How `viewer` reads `seat`: "you", "the other player", or "player N" for spectators. */
export function seatName(seat: number, viewer: Viewer): string {
  return viewer === "public" ? `player ${seat}` : seat === viewer ? "you" : "the other player";
}

/** A whole number with its thousands grouped, e.g. 60,000. */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ",");
}

/** A payoff with its sign, e.g. +2 or -1. */
export function signed(x: number): string {
  return x > 0 ? `+${x}` : String(x);
}

/**
 * The action type an input asks for — the `type` of a JSON object or JSON text, else what `named`
 * reads in the text — so a refusal can say why that action is not allowed now.
 */
export function requestedType(input: unknown, named: (text: string) => string | undefined): string | undefined {
  if (typeof input === "object" && input !== null && typeof (input as { type?: unknown }).type === "string") {
    return (input as { type: string }).type;
  }
  if (typeof input !== "string") return undefined;
  const trimmed = input.trim();
  if (trimmed.startsWith("{")) {
    try {
      return requestedType(JSON.parse(trimmed), named);
    } catch {
      return undefined;
    }
  }
  return named(trimmed);
}
