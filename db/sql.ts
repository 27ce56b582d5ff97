import { Buffer } from "node:buffer";
import { connect as netConnect, type Socket } from "node:net";
import { setImmediate } from "node:timers";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";

/**
 * The one SQL surface the replay store uses, over either backend: PGlite (embedded, a data directory)
 * or PostgreSQL (postgres.js, `DATABASE_URL`). The SQL itself is the same on both.
 */
export interface Sql {
  readonly backend: "pglite" | "postgres";
  /** Where the data lives, for messages: a directory, or the URL without its password. */
  readonly where: string;
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * A statement run again and again with text parameters (group commit's): parsed and planned once per
   * connection, then only executed. Planning group commit's statement costs ~0.6 ms on the embedded store.
   */
  prepared<T = Record<string, unknown>>(text: string, params: readonly (string | null)[]): Promise<T[]>;
  /** Runs a script of several statements (migrations); no parameters. */
  exec(script: string): Promise<void>;
  /** Runs `fn` inside one transaction on one connection. */
  transaction<T>(fn: (tx: Pick<Sql, "query" | "exec">) => Promise<T>): Promise<T>;
  /**
   * `COPY <target> FROM` rows in COPY's text format (bulk appends), then `then` (a statement as `prepared` runs it),
   * in one transaction: both land or neither, so a crash between them cannot keep the rows without what `then`
   * writes. Resolves with `then`'s rows. Embedded store only: postgres.js resolves a COPY with its stream and drops
   * the error of a refused one (the stream then never finishes), so on PostgreSQL bulk rows take the batch statement.
   */
  copyIn?<T = Record<string, unknown>>(
    target: string,
    text: string,
    then?: { readonly text: string; readonly params: readonly (string | null)[] },
  ): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * PGlite answers through microtasks only; callers that loop on it yield with this between calls. setImmediate
 * lets pending I/O run first, as setTimeout(0) does, without its clamp: a chain of zero timeouts waits ~2 ms
 * each, which left the embedded store's group commit idle between batches.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Strings as a PostgreSQL array literal (`{"a","b"}`), a parameter both backends read as `$n::text[]`. */
export const textArray = (items: readonly string[]): string =>
  `{${items.map((item) => `"${item.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;

/** The database cannot be used right now (a passing failure: writers retry). */
export class StoreDownError extends Error {
  readonly code = "CONNECTION_STORE_DOWN";
  constructor(message: string) {
    super(message);
    this.name = "StoreDownError";
  }
}

/** PostgreSQL's type id of bytea. */
const BYTEA = 17;
/**
 * bytea in and out of PGlite as one hex string made in native code. PGlite's own turns every byte into a string
 * of its own (Array.from(bytes).map(...).join), and back with a parseInt per byte: a 110 MB policy model took
 * GBs of JavaScript heap that way, and the process died of it.
 */
const BYTEA_AS_HEX = {
  serializers: {
    [BYTEA]: (value: unknown) => {
      const bytes = value as Uint8Array;
      return `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;
    },
  },
  parsers: {
    [BYTEA]: (text: string) => {
      const bytes = Buffer.from(text.slice(2), "hex");
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  },
};

/**
 * Errors after which a PGlite instance must not be used again. PostgreSQL ends the whole server on a PANIC
 * (a WAL write that failed: a full disk), and PGlite's wasm has no process to end: the next query spins
 * for ever with the event loop blocked. An instance that aborted is as dead.
 */
function fatal(error: unknown): boolean {
  const severity = (error as { severity?: unknown })?.severity;
  return severity === "PANIC" || severity === "FATAL" || /^Aborted\(|unreachable|RuntimeError/.test(
    String((error as Error)?.message ?? error),
  );
}

const describe = (error: unknown) => String((error as Error)?.message ?? error);

export async function openPglite(dir: string): Promise<Sql> {
  // A new 16 MB WAL segment is otherwise zero-filled inside a commit: a 45–50 ms stall every ~18k steps.
  const open = () => PGlite.create(dir, { postgresqlconf: ["wal_init_zero = off"] });
  let db: PGlite | undefined = await open();
  let reopening: Promise<PGlite> | undefined;
  // Opening PGlite holds the event loop for a second or so: failed reopens back off, up to 30 s apart.
  let failedReopens = 0;
  let nextReopen = 0;
  let lastFailure = "";
  /** The live instance; after a fatal error, a fresh one that recovers from the WAL (as a restarted server). */
  const live = async (): Promise<PGlite> => {
    if (db) return db;
    const down = (why: string) => new StoreDownError(`the embedded store in ${dir} cannot be reopened yet: ${why}`);
    if (!reopening && performance.now() < nextReopen) throw down(lastFailure);
    reopening ??= open().finally(() => (reopening = undefined));
    try {
      db = await reopening;
      failedReopens = 0;
      return db;
    } catch (error) {
      lastFailure = describe(error);
      nextReopen = performance.now() + Math.min(30_000, 1000 * 2 ** failedReopens++);
      throw down(lastFailure);
    }
  };
  const run = async <T>(work: (db: PGlite) => Promise<T>): Promise<T> => {
    const current = await live();
    try {
      return await work(current);
    } catch (error) {
      if (!fatal(error)) throw error;
      if (db === current) db = undefined; // never touched again: it would hang the process
      throw new StoreDownError(
        `the embedded store in ${dir} failed (${describe(error)}); it is reopened on the next write`,
      );
    }
  };
  const surface = (q: Pick<PGlite, "query" | "exec">): Pick<Sql, "query" | "exec"> => ({
    query: async <T>(text: string, params?: readonly unknown[]) =>
      (await q.query<T>(text, params ? [...params] : undefined, BYTEA_AS_HEX)).rows,
    exec: async (script) => void (await q.exec(script)),
  });
  // PGlite's query() parses and plans its text every time; a PREPAREd statement is only executed. Its names are
  // per instance: a reopened store prepares again.
  const statements = new WeakMap<PGlite, Map<string, Promise<string>>>();
  const prepare = (d: PGlite, text: string): Promise<string> => {
    let names = statements.get(d);
    if (!names) statements.set(d, names = new Map());
    let name = names.get(text);
    if (name === undefined) {
      // Kept as a promise, so that writes side by side prepare once.
      const chosen = `ludus_${names.size}`;
      name = d.exec(`PREPARE ${chosen} AS ${text}`).then(() => chosen);
      names.set(text, name);
      name.catch(() => names.delete(text)); // prepared again next time
    }
    return name;
  };
  const execute = (name: string, params: readonly (string | null)[]) =>
    `EXECUTE ${name}(${params.map(quoteLiteral).join(", ")})`;
  const prepared = async <T>(d: PGlite, text: string, params: readonly (string | null)[]): Promise<T[]> =>
    (await d.query<T>(execute(await prepare(d, text), params))).rows;
  return {
    backend: "pglite",
    where: dir,
    query: (text, params) => run((d) => surface(d).query(text, params)),
    prepared: (text, params) => run((d) => prepared(d, text, params)),
    exec: (script) => run((d) => surface(d).exec(script)),
    transaction: (fn) => run((d) => d.transaction((tx) => fn(surface(tx)))),
    copyIn: <T>(target: string, text: string, then?: { text: string; params: readonly (string | null)[] }) =>
      run(async (d) => {
        const copy = (q: Pick<PGlite, "query">) =>
          q.query(`COPY ${target} FROM '/dev/blob'`, [], { blob: new Blob([text]) });
        if (!then) {
          await copy(d);
          return [];
        }
        // Prepared before the transaction, which holds the instance: a PREPARE inside it would wait for it.
        const name = await prepare(d, then.text);
        return await d.transaction(async (tx) => {
          await copy(tx);
          return (await tx.query<T>(execute(name, then.params))).rows;
        });
      }),
    close: async () => {
      const current = db;
      db = undefined;
      await current?.close();
    },
  };
}

/** A string as an SQL literal (standard_conforming_strings, PostgreSQL's default: only quotes are doubled). */
const quoteLiteral = (text: string | null): string => text === null ? "NULL" : `'${text.replaceAll("'", "''")}'`;

/** The URL with its password masked, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable DATABASE_URL)";
  }
}

/**
 * postgres.js leaves Nagle's algorithm on, which stalls small writes (and every COPY) by ~40 ms: its
 * `socket` option takes this instead, a socket with TCP_NODELAY. It is handed over while still connecting
 * (writes queue until it connects): a failed connect must reach postgres.js as the socket's `error` and
 * `close` events, which return the connection to its pool. (A factory that rejects instead leaves the
 * connection stuck for good: after a few refused connects every query waited forever.)
 */
export function noDelaySocket(o: { host: string[]; port: number[]; path?: string }): Socket {
  const socket = o.path ? netConnect(o.path) : netConnect({ host: o.host[0], port: o.port[0] });
  socket.setNoDelay(true);
  return socket;
}

export interface PostgresOptions {
  /** Connections in the pool (the group-commit writer uses one at a time). */
  readonly max?: number;
  /** How long to wait for a connection before a query fails. */
  readonly connectTimeoutSeconds?: number;
}

export function openPostgres(url: string, options: PostgresOptions = {}): Sql {
  const client = postgres(url, {
    max: options.max ?? 4,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    // Reconnect within seconds of the database coming back (postgres.js's own backoff grows to 20 s).
    backoff: (retries: number) => Math.min(2, 0.05 * 2 ** retries) * (0.5 + Math.random() / 2),
    onnotice: () => {},
    connection: { application_name: "ludus" },
    socket: noDelaySocket,
  } as postgres.Options<Record<string, never>>);
  const query = async <T>(run: postgres.Sql | postgres.TransactionSql, text: string, params?: readonly unknown[]) =>
    (await run.unsafe(text, params ? ([...params] as postgres.ParameterOrJSON<never>[]) : undefined)) as unknown as T[];
  return {
    backend: "postgres",
    where: redactUrl(url),
    query: (text, params) => query(client, text, params),
    prepared: async <T>(text: string, params: readonly (string | null)[]) =>
      (await client.unsafe(text, [...params], { prepare: true })) as unknown as T[],
    exec: async (script) => void (await client.unsafe(script).simple()),
    transaction: (fn) =>
      client.begin((tx) =>
        fn({
          query: (text, params) => query(tx, text, params),
          exec: async (script) => void (await tx.unsafe(script).simple()),
        })
      ) as Promise<never>,
    close: () => client.end({ timeout: 5 }),
  };
}
