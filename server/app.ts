import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { GATEWAY_PATH } from "../protocol/frames.ts";
import { configure } from "../games/core/config.ts";
import { getGame } from "../games/registry.ts";
import type { ConductPolicy, SeatKind } from "../protocol/frames.ts";
import type { TokenStore } from "../db/tokens.ts";
import { DEFAULT_LIMITS, Gateway, type GatewayLimits } from "./gateway/gateway.ts";
import { startHttpServer } from "./http.ts";
import type { ClockSpec } from "./match/clock.ts";
import { LiveMatches } from "./match/live-matches.ts";
import type { Match } from "./match/match.ts";
import type { GroupCommitOptions } from "../db/group-commit.ts";
import { ReplayStore } from "../db/store.ts";
import { datasetRoutes } from "./api/datasets.ts";
import { liveRoutes } from "./api/live.ts";
import { matchRoutes } from "./api/matches.ts";
import { Matchmaker } from "./matchmaking/matchmaker.ts";
import { BrowserRooms } from "./rooms/browser-rooms.ts";
import { webAppRoutes } from "./web-app.ts";
import { Boards } from "./league/board.ts";
import { type LeagueOptions, LeagueScheduler } from "./league/scheduler.ts";
import { ratedPairing } from "./matchmaking/rated-pairing.ts";
import { OnlineRatings } from "./league/online-ratings.ts";
import { leagueRoutes } from "./api/league.ts";
import { removeRuntimeFile, writeRuntimeFile } from "./runtime-file.ts";
import { HostedTournaments } from "./league/tournament/hosted.ts";
import { playerRoutes } from "./api/players.ts";
import { policyRoutes } from "./api/policies.ts";
import { tokenRoutes } from "./api/tokens.ts";
import { PolicyRuntime, type RuntimeOptions } from "../policies/onnx/runtime.ts";
import { checkDevice } from "../policies/onnx/probe.ts";
import { seatingFor, SelfPlay, type SelfPlayOptions } from "./league/self-play.ts";
import { defaultNodeId, type Restored } from "./cluster/membership.ts";
import { Cluster } from "./cluster/cluster.ts";
import { Leadership } from "./cluster/leader.ts";
import { clusterRoutes } from "./api/cluster.ts";
import { DEFAULT_CONDUCT } from "./match/conduct.ts";

/**
 * The composition root: one HTTP port carrying the API, the web app (/), the bot gateway (/bot) and the
 * browser rooms; and this process's place in its cluster (server/cluster/) when it shares its store with others.
 */

export interface ServerOptions {
  readonly port: number;
  readonly host: string;
  /** How long an HTTP connection may stay silent before it is closed. */
  readonly idleMs?: number;
  /** Where tokens and the embedded replay store live. */
  readonly dataDir: string;
  /** PostgreSQL for the replay store instead of the embedded PGlite in `dataDir`. */
  readonly databaseUrl?: string;
  readonly groupCommit?: GroupCommitOptions;
  /** A lone queued player gets built-in opponents after this wait; null never. */
  readonly fillAfterMs?: number | null;
  readonly fillStrategy?: string;
  /** Per game, what fills its empty seats instead (a game's own strategy, or `policy:<name>`). */
  readonly fillByGame?: Readonly<Record<string, string>>;
  readonly conduct?: Partial<ConductPolicy>;
  readonly clocks?: Partial<Record<SeatKind, ClockSpec>>;
  readonly limits?: Partial<GatewayLimits>;
  /** How long a private match may wait for its open seats before it is aborted. */
  readonly waitingTtlMs?: number;
  /** Private matches one address may open in the browser rooms a second. */
  readonly roomCreatesPerSecond?: number;
  /** How policy seats run: device (cpu or cuda), threads, batch size and wait. */
  readonly policies?: Omit<RuntimeOptions, "refreshMs">;
  /** Learning policies this server keeps self-play matches running for (their trainer reads them back). */
  readonly selfPlay?: readonly (Omit<SelfPlayOptions, "game" | "variant"> & { game: string; variant?: string })[];
  /** Leagues to keep running (a scheduler each); their learning policies' new versions become snapshots. */
  readonly leagues?: readonly Omit<LeagueOptions, "policies">[];
  /**
   * This process's node id in the match directory (processes sharing a PostgreSQL store each need their own);
   * default: the one kept in `dataDir`, made at the first start.
   */
  readonly node?: string;
  /** How long its lease runs unrenewed before peers take its matches over (default 10 s). */
  readonly leaseMs?: number;
  /**
   * Where browsers reach this process's rooms when not where they loaded the page (each process's own address, in a
   * cluster behind a balancer that does not route rooms), and where the match directory says it is.
   */
  readonly publicUrl?: string;
  /**
   * Redis, for several processes sharing one PostgreSQL store (a cluster, docs/cluster.md): ignored with the
   * embedded store, which one process holds alone.
   */
  readonly redisUrl?: string;
}

/** How a server stops. */
export interface StopOptions {
  /** Wait up to this long for live matches to end (refusing new ones) before putting the rest to rest. */
  readonly drainMs?: number;
  /** Wait up to this long for the replay store to write what it holds (default: as long as it takes). */
  readonly flushTimeoutMs?: number;
}

/** What a stop left behind. */
export interface Stopped {
  /** Live matches kept in the store for the next start (or a peer) to restore. */
  readonly kept: number;
  /** Records the store could not write in time (none was acknowledged to anyone). */
  readonly unwritten: number;
}

export const DEFAULT_FILL_AFTER_MS = 10_000;
export const DEFAULT_FILL_STRATEGY = "random";

export interface LudusServer {
  readonly url: string;
  readonly port: number;
  readonly matches: LiveMatches;
  readonly tokens: TokenStore;
  readonly store: ReplayStore;
  readonly policies: PolicyRuntime;
  /** This process in its cluster: its node id, the epoch it joined as (a lapsed lease makes it rejoin), its peers. */
  readonly cluster: Cluster;
  /** Matches brought back from the store at start-up, and those that could not be. */
  readonly restored: Restored;
  /**
   * Stops: no new matches or connections; live matches (after an optional drain) are put to rest, their
   * logs durable in the store, and restored by the next start (or, in a cluster, by a peer at once); bots are
   * closed with 1012 (restart).
   */
  close(options?: StopOptions): Promise<Stopped>;
}

/** How long a step of a stop may take before the stop goes on without it. */
const STOP_STEP_MS = 5_000;

/**
 * Waits at most `ms` for one step of a stop: one that hangs (a query waiting on a lock, a peer or Redis that never
 * answers) is said in the log and left behind, so that a stop always ends. Its result, or undefined when it was cut
 * short or failed (said too).
 */
async function stopStep<T>(what: string, step: () => Promise<T>, ms = STOP_STEP_MS): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = Symbol("late");
  const gaveUp = new Promise<typeof late>((resolve) => {
    if (Number.isFinite(ms)) timer = setTimeout(() => resolve(late), ms);
  });
  try {
    const outcome = await Promise.race([step(), gaveUp]);
    if (outcome !== late) return outcome;
    console.warn(`ludus: stopping: ${what} did not finish within ${ms / 1000} s; the stop goes on without it`);
  } catch (error) {
    console.warn(`ludus: stopping: ${what} failed (${(error as Error)?.message ?? error}); the stop goes on`);
  } finally {
    clearTimeout(timer);
  }
  return undefined;
}

export async function startServer(options: ServerOptions): Promise<LudusServer> {
  // Before the store and the cluster: a device this machine lacks is the caller's mistake, said at once, and
  // never hidden behind whatever joining a shared store may refuse first.
  if (options.policies?.device === "cuda") await checkDevice("cuda");
  const store = await ReplayStore.open({
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    groupCommit: {
      ...options.groupCommit,
      onStatus: ({ ok, message }) => (ok ? console.error : console.warn)(`ludus: ${message}`),
    },
  });
  const tokens = store.tokens;
  const node = options.node ?? defaultNodeId(options.dataDir);
  let policies: PolicyRuntime | undefined, cluster: Cluster | undefined;
  const undo = async () => {
    await policies?.close();
    await store.close();
    await cluster?.close();
  };
  let restored: Restored, matches: LiveMatches, ratings: OnlineRatings;
  try {
    cluster = await Cluster.open(store, { node, leaseMs: options.leaseMs, redisUrl: options.redisUrl });
    await tokens.load();
    // Another process may register versions in a shared PostgreSQL store; an embedded one is this process's.
    policies = await PolicyRuntime.open(store.policies, {
      ...options.policies,
      refreshMs: store.backend === "postgres" ? 2_000 : undefined,
    });
    ratings = new OnlineRatings(store);
    matches = new LiveMatches({
      clocks: options.clocks,
      conduct: options.conduct,
      store,
      waitingTtlMs: options.waitingTtlMs,
      policies,
      ratings,
      state: cluster.state,
    });
    restored = await cluster.join(matches);
  } catch (error) {
    await undo();
    throw error;
  }
  const matchmaker = new Matchmaker(matches, cluster, {
    fillAfterMs: options.fillAfterMs === undefined ? DEFAULT_FILL_AFTER_MS : options.fillAfterMs,
    fillStrategy: options.fillStrategy ?? DEFAULT_FILL_STRATEGY,
    fillByGame: options.fillByGame,
    pairing: ratedPairing({ ratingOf: (game, variant, player) => ratings.skill(game, variant, player) }),
    unclaimed: (match, ticket) => {
      const token = ticket.participant.tokenId;
      if (token) void gateway.seatHeld(match, token).catch(() => false);
    },
  });
  let tasks: Leadership[];
  try {
    // A fill named for a game must seat there now: a typo is refused at start, not at a player's first wait.
    for (const [id, spec] of Object.entries(options.fillByGame ?? {})) {
      const game = getGame(id);
      matches.checkInProcess(spec, game, configure(game, {}).config);
    }
    // So must a league's members (the first scheduler is checked now; each process that leads it makes its own).
    const leagues = (options.leagues ?? []).map((spec) => {
      let checked: LeagueScheduler | undefined = new LeagueScheduler(matches, { ...spec, policies });
      return new Leadership(cluster.state, Leadership.nameOf("league", spec), () => {
        const scheduler = checked ?? new LeagueScheduler(matches, { ...spec, policies });
        checked = undefined;
        return scheduler;
      }, cluster.leaseMs);
    });
    const selfPlay = (options.selfPlay ?? []).map((spec) => {
      const game = getGame(spec.game);
      const { variant } = configure(game, {}, spec.variant);
      const make = () => new SelfPlay(matches, policies!, { ...seatingFor(game, variant), ...spec, game, variant });
      return new Leadership(cluster.state, Leadership.nameOf("self-play", { ...spec, variant }), make, cluster.leaseMs);
    });
    tasks = [...leagues, ...selfPlay];
  } catch (error) {
    await cluster.leave();
    await undo();
    throw error;
  }
  const gateway = new Gateway(tokens, matches, matchmaker, cluster, { ...DEFAULT_LIMITS, ...options.limits });
  let rooms: BrowserRooms | undefined;
  const http = await startHttpServer(options, {
    before: (req, res) => rooms?.handleRequest(req, res) ?? false,
    health: () => ({
      liveMatches: matches.all().filter((m) => !m.ended).length,
      botConnections: gateway.connections,
      queued: matchmaker.waiting(),
      store: { backend: store.backend, unwritten: store.writer.buffered, failure: store.writer.failure ?? null },
      policySessions: policies!.sessions,
      node: {
        id: cluster.node,
        epoch: cluster.epoch,
        peers: cluster.peers(),
        remoteConnections: gateway.remoteConnections,
      },
    }),
    routes: [
      matchRoutes(store),
      datasetRoutes(store),
      liveRoutes(matches, cluster),
      policyRoutes(policies, tokens),
      leagueRoutes(store, new Boards(store), {
        tournaments: new HostedTournaments(store, matches, gateway, tokens),
        tokens,
      }),
      playerRoutes(store),
      tokenRoutes(tokens),
      clusterRoutes(cluster),
      webAppRoutes(undefined, () => cluster.state.shared ? cluster.nodes.filter((n) => n.live).map((n) => n.url) : []),
    ],
  }).catch(async (error) => {
    gateway.close();
    await cluster.leave();
    await undo();
    throw error;
  });
  const publicUrl = options.publicUrl ?? http.url;
  try {
    rooms = await BrowserRooms.start({
      matches,
      matchmaker,
      cluster,
      holdMs: options.conduct?.holdMs ?? DEFAULT_CONDUCT.holdMs,
      createsPerSecond: options.roomCreatesPerSecond,
      // Without one, a page opens its room sockets where it was served (one process, or a balancer that routes them).
      publicAddress: options.publicUrl?.replace(/^https?:\/\//, ""),
    });
    await cluster.advertise(publicUrl, rooms.processId);
  } catch (error) {
    await rooms?.close();
    await http.close();
    gateway.close();
    await cluster.leave();
    await undo();
    throw error;
  }
  http.http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(req.url ?? "/", "http://localhost").pathname === GATEWAY_PATH) gateway.handleUpgrade(req, socket, head);
  });
  rooms.attach(http.http, GATEWAY_PATH);
  // An embedded store is this process's alone: the CLI's store commands find the way here instead.
  if (store.backend === "pglite") {
    writeRuntimeFile(options.dataDir, { url: http.url, pid: Deno.pid, token: tokens.issueEphemeral("local", "admin") });
  }
  // What a stopped server left unrated is rated beside play, not before it (a long backlog would hold the start).
  ratings.catchUp().catch((error) => console.warn(`ludus: rating matches left unrated failed: ${error.message}`));
  for (const task of tasks) task.begin();
  return {
    url: http.url,
    port: http.port,
    matches,
    tokens,
    store,
    policies,
    cluster,
    restored,
    close: async (stop: StopOptions = {}) => {
      cluster!.quiesce(); // a stopping process takes nothing more over from its peers
      await stopStep("ending the leagues and self-play it leads", () => Promise.all(tasks.map((task) => task.end())));
      await stopStep("taking its tickets out of the queue", () => matchmaker.close());
      matches.stopAccepting();
      const live = () => matches.all().filter((m) => !m.ended);
      if (stop.drainMs) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const ended = (m: Match) => new Promise<void>((done) => m.subscribe((e) => e.kind === "end" && done()));
        await Promise.race([
          Promise.all(live().map(ended)),
          new Promise<void>((done) => (timer = setTimeout(done, stop.drainMs))),
        ]);
        clearTimeout(timer);
      }
      const kept = live().length;
      matches.suspendAll();
      gateway.close();
      await stopStep("closing the browser rooms", () => rooms!.close());
      await stopStep("closing the HTTP listener and its connections", () => http.close());
      if (store.backend === "pglite") removeRuntimeFile(options.dataDir);
      await stopStep("releasing the policies", () => policies!.close());
      ratings.close();
      // What fails is rated at the next start.
      await stopStep("writing the ratings of ended matches", () => ratings.flush().catch(() => {}));
      // The store's flush has its own bound; the lease and the connections get a step's each after it.
      const flushMs = stop.flushTimeoutMs ?? Infinity;
      const unwritten = await stopStep(
        "closing the replay store",
        () => store.close(flushMs, () => stopStep("giving up its lease", () => cluster!.leave())),
        flushMs + 2 * STOP_STEP_MS,
      ) ?? store.writer.buffered;
      await stopStep("closing its connections to Redis", () => cluster!.close());
      return { kept, unwritten };
    },
  };
}
