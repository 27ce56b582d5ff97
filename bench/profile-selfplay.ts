/**
 * Where `ludus serve`'s time goes under the selfplay load: the server runs with V8's inspector open, the
 * selfplay bench's load generator (bench/selfplay/load.ts) plays `--game` through the gateway with `--bots`
 * bots, and V8's sampling profiler records the server over the inspector protocol for `--seconds` after a
 * second's warm-up. Prints one JSON object: the load generator's figures, then the modules and functions with
 * the most self time and the functions with the most time on the stack (inclusive), as shares of the samples
 * (idle excluded from the inclusive shares). `--out FILE` also writes the raw profile (`.cpuprofile`, for Chrome's DevTools).
 *
 *   deno task profile:selfplay [--game kuhn-poker] [--seconds 6] [--bots 64] [--top 40] [--database-url URL]
 *                              [--out FILE]
 * The server records into the embedded store in a temporary directory, or into `--database-url` (never
 * $DATABASE_URL). Profiles are samples: use them to find where time goes, and bench:selfplay to measure it.
 */
import { parseArgs } from "node:util";
import { createTokens } from "../test/support/tokens.ts";
import { freePort, Processes, waitForHttp } from "./selfplay/processes.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    game: { type: "string", default: "kuhn-poker" },
    seconds: { type: "string", default: "6" },
    bots: { type: "string", default: "64" },
    top: { type: "string", default: "40" },
    "database-url": { type: "string" },
    out: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const BOTS = Number(values.bots);
const TOP = Number(values.top);
if (!(SECONDS > 0)) throw new Error(`--seconds must be a number > 0, got ${values.seconds}`);
if (!(BOTS >= 2 && BOTS % 2 === 0)) throw new Error(`--bots must be an even number ≥ 2, got ${values.bots}`);
if (!(Number.isInteger(TOP) && TOP > 0)) throw new Error(`--top must be a whole number > 0, got ${values.top}`);

const ROOT = new URL("..", import.meta.url).pathname;
const WARMUP_SECONDS = 1;
const processes = new Processes();
const dataDir = Deno.makeTempDirSync({ prefix: "ludus-profile-" });
const log = (line: string) => console.error(`profile: ${line}`);

/** A `.cpuprofile` as V8's Profiler.stop returns it. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
    readonly children?: readonly number[];
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A minimal client of the inspector protocol: one request at a time is all this needs. */
async function inspector(port: number): Promise<{ call: (method: string, params?: object) => Promise<unknown> }> {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("could not attach to the server's inspector"));
  });
  let id = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    waiting.get(message.id)?.(message.result);
    waiting.delete(message.id);
  };
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        waiting.set(++id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
  };
}

/** The module a sample's function lives in, short: the repository-relative path, an npm package's file, the runtime's. */
function moduleOf(frame: CpuProfile["nodes"][number]["callFrame"]): string {
  const file = frame.url.startsWith(`file://${ROOT}`) ? frame.url.slice(`file://${ROOT}`.length) : frame.url;
  return file.replace(/^.*node_modules\//, "npm:") || "(native)";
}

const where = (frame: CpuProfile["nodes"][number]["callFrame"]): string =>
  `${frame.functionName || "(anonymous)"} ${moduleOf(frame)}:${frame.lineNumber + 1}`;

/** Self and inclusive shares per function; a function counts once per sample however deep it recurses. */
function summarise(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>(), inclusive = new Map<string, number>(), modules = new Map<string, number>();
  let total = 0, busy = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)!.callFrame;
    const leaf = where(frame);
    total += micros;
    self.set(leaf, (self.get(leaf) ?? 0) + micros);
    modules.set(moduleOf(frame), (modules.get(moduleOf(frame)) ?? 0) + micros);
    if (leaf.startsWith("(idle)")) return;
    busy += micros;
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const name = where(byId.get(node)!.callFrame);
      if (seen.has(name) || name.startsWith("(root)")) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
    }
  });
  const top = (shares: Map<string, number>, of: number) =>
    [...shares].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([name, micros]) => ({
      name,
      share: Math.round((micros / of) * 1000) / 1000,
    }));
  return {
    sampledSeconds: Math.round(total / 1e4) / 100,
    busyShare: Math.round((busy / total) * 1000) / 1000,
    /** Self time by module: a WebAssembly module is the embedded store's engine. */
    modules: top(modules, total),
    self: top(self, total),
    inclusiveOfBusy: top(inclusive, busy),
  };
}

async function profileSelfplay() {
  const tokensFile = `${dataDir}/profile-tokens.json`;
  const names = Array.from({ length: BOTS }, (_, i) => `profile-${i}`);
  const list = await createTokens({ dataDir, databaseUrl: values["database-url"] }, names, "bot", 100_000);
  Deno.writeTextFileSync(tokensFile, JSON.stringify(list));
  const port = freePort(), inspectorPort = freePort();
  const serve = ["serve", "--host", "127.0.0.1", "--port", port, "--data-dir", dataDir, "--fill-after", 0];
  if (values["database-url"]) serve.push("--database-url", values["database-url"]);
  const server = processes.spawn(
    Deno.execPath(),
    ["run", "--quiet", "--allow-all", `--inspect=127.0.0.1:${inspectorPort}`, "cli/main.ts", ...serve.map(String)],
    { cwd: ROOT, env: { DATABASE_URL: "" } },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, server);
  const { call } = await inspector(inspectorPort);
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: 200 });
  log(`${values.game}: ${BOTS} bots for ${WARMUP_SECONDS + SECONDS} s, profiling the last ${SECONDS}`);
  const load = processes.spawn(
    Deno.execPath(),
    [
      "run",
      "--quiet",
      "--allow-all",
      "bench/selfplay/load.ts",
      ...Object.entries({
        mode: "play",
        game: values.game!,
        url: `ws://127.0.0.1:${port}/bot`,
        "health-url": `${url}/health`,
        "server-pid": server.pid,
        tokens: tokensFile,
        connections: BOTS,
        seconds: SECONDS,
        warmup: WARMUP_SECONDS,
      }).flatMap(([k, v]) => [`--${k}`, String(v)]),
    ],
    { cwd: ROOT, captureStdout: true, env: { DATABASE_URL: "" } },
  );
  const figures = processes.output(load, "the load generator", (WARMUP_SECONDS + SECONDS + 120) * 1000);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_SECONDS * 1000));
  await call("Profiler.start");
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const { profile } = await call("Profiler.stop") as { profile: CpuProfile };
  if (values.out) Deno.writeTextFileSync(values.out, JSON.stringify(profile));
  const loadFigures = JSON.parse(await figures);
  await processes.stop(server);
  return {
    bench: "profile-selfplay",
    game: values.game,
    bots: BOTS,
    store: values["database-url"] ? "postgres" : "pglite",
    load: { actionsPerSecond: Math.round(loadFigures.operations / loadFigures.windowSeconds), ...loadFigures },
    ...summarise(profile),
  };
}

await report(
  profileSelfplay,
  () => processes.stopAll().then(() => Deno.removeSync(dataDir, { recursive: true })),
);
