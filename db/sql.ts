import { connect as netConnect, type Socket } from "node:net";
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
  /** Runs a script of several statements (migrations); no parameters. */
  exec(script: string): Promise<void>;
  /** Runs `fn` inside one transaction on one connection. */
  transaction<T>(fn: (tx: Pick<Sql, "query" | "exec">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** PGlite answers through microtasks only; callers that loop on it yield with this between calls. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export async function openPglite(dir: string): Promise<Sql> {
  // A new 16 MB WAL segment is otherwise zero-filled inside a commit: a 45–50 ms stall every ~18k steps.
  const db = await PGlite.create(dir, { postgresqlconf: ["wal_init_zero = off"] });
  return {
    backend: "pglite",
    where: dir,
    query: async <T>(text: string, params?: readonly unknown[]) =>
      (await db.query<T>(text, params ? [...params] : undefined)).rows,
    exec: async (script) => void (await db.exec(script)),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          query: async <T>(text: string, params?: readonly unknown[]) =>
            (await tx.query<T>(text, params ? [...params] : undefined)).rows,
          exec: async (script) => void (await tx.exec(script)),
        })
      ),
    close: () => db.close(),
  };
}

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
 * `socket` option takes this instead, a socket already connected with TCP_NODELAY.
 */
export function noDelaySocket(o: { host: string[]; port: number[]; path?: string }): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = o.path ? netConnect(o.path) : netConnect({ host: o.host[0], port: o.port[0] });
    socket.setNoDelay(true);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
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
