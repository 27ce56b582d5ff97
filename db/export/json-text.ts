/** Pieces of hand-built JSON lines: exports write rows by concatenation to pass stored JSON text through. */

/** A string (or null) as JSON. */
export const jsonString = (value: string | null): string => (value === null ? "null" : JSON.stringify(value));

/** JSON text as stored (or null). */
export const jsonText = (value: string | null): string => value ?? "null";

/** A time as a JSON ISO 8601 string (or null). */
export const jsonTime = (value: Date | null): string => (value === null ? "null" : `"${value.toISOString()}"`);

/** JSON text as stored, under the game's id (`{"ipd":…}`); null stays null. */
export const perGame = (game: string, value: string | null): string =>
  value === null ? "null" : `{${JSON.stringify(game)}:${value}}`;
