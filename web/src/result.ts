import type { Snapshot } from "./session.ts";

/** What a finished match's result says beyond the returns: who each seat was, and where "Play again" leads. */

/** Each seat's name, numbered where several seats share it (a Donor Game of one built-in strategy and a person). */
export function seatLabels(names: readonly string[]): string[] {
  return names.map((name, seat) => (names.indexOf(name) !== names.lastIndexOf(name) ? `${name} #${seat + 1}` : name));
}

/**
 * The same match again: the game, its variant and the opponent every other seat was (one built-in strategy or
 * registered policy, whose seat name is the spec `/play/new` takes). Matches against people go back to the lobby.
 */
export function playAgainHref(snapshot: Snapshot, seated: boolean): string {
  const others = snapshot.seats.filter((s) => !seated || s.seat !== snapshot.seat);
  const vs = others[0]?.name;
  const inProcess = seated && others.length > 0 &&
    others.every((s) => (s.kind === "builtin" || s.kind === "policy") && s.name === vs);
  if (!inProcess) return "/";
  return `/play/new/${snapshot.game}?${new URLSearchParams({ variant: snapshot.variant, vs })}`;
}
