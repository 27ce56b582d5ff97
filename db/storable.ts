/**
 * What the replay store can keep exactly as it was given. PostgreSQL refuses a NUL character (U+0000) in
 * text and JSON, and an unpaired UTF-16 surrogate in JSON; JSON itself has no NaN, Infinity, BigInt, binary
 * or dates (JSON.stringify would silently turn them into something else). Anything a client sends that
 * the store will hold is checked here first, so it is refused with a clear message at the door instead of
 * failing a commit batch shared with unrelated matches.
 */

/** Deeper than this is refused: no game or meta needs it, and walking it costs stack. */
const MAX_DEPTH = 64;

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
// deno-lint-ignore no-control-regex -- NUL is exactly what is looked for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EVERY_UNSTORABLE = new RegExp(UNSTORABLE.source, "g");

/** Why a string cannot be stored, or undefined when it can. */
function unstorableText(text: string): string | undefined {
  const found = UNSTORABLE.exec(text);
  if (!found) return undefined;
  return found[0] === "\u0000"
    ? "contains a NUL character (U+0000)"
    : `contains an unpaired surrogate (U+${found[0].charCodeAt(0).toString(16).toUpperCase()})`;
}

/** `text` with every character the store would refuse replaced by U+FFFD (for server-made text). */
export function storableText(text: string): string {
  return text.replace(EVERY_UNSTORABLE, "\uFFFD");
}

/** A place in the value being checked: its parent and key, so a path is spelled out only for a refusal. */
interface Place {
  readonly value: unknown;
  readonly parent?: Place;
  readonly key: string;
  readonly depth: number;
}

function pathOf(place: Place): string {
  const keys: string[] = [];
  for (let p: Place | undefined = place; p; p = p.parent) if (p.key !== "") keys.push(p.key);
  return keys.reverse().join(".");
}

/**
 * The first part of `value` that is not plain, storable JSON, as "`path`: why"; undefined when all of it
 * is. `path` names where it is (`config.names.3`), starting from `root`. Runs on every client frame.
 */
export function unstorable(value: unknown, root = ""): string | undefined {
  const stack: Place[] = [{ value, key: root, depth: 0 }];
  const at = (place: Place) => {
    const path = pathOf(place);
    return path === "" ? "the value" : `\`${path}\``;
  };
  while (stack.length > 0) {
    const place = stack.pop()!;
    const { value, depth } = place;
    if (value === null || typeof value === "boolean") continue;
    if (typeof value === "string") {
      const why = unstorableText(value);
      if (why) return `${at(place)} ${why}`;
      continue;
    }
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return `${at(place)} is ${value}, which JSON cannot hold`;
      continue;
    }
    if (typeof value !== "object") return `${at(place)} is a ${typeof value}, which JSON cannot hold`;
    if (depth >= MAX_DEPTH) return `${at(place)} is nested more than ${MAX_DEPTH} levels deep`;
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, parent: place, key: String(i), depth: depth + 1 }));
      continue;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      return `${at(place)} is a ${proto?.constructor?.name ?? "non-plain object"}, not a JSON object`;
    }
    for (const [key, item] of Object.entries(value)) {
      const why = unstorableText(key);
      if (why) return `a key in ${at(place)} ${why}`;
      stack.push({ value: item, parent: place, key, depth: depth + 1 });
    }
  }
  return undefined;
}
