import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import process from "node:process";
import type { Io } from "./io.ts";
import { ServeError } from "../server/http.ts";

/**
 * `ludus serve --cluster <n>`: a cluster on one machine, for trying it. It starts n `ludus serve` processes sharing
 * the PostgreSQL store and Redis, each its own node on its own port (--port + 1 … --port + n), and balances the TCP
 * connections of --port over them (round robin), so bots, pages and HTTP clients use one address as with one
 * process; a page's room socket goes to the process playing the match, which its path names. A process that
 * dies is started again (its peers have taken its matches over meanwhile). SIGINT or SIGTERM stops them all.
 * On several machines, run one `ludus serve` per process with its own --node and --public-url behind a load balancer
 * of your own instead (docs/cluster.md).
 */

export interface ClusterFlags {
  readonly processes: number;
  readonly host: string;
  readonly port: number;
  /** The node id the processes' ids are made from (`<base>.1` … `<base>.n`). */
  readonly node: string;
  /** Where the balancer is reached from outside, if not the address it listens on. */
  readonly publicUrl?: string;
  /** The `serve` arguments every process gets (store, Redis, conduct, …). */
  readonly args: readonly string[];
}

/** Flags the supervisor sets per process itself, taken out of what it passes on. */
const PER_PROCESS = new Set(["--cluster", "--port", "--node", "--public-url"]);

/** `serve`'s arguments without the per-process ones (both `--flag value` and `--flag=value`). */
export function sharedArgs(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [flag] = args[i].split("=", 1);
    if (!PER_PROCESS.has(flag)) kept.push(args[i]);
    else if (!args[i].includes("=")) i++;
  }
  return kept;
}

/** How `deno run` runs the CLI (the `ludus` task's permissions), so each process runs as this one does. */
function ludusCommand(): string[] {
  const deno = JSON.parse(readFileSync(fileURLToPath(new URL("../deno.json", import.meta.url)), "utf8"));
  return String(deno.tasks.ludus).split(/\s+/).slice(1);
}

interface Member {
  readonly node: string;
  readonly port: number;
  child?: ChildProcess;
  /** Where its HTTP port answers, once it said so. */
  url?: string;
  /** Its browser rooms' process id in Colyseus, once it said so. */
  rooms?: string;
  restarts: number;
  startedAt: number;
}

const RESTART_MAX_MS = 30_000;

export async function serveCluster(flags: ClusterFlags, io: Io): Promise<void> {
  const command = ludusCommand();
  const members: Member[] = Array.from({ length: flags.processes }, (_, i) => ({
    node: `${flags.node}.${i + 1}`,
    port: flags.port === 0 ? 0 : flags.port + i + 1,
    restarts: 0,
    startedAt: 0,
  }));
  let stopping = false;
  let announced = false;
  const early: string[] = [];
  const say = (line: string) => announced ? io.err(line) : early.push(line);

  const start = (member: Member): Promise<void> =>
    new Promise((ready, failed) => {
      const args = [
        ...command,
        "serve",
        ...flags.args,
        "--host",
        flags.host,
        "--port",
        String(member.port),
        "--node",
        member.node,
        // Without a public address a page opens its room sockets where it was served: this balancer.
        ...(flags.publicUrl ? ["--public-url", flags.publicUrl] : []),
      ];
      const child = spawn(Deno.execPath(), args, {
        // Each process stops by itself should this one die without passing a signal on (cli/commands/serve.ts).
        env: { ...process.env, LUDUS_SUPERVISOR_PID: String(Deno.pid) },
        stdio: ["ignore", "inherit", "pipe"],
      });
      member.child = child;
      member.startedAt = performance.now();
      let pending = "";
      let listening = false;
      child.stderr!.on("data", (chunk: Buffer) => {
        pending += chunk.toString("utf8");
        let end: number;
        while ((end = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, end);
          pending = pending.slice(end + 1);
          say(`[${member.node}] ${line}\n`);
          const url = /serving on (http:\/\/\S+)/.exec(line)?.[1];
          if (url) member.url = url;
          const rooms = /Colyseus process (\S+)/.exec(line)?.[1];
          if (rooms) member.rooms = rooms;
          if (!listening && member.url && line.includes("replay store:")) {
            listening = true;
            ready();
          }
        }
      });
      child.once("exit", (code, signal) => {
        member.child = undefined;
        member.url = undefined;
        if (!listening) failed(new ServeError(`node ${member.node} exited (${code ?? signal}) before it listened`));
        // The first start's failure stops the cluster; any later exit is a restart, as often as it takes.
        if (stopping || !announced) return;
        // Up a minute or more: a fresh failure, restarted at once; else the wait doubles.
        if (performance.now() - member.startedAt > 60_000) member.restarts = 0;
        const wait = Math.min(RESTART_MAX_MS, 1000 * 2 ** member.restarts++);
        io.err(`ludus: node ${member.node} exited (${code ?? signal}); starting it again in ${wait / 1000} s\n`);
        setTimeout(() => {
          if (!stopping) start(member).catch(() => {}); // its exit is handled above: another try
        }, wait);
      });
    });

  const balancer = await balance(flags, members);
  // One at a time: the first creates the schema, and each joins the directory seeing the ones before.
  try {
    for (const member of members) await start(member);
  } catch (error) {
    stopping = true;
    balancer.close();
    for (const line of early) io.err(line);
    for (const member of members) member.child?.kill("SIGTERM");
    throw error;
  }
  const address = balancer.address() as { port: number };
  const url = `http://${flags.host.includes(":") ? `[${flags.host}]` : flags.host}:${address.port}`;
  io.err(
    `ludus: serving on ${url} — a cluster of ${members.length} processes: ${
      members.map((m) => `${m.node} at ${m.url}`).join(", ")
    }; people: ${url}/, bots: ${url.replace(/^http/, "ws")}/bot\n`,
  );
  announced = true;
  for (const line of early) io.err(line);
  await new Promise<void>((resolve) => {
    let signalled = false;
    const stop = (why: string) => {
      if (signalled) {
        io.err(`ludus: ${why} again: killing the cluster's processes now\n`);
        for (const member of members) member.child?.kill("SIGKILL");
        return;
      }
      signalled = true;
      stopping = true;
      io.err(`ludus: ${why}: stopping the cluster's ${members.length} processes\n`);
      balancer.close();
      const exits = members.map((m) =>
        m.child ? new Promise<void>((done) => m.child!.once("exit", () => done())) : Promise.resolve()
      );
      for (const member of members) member.child?.kill("SIGTERM");
      Promise.all(exits).then(() => resolve());
    };
    Deno.addSignalListener("SIGINT", () => stop("SIGINT"));
    Deno.addSignalListener("SIGTERM", () => stop("SIGTERM"));
  });
}

/**
 * Listens on --port and hands each connection to a process that is up: a browser room's socket to the process whose
 * rooms it names (`/<Colyseus process id>/<room id>`, the path the SDK opens with a seat reservation), anything else
 * to the next one, round robin.
 */
function balance(flags: ClusterFlags, members: readonly Member[]): Promise<Server> {
  let next = 0;
  const server = createServer((client: Socket) => {
    client.setNoDelay(true);
    client.once("data", (first: Buffer) => {
      const up = members.filter((m) => m.url && m.child);
      const path = /^[A-Z]+ (\/[^ ?]*)/.exec(first.subarray(0, 512).toString("latin1"))?.[1] ?? "";
      const room = /\/([A-Za-z0-9_-]+)\/[A-Za-z0-9_-]+$/.exec(path)?.[1];
      const target = up.find((m) => room !== undefined && m.rooms === room) ?? up[next++ % Math.max(1, up.length)];
      if (!target) return void client.destroy();
      const { hostname, port } = new URL(target.url!);
      const upstream = connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
      upstream.setNoDelay(true);
      upstream.write(first);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on("error", close);
      upstream.on("close", close);
      client.on("close", close);
    });
    client.on("error", () => client.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new ServeError(
          error.code === "EADDRINUSE"
            ? `port ${flags.port} is already in use on ${flags.host}; choose another with --port`
            : `cannot listen on ${flags.host}:${flags.port}: ${error.message}`,
        ),
      ));
    server.listen(flags.port, flags.host, () => resolve(server));
  });
}
