import { type Command, InvalidArgumentError, Option } from "commander";
import process from "node:process";
import type { StoreOptions } from "../db/store.ts";
import { readFileSync } from "node:fs";

/** Parsers for option values: each explains what is allowed when a value is refused. */

/** Flags that are each fine but do not go together (exit 2, the message says what is missing or wrong). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number in [${min}, ${max}].`);
    }
    return n;
  };
}

/** A number in [min, max], fractions allowed. */
export function numberIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a number in [${min}, ${max}].`);
    }
    return n;
  };
}

/** A file's text, or a refusal that names the file and why it could not be read. */
export function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read ${path}: ${(cause as Error).message}.`);
  }
}

/** Text given inline, or `@path` to read it from a file. */
export function textOrFile(value: string): string {
  return value.startsWith("@") ? readText(value.slice(1)) : value;
}

/** A JSON object given inline, or `@path` to read it from a file. */
export function jsonObject(value: string): Record<string, unknown> {
  const text = textOrFile(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new InvalidArgumentError(`expected a JSON object (or @file.json): ${(cause as Error).message}.`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgumentError("expected a JSON object, e.g. '{\"rounds\": 20}'.");
  }
  return parsed as Record<string, unknown>;
}

/** A comma-separated list of non-empty names. */
export function nameList(value: string): string[] {
  const names = value.split(",").map((s) => s.trim());
  if (names.some((s) => s === "")) throw new InvalidArgumentError("expected names separated by commas, none empty.");
  return names;
}

/** One of a fixed set of words. */
export function oneOf<T extends string>(allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!allowed.includes(value as T)) throw new InvalidArgumentError(`expected one of: ${allowed.join(", ")}.`);
    return value as T;
  };
}

/**
 * Which replay store a reading command (export, replay verify) opens: `--database-url`, else an explicit
 * `--data-dir`, else $DATABASE_URL, else the default data directory. A flag given beats the environment.
 */
export function storeLocation(flags: { dataDir: string; databaseUrl?: string }, command: Command): StoreOptions {
  const dataDirGiven = command.getOptionValueSource("dataDir") === "cli";
  const databaseUrl = flags.databaseUrl || (dataDirGiven ? undefined : process.env.DATABASE_URL) || undefined;
  return { dataDir: flags.dataDir, databaseUrl };
}

/**
 * A URL with one of `schemes` (`["http", "https"]`). A refusal says what was expected (`what` when the
 * value is no URL at all, `kind` when its scheme is wrong) and gives `example`.
 */
export function urlWith(
  schemes: readonly string[],
  { what, kind, example }: { what: string; kind: string; example: string },
): (value: string) => string {
  return (value) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InvalidArgumentError(`expected ${what}, e.g. ${example}.`);
    }
    if (!schemes.includes(url.protocol.slice(0, -1))) {
      throw new InvalidArgumentError(`expected ${kind}, got ${url.protocol}//, e.g. ${example}.`);
    }
    return value;
  };
}

/** A bot gateway's ws:// or wss:// address. */
export const websocketUrl = urlWith(["ws", "wss"], {
  what: "a websocket URL",
  kind: "a ws:// or wss:// URL",
  example: "ws://127.0.0.1:2567/bot",
});

const serverAddress = urlWith(["http", "https"], {
  what: "the server's address",
  kind: "an http:// or https:// address",
  example: "http://127.0.0.1:2567",
});

/** A running server's HTTP address. */
export const serverUrl = (value: string): URL => new URL(serverAddress(value));

/**
 * `--server` for commands that play registered policies in their own process: read them from a running server's
 * registry (over HTTP) instead of a store. Without it, a server holding `--data-dir`'s store is found by itself.
 */
export const policyServerOption = (): Option =>
  new Option(
    "--server <url>",
    "with policies: read them from a running server instead of a store (one holding --data-dir's store is found " +
      "by itself), e.g. http://127.0.0.1:2567",
  ).argParser(serverUrl).conflicts("databaseUrl");

/**
 * The flags that choose a store, as every command reading one takes them: `--data-dir`, `--database-url`, or
 * `--server` (a running server holds its embedded store), described by `through`.
 */
export function storeFlags(command: Command, through: string): Command {
  return command
    .option("--data-dir <dir>", "the server's data directory (the embedded store is in <dir>/replay)", "data")
    .addOption(
      new Option(
        "--database-url <url>",
        "a PostgreSQL store instead of the embedded one (default: $DATABASE_URL, unless --data-dir is given)",
      ).conflicts("server"),
    )
    .addOption(new Option("--server <url>", through).argParser(serverUrl).conflicts("dataDir"));
}
