import { type Command, InvalidArgumentError } from "commander";
import { games } from "../../games/registry.ts";
import { strategiesFor } from "../../policies/baselines/index.ts";
import { GATEWAY_PATH } from "../../protocol/frames.ts";
import { DEFAULT_FILL_AFTER_MS, DEFAULT_FILL_STRATEGY, type ServerOptions, startServer } from "../../server/app.ts";
import type { LeagueMember } from "../../server/league/scheduler.ts";
import { DEFAULT_LIMITS } from "../../server/gateway/gateway.ts";
import { DEFAULT_CONDUCT } from "../../server/match/conduct.ts";
import { DEFAULT_ROOM_CREATES_PER_SECOND } from "../../server/rooms/browser-rooms.ts";
import process from "node:process";
import { DEFAULT_GROUP_COMMIT } from "../../db/group-commit.ts";
import type { Io } from "../io.ts";
import { ServeError } from "../../server/http.ts";
import { integerIn, jsonObject, oneOf, UsageError } from "../options.ts";
import { POLICY_DEVICES, type PolicyDevice } from "../../policies/onnx/network.ts";
import { DEFAULT_BATCH_MS, DEFAULT_MEMORY_MB } from "../../policies/onnx/hosted.ts";
import { NODE_ID } from "../../db/nodes.ts";
import { DEFAULT_LEASE_MS, defaultNodeId } from "../../server/cluster/membership.ts";
import { serveCluster, sharedArgs } from "../serve-cluster.ts";

interface ServeFlags {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  commitWindow: number;
  commitBatches: number;
  maxUnwritten: number;
  fillAfter: number;
  fillStrategy: Fill;
  hold: number;
  policyDevice: PolicyDevice;
  selfPlay: SelfPlayFlag[];
  league: LeagueSpec[];
  policyThreads: number;
  policyBatch: number;
  policyWaitUs: number;
  policyBatchMs: number;
  policyMemoryMb: number;
  drain: number;
  roomCreates: number;
  maxConnections: number;
  node?: string;
  lease: number;
  publicUrl?: string;
  redisUrl?: string;
  tokenFrames: number;
  cluster?: number;
}

/** A node id (`--node`), as the match directory takes it. */
function nodeId(value: string): string {
  if (!NODE_ID.test(value)) {
    throw new InvalidArgumentError("use 1 to 64 letters, digits and _ . : - (starting with a letter or digit).");
  }
  return value;
}

/** Where peers and players reach this process (`--public-url`): an http(s) URL with no path. */
function publicUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch { /* refused below */ }
  if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== "/" || url.search || url.hash) {
    throw new InvalidArgumentError("expected an http(s) URL with no path, e.g. http://10.0.0.5:2567.");
  }
  return url.origin;
}

function redisUrl(value: string): string {
  if (!/^rediss?:\/\//.test(value)) {
    throw new InvalidArgumentError("it is a Redis URL: redis://[user:password@]host[:port][/db].");
  }
  return value;
}

function postgresUrl(value: string): string {
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new InvalidArgumentError("it is a PostgreSQL URL: postgres://user[:password]@host[:port]/database.");
  }
  return value;
}

interface SelfPlayFlag {
  game: string;
  name: string;
  perVersion?: number;
}

/** `game=name[:n]`: a learning policy's self-play (n matches per version), added to those given before. */
function selfPlaySpec(value: string, previous: SelfPlayFlag[]): SelfPlayFlag[] {
  const found = /^([a-z0-9-]+)=([A-Za-z0-9][A-Za-z0-9_.-]{0,63})(?::([1-9]\d{0,8}))?$/.exec(value);
  if (!found || !games.some((g) => g.id === found[1])) {
    throw new InvalidArgumentError(
      "expected <game>=<policy name>[:<matches per version>], e.g. kuhn-poker=kuhn-ppo:4000; games: " +
        `${games.map((g) => g.id).join(", ")}.`,
    );
  }
  const [, game, name, per] = found;
  return [...previous, { game, name, ...(per ? { perVersion: Number(per) } : {}) }];
}

/**
 * A league to keep running, as a JSON object (or @file.json): `{"game": "kuhn-poker", "members": [{"player":
 * "policy:kuhn-cfr", "role": "main"}, {"player": "nash", "role": "fixed"}], "live": 16, "ratePerSecond": 50}`.
 * Its fields are checked when the server starts (unknown players and roles are refused there, with the reason).
 */
function leagueSpec(value: string, previous: LeagueSpec[]): LeagueSpec[] {
  const spec = jsonObject(value);
  const members = spec.members;
  const memberShape = (m: unknown) =>
    typeof m === "object" && m !== null && typeof (m as LeagueMember).player === "string" &&
    typeof (m as LeagueMember).role === "string";
  if (typeof spec.game !== "string" || !Array.isArray(members) || !members.every(memberShape)) {
    throw new InvalidArgumentError(
      'expected {"game": "<id>", "members": [{"player": "<strategy or policy:name>", "role": "main|main-exploiter|' +
        'league-exploiter|fixed"}, ...], "live"?: n, "ratePerSecond"?: r, "weighting"?: "hard|var|uniform"}.',
    );
  }
  return [...previous, { live: 16, ...spec } as unknown as LeagueSpec];
}

type LeagueSpec = NonNullable<ServerOptions["leagues"]>[number];

/** What fills empty seats: a default every game has, and per game `game=strategy-or-policy` overrides. */
interface Fill {
  readonly strategy: string;
  readonly byGame: Record<string, string>;
}

/**
 * `random`, or `random,kuhn-poker=policy:kuhn-ppo,ipd=tit-for-tat`: the default must exist for every game;
 * a game's own entry is checked against that game (and the policy registry) when the server starts.
 */
function fillSpec(value: string): Fill {
  const fill: Fill = { strategy: DEFAULT_FILL_STRATEGY, byGame: {} };
  let defaults = 0;
  for (const entry of value.split(",").map((e) => e.trim())) {
    const eq = entry.indexOf("=");
    if (eq < 0) {
      const name = entry.split(":")[0];
      if (!games.every((g) => strategiesFor(g.id).some((s) => s.name === name))) {
        const common = strategiesFor(games[0].id).filter((s) => games.every((g) => strategiesFor(g.id).includes(s)));
        throw new InvalidArgumentError(
          `${JSON.stringify(entry)} would fill seats of every game; strategies every game has: ${
            common.map((s) => s.name).join(", ")
          } (a game's own strategy or a policy is written game=spec, e.g. kuhn-poker=policy:my-net).`,
        );
      }
      (fill as { strategy: string }).strategy = entry;
      defaults++;
    } else {
      const id = entry.slice(0, eq);
      if (!games.some((g) => g.id === id)) {
        throw new InvalidArgumentError(
          `${JSON.stringify(id)} is not a game; games: ${games.map((g) => g.id).join(", ")}.`,
        );
      }
      fill.byGame[id] = entry.slice(eq + 1);
    }
  }
  if (defaults > 1) throw new InvalidArgumentError("name at most one strategy for every game; the rest as game=spec.");
  return fill;
}

/** Files a server keeps open besides its bot connections: the store, browsers' sockets, the listener, logs. */
const FILES_BESIDE_CONNECTIONS = 256;

/**
 * This process's soft limit on open files, as a shell it starts reports it (Deno will not read /proc/self
 * without --allow-all); undefined when unlimited or where no POSIX shell answers.
 */
function openFileLimit(): number | undefined {
  try {
    const limit = new TextDecoder().decode(new Deno.Command("sh", { args: ["-c", "ulimit -n"] }).outputSync().stdout);
    return /^\d+$/.test(limit.trim()) ? Number(limit) : undefined;
  } catch {
    return undefined;
  }
}

export function registerServe(program: Command, io: Io): void {
  program
    .command("serve")
    .description(
      `run the Ludus server: the HTTP API (GET /health, GET /games), the bot gateway (ws ${GATEWAY_PATH}) and the browser rooms (Colyseus)`,
    )
    .option("--port <n>", "TCP port to listen on (0 picks a free one)", integerIn(0, 65535), 2567)
    .option("--host <address>", "address to listen on", "0.0.0.0")
    .option("--data-dir <dir>", "where bot tokens and the embedded replay store (PGlite) are kept", "data")
    .option(
      "--database-url <url>",
      "record matches in this PostgreSQL database instead of the embedded store (default: $DATABASE_URL)",
      postgresUrl,
      process.env.DATABASE_URL || undefined,
    )
    .option(
      "--commit-window <ms>",
      "how long a write waits for others to share its commit (0 = the next event-loop turn)",
      integerIn(0, 100),
      DEFAULT_GROUP_COMMIT.windowMs,
    )
    .option(
      "--commit-batches <n>",
      "batches the replay store writes at once; more than 1 helps when the database is far away (its round trip " +
        "is the bound), not on a local one",
      integerIn(1, 8),
      DEFAULT_GROUP_COMMIT.maxInFlight,
    )
    .option(
      "--max-unwritten <records>",
      "records that may wait while the replay store is unreachable before new matches are refused (matches " +
        "between built-ins count too, and pause at half of it)",
      integerIn(10, 10_000_000),
      DEFAULT_GROUP_COMMIT.maxBuffer,
    )
    .option(
      "--fill-after <ms>",
      "a player alone in the queue gets built-in opponents after this wait (0 = never)",
      integerIn(0, 86_400_000),
      DEFAULT_FILL_AFTER_MS,
    )
    .option(
      "--fill-strategy <spec>",
      "what fills empty seats: a built-in strategy every game has, then any game=strategy or game=policy:<name> " +
        "for one game (e.g. random,kuhn-poker=policy:my-net)",
      fillSpec,
      { strategy: DEFAULT_FILL_STRATEGY, byGame: {} },
    )
    .option(
      "--self-play <game=name[:n]>",
      "keep self-play matches of a learning policy running (its latest version against itself and past versions; " +
        "<name>.behaviour's where the trainer registers one), for a trainer that reads them back (n matches per " +
        "version, then it waits for the next), e.g. kuhn-poker=kuhn-cfr:1000; repeatable",
      selfPlaySpec,
      [],
    )
    .option(
      "--league <json>",
      "keep a league running (docs/league.md): a JSON object (or @file.json) of game, members [{player, role}], " +
        "live, ratePerSecond, weighting; a learning policy's new versions join it as snapshots; repeatable",
      leagueSpec,
      [],
    )
    .option("--policy-device <device>", "where policy networks run: cpu or cuda", oneOf(POLICY_DEVICES), "cpu")
    .option("--policy-threads <n>", "onnxruntime intra-op threads per policy version", integerIn(1, 256), 1)
    .option("--policy-batch <n>", "the most decisions one inference batch holds", integerIn(1, 65_536), 256)
    .option(
      "--policy-wait-us <µs>",
      "how long a policy's first waiting decision waits for others to share its batch (0: the rest of this " +
        "turn of the event loop)",
      integerIn(0, 100_000),
      0,
    )
    .option(
      "--policy-batch-ms <ms>",
      "the most one policy inference batch (and a registration's trial batch) may take; a policy over it is " +
        "quarantined and its matches end in error",
      integerIn(1, 600_000),
      DEFAULT_BATCH_MS,
    )
    .option(
      "--policy-memory-mb <MiB>",
      "the memory limit of each policy version's inference process (RLIMIT_DATA, where prlimit exists; 0: none)",
      integerIn(0, 1_048_576),
      DEFAULT_MEMORY_MB,
    )
    .option(
      "--hold <s>",
      "seconds a dropped seat is held for its player to resume",
      integerIn(1, 3600),
      DEFAULT_CONDUCT.holdMs / 1000,
    )
    .option(
      "--room-creates <n>",
      "private matches one address may open from browsers a second, in bursts of ten times that and at most eight " +
        "times that waiting for players (raise it where many people share an address, as behind a proxy)",
      integerIn(1, 100_000),
      DEFAULT_ROOM_CREATES_PER_SECOND,
    )
    .option(
      "--max-connections <n>",
      "bot connections the gateway holds at once; more are refused with HTTP 503 (the process's open-file limit " +
        "must be above it: ulimit -n)",
      integerIn(1, 1_000_000),
      DEFAULT_LIMITS.maxConnections,
    )
    .option(
      "--drain <s>",
      "on SIGTERM or SIGINT, let live matches finish for up to this many seconds (new ones are refused) before " +
        "keeping the rest in the store for the next start",
      integerIn(0, 86_400),
      0,
    )
    .option(
      "--node <id>",
      "this process's id in the match directory; processes sharing one PostgreSQL store each need their own " +
        "(default: one kept in --data-dir, made at the first start)",
      nodeId,
    )
    .option(
      "--lease <s>",
      "seconds this process's lease runs unrenewed before its peers on the same store take its matches over",
      integerIn(1, 3600),
      DEFAULT_LEASE_MS / 1000,
    )
    .option(
      "--public-url <url>",
      "where browsers reach this process's rooms, when not where they loaded the page (each process's own " +
        "address, when the processes of a cluster are behind a balancer that does not route rooms; docs/cluster.md)",
      publicUrl,
    )
    .option(
      "--redis-url <url>",
      "Redis shared by the server processes of one PostgreSQL store, which then form a cluster (docs/cluster.md; " +
        "default: $REDIS_URL; not used with the embedded store, which one process holds alone)",
      redisUrl,
      process.env.REDIS_URL || undefined,
    )
    .option(
      "--cluster <n>",
      "start n server processes of one cluster on this machine (ports --port + 1 to --port + n) behind one " +
        "balancer on --port; needs --database-url and --redis-url",
      integerIn(1, 64),
    )
    .option(
      "--token-frames <n>",
      "frames a second one token may send over all its connections, on every process of the cluster (0: no limit)",
      integerIn(0, 10_000_000),
      DEFAULT_LIMITS.tokenFramesPerSecond,
    )
    .action(async (flags: ServeFlags, command: Command) => {
      const explicit = (flag: string) => command.getOptionValueSource(flag) === "cli";
      if (flags.cluster !== undefined) return await startCluster(flags, explicit, io);
      if (explicit("redisUrl") && !flags.databaseUrl) {
        throw new UsageError(
          "--redis-url is for processes sharing a PostgreSQL store (--database-url); the embedded store is one " +
            "process's alone",
        );
      }
      keepRunningThroughFaults();
      const server = await startServer({
        port: flags.port,
        host: flags.host,
        dataDir: flags.dataDir,
        databaseUrl: flags.databaseUrl,
        groupCommit: { windowMs: flags.commitWindow, maxInFlight: flags.commitBatches, maxBuffer: flags.maxUnwritten },
        fillAfterMs: flags.fillAfter === 0 ? null : flags.fillAfter,
        fillStrategy: flags.fillStrategy.strategy,
        fillByGame: flags.fillStrategy.byGame,
        selfPlay: flags.selfPlay,
        leagues: flags.league,
        policies: {
          device: flags.policyDevice,
          threads: flags.policyThreads,
          maxBatch: flags.policyBatch,
          waitMs: flags.policyWaitUs / 1000,
          batchMs: flags.policyBatchMs,
          memoryMb: flags.policyMemoryMb,
        },
        conduct: { holdMs: flags.hold * 1000 },
        roomCreatesPerSecond: flags.roomCreates,
        limits: { maxConnections: flags.maxConnections, tokenFramesPerSecond: flags.tokenFrames },
        node: flags.node,
        leaseMs: flags.lease * 1000,
        publicUrl: flags.publicUrl,
        redisUrl: flags.databaseUrl ? flags.redisUrl : undefined,
      });
      const ws = server.url.replace(/^http/, "ws");
      io.err(
        `ludus: serving on ${server.url} — people: ${server.url}/ (the web app), bots: ${ws}${GATEWAY_PATH} (games: ${
          games.map((g) => g.id).join(", ")
        })\n`,
      );
      const files = openFileLimit();
      if (files !== undefined && files < flags.maxConnections + FILES_BESIDE_CONNECTIONS) {
        io.err(
          `ludus: warning: this process may open ${files} files, too few for --max-connections ${flags.maxConnections} ` +
            `(and ~${FILES_BESIDE_CONNECTIONS} more for the store, browsers and the listener): connections past ` +
            `about ${Math.max(0, files - FILES_BESIDE_CONNECTIONS)} will fail; raise it (ulimit -n) or lower ` +
            "--max-connections\n",
        );
      }
      const { restored, failed } = server.restored;
      io.err(
        [
          ...failed.map((f) => `ludus: match ${f.id} could not be restored and was closed: ${f.error}\n`),
          ...(restored.length
            ? [`ludus: restored ${restored.length} unfinished matches from the store (seats held for their players)\n`]
            : []),
          `ludus: node ${server.cluster.node} (epoch ${server.cluster.epoch})${
            server.cluster.state.shared
              ? `, in a cluster through Redis (peers: ${server.cluster.peers().join(", ") || "none yet"}); its rooms ` +
                `are Colyseus process ${server.cluster.roomsProcess}`
              : ""
          }\n`,
          `ludus: replay store: ${server.store.backend} at ${server.store.where}\n`,
        ].join(""),
      );
      let evicted: string | undefined;
      await new Promise<void>((resolve) => {
        // A first signal stops cleanly: matches stay in the store for the next start. A second one during a
        // stop that waits on an unreachable store exits at once (only unacknowledged records are left out).
        let stopping = false;
        const stop = (why: string) => {
          if (stopping) {
            io.err(`ludus: ${why} again: exiting now; what the store had not written was never acknowledged\n`);
            Deno.exit(1);
          }
          stopping = true;
          io.err(
            `ludus: ${why}: stopping${
              flags.drain ? ` (letting live matches finish for up to ${flags.drain} s)` : ""
            }\n`,
          );
          server.close({ drainMs: flags.drain * 1000, flushTimeoutMs: STOP_FLUSH_MS }).then(({ kept, unwritten }) => {
            io.err(
              `ludus: stopped; ${kept} live match${
                kept === 1 ? " is" : "es are"
              } kept in the store and resume on the next start` +
                (unwritten
                  ? `; ${unwritten} records could not be written in ${
                    STOP_FLUSH_MS / 1000
                  } s (none had been acknowledged)`
                  : "") +
                "\n",
            );
            resolve();
          });
        };
        Deno.addSignalListener("SIGINT", () => stop("SIGINT"));
        Deno.addSignalListener("SIGTERM", () => stop("SIGTERM"));
        // Another process joined with this node id: this one has handed its matches over, and stops (exit 1).
        server.cluster.onEvicted((why) => {
          evicted = why;
          stop("its node id is another process's now");
        });
        watchSupervisor(() => stop("the launching process is gone"));
      });
      if (evicted) throw new ServeError(evicted);
    });
}

/** `--cluster n`: the processes of a cluster on this machine, behind one port (cli/serve-cluster.ts). */
async function startCluster(flags: ServeFlags, explicit: (flag: string) => boolean, io: Io): Promise<void> {
  if (!flags.databaseUrl || !flags.redisUrl) {
    throw new UsageError(
      `--cluster runs processes that share one PostgreSQL store and one Redis: give ${
        [!flags.databaseUrl && "--database-url", !flags.redisUrl && "--redis-url"].filter(Boolean).join(" and ")
      } (or DATABASE_URL, REDIS_URL)`,
    );
  }
  const args = sharedArgs(Deno.args.slice(Deno.args.indexOf("serve") + 1));
  // What came from the environment is passed on as flags, so each process has it whatever its environment.
  if (!explicit("databaseUrl")) args.push("--database-url", flags.databaseUrl);
  if (!explicit("redisUrl")) args.push("--redis-url", flags.redisUrl);
  await serveCluster({
    processes: flags.cluster!,
    host: flags.host,
    port: flags.port,
    node: flags.node ?? defaultNodeId(flags.dataDir),
    publicUrl: flags.publicUrl,
    args,
  }, io);
}

/** How long a stop waits for the replay store to write what it holds. */
const STOP_FLUSH_MS = 15_000;

/**
 * The last line of defence: a failure nothing caught is logged and the server keeps running (each match
 * is its own fault boundary; this only catches what lies outside them).
 */
function keepRunningThroughFaults(): void {
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    console.error("ludus: a failure nothing handled (the server keeps running):", event.reason);
  });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    console.error("ludus: a failure nothing caught (the server keeps running):", event.error);
  });
}

/**
 * `npm start` runs the server under cli/launch.mjs, which names itself in LUDUS_SUPERVISOR_PID. Should that
 * process die (killed outright, so it could not pass a signal on), the server stops as on SIGTERM instead
 * of running on orphaned, holding the port and the store.
 */
function watchSupervisor(stop: () => void): void {
  const supervisor = Number(Deno.env.get("LUDUS_SUPERVISOR_PID"));
  if (!Number.isInteger(supervisor) || supervisor <= 0 || Deno.ppid !== supervisor) return;
  const timer = setInterval(() => {
    if (Deno.ppid === supervisor) return;
    clearInterval(timer);
    stop();
  }, 500);
  Deno.unrefTimer(timer);
}
