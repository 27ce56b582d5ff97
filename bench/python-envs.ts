/**
 * What the Python package's environments (clients/python: ludus.envs) cost a decision, end to end: a Python process
 * steps the PettingZoo AEC env (Kuhn poker, every seat through the env), the Gymnasium env (Kuhn poker against the
 * built-in `random`) and the TextArena-shaped text env (the dilemma against `tit-for-tat`) against one in-process
 * Ludus server (test/support/server.ts: the real gateway and an embedded PGlite replay store). Each decision is a
 * round trip: the env sends the action and blocks until the server's next turn (or the match's end) reaches it
 * through the client's event-loop thread.
 *
 * The same-run baseline is a plain Python websocket loop: `websockets`' blocking client sending a turn-sized JSON
 * frame to a websocket echo server (bench/selfplay/echo-server.ts, `ws` on node:http under Deno, as the gateway) and
 * reading it back, one after another. `ratio` = env ms per decision ÷ echo ms per round trip: how many bare round
 * trips a decision costs, with the game step, the replay write, the frames' JSON and the env's thread hand-offs in it.
 * A second baseline is the same self-play Kuhn matches played by the package's async client with no env around it
 * (`create` with a "self" opponent): `vsAsyncClientPerMatch` is what the AEC env's blocking bridge adds to a match.
 * Every episode is a new private match, so a Kuhn decision carries half a match's creation and end.
 *
 *   deno task bench:python [--matches 300] [--echoes 3000]
 * Needs a Python with the package's `envs` extra ($LUDUS_PYTHON, else ./.venv/bin/python, as `.ci/run` makes it).
 * Prints one JSON object on stdout; progress goes to stderr.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { startTestServer } from "../test/support/server.ts";
import { report } from "./report.ts";
import { freePort, Processes, waitForHttp } from "./selfplay/processes.ts";
import { round3 } from "./selfplay/histogram.ts";

const { values } = parseArgs({
  options: { matches: { type: "string", default: "300" }, echoes: { type: "string", default: "3000" } },
});

function wholeFlag(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, got ${value}`);
  return n;
}

const MATCHES = wholeFlag("matches", values.matches, 1);
const ECHOES = wholeFlag("echoes", values.echoes, 1);
const ROOT = new URL("..", import.meta.url).pathname;
const PYTHON = Deno.env.get("LUDUS_PYTHON") ?? `${ROOT}.venv/bin/python`;
if (!existsSync(PYTHON)) throw new Error(`no Python at ${PYTHON}: set LUDUS_PYTHON, or run .ci/run to make .venv`);

/** Each part times its own loop after one warm-up episode, and prints its figures as one JSON line. */
const SCRIPT = `
import asyncio, json, sys, time
import numpy as np
from ludus import LudusClient, random_action
from websockets.sync.client import connect
from ludus.envs.gymnasium import LudusEnv
from ludus.envs.pettingzoo import LudusAECEnv
from ludus.envs.text import LudusTextEnv

url, token, echo_url, matches, echoes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rng = np.random.default_rng(0)

def timed(episode, n):
    episode(0)
    decisions, start = 0, time.perf_counter()
    for i in range(1, n + 1):
        decisions += episode(i)
    seconds = time.perf_counter() - start
    return {"matches": n, "decisions": decisions, "seconds": round(seconds, 3)}

aec = LudusAECEnv(url, token, "kuhn-poker", text=False)
def aec_episode(seed):
    aec.reset(seed=seed)
    decisions = 0
    for agent in aec.agent_iter():
        observation, reward, termination, truncation, info = aec.last()
        if termination or truncation:
            aec.step(None)
        else:
            aec.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            decisions += 1
    return decisions

gym = LudusEnv(url, token, "kuhn-poker", opponents={1: "strategy:random"})
def gym_episode(seed):
    observation, info = gym.reset(seed=seed)
    decisions, done = 0, False
    while not done:
        observation, reward, terminated, truncated, info = gym.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        decisions, done = decisions + 1, terminated or truncated
    return decisions

text = LudusTextEnv(url, token, "ipd", opponents={1: "strategy:tit-for-tat"})
def text_episode(seed):
    text.reset(seed=seed)
    decisions, done = 0, False
    while not done:
        player, observation = text.get_observation()
        done, info = text.step("cooperate" if decisions % 3 else "defect")
        decisions += 1
    text.close()
    return decisions

async def client_matches(n):
    # The same self-play matches as the AEC env's, through the async client with no env around it.
    async with LudusClient(url, token) as client:
        async def one(seed):
            private = await client.create("kuhn-poker", opponents={1: "self"}, seed=str(seed),
                                          policy=lambda observation, legal, turn: random_action(legal))
            return sum(result.steps for result in (await private.results())[:1])
        await one(0)
        decisions, start = 0, time.perf_counter()
        for i in range(1, n + 1):
            decisions += await one(i)
        return {"matches": n, "decisions": decisions, "seconds": round(time.perf_counter() - start, 3)}

figures = {
    "client": asyncio.run(client_matches(matches)),
    "aec": timed(aec_episode, matches),
    "gymnasium": timed(gym_episode, matches),
    "text": timed(text_episode, max(1, matches // 10)),
}
aec.close()
gym.close()

frame = json.dumps({"type": "turn", "match": "m" * 12, "seat": 0, "seq": 3, "legal": [{"kind": "choice"}],
                    "observation": {"card": "Q", "history": ["check"]}, "tensor": [0.0] * 11, "legalIds": [0, 1]})
with connect(echo_url) as ws:
    for _ in range(100):
        ws.send(frame); ws.recv()
    start = time.perf_counter()
    for _ in range(echoes):
        ws.send(frame); ws.recv()
    figures["echo"] = {"roundTrips": echoes, "seconds": round(time.perf_counter() - start, 3)}
print(json.dumps(figures))
`;

const processes = new Processes();
const server = await startTestServer();

interface Timed {
  matches: number;
  decisions: number;
  seconds: number;
}

await report(async () => {
  const port = freePort();
  const echo = processes.spawn(
    Deno.execPath(),
    ["run", "--quiet", "--allow-all", "bench/selfplay/echo-server.ts", "--port", String(port)],
    { cwd: ROOT },
  );
  await waitForHttp(`http://127.0.0.1:${port}`, echo);
  console.error(`python envs: ${MATCHES} Kuhn matches through each of aec and gymnasium, ${ECHOES} echoes`);
  const python = processes.spawn(
    PYTHON,
    ["-c", SCRIPT, server.wsUrl, await server.token("bench-python"), `ws://127.0.0.1:${port}`, MATCHES, ECHOES]
      .map(String),
    { cwd: ROOT, captureStdout: true, env: { PYTHONPATH: `${ROOT}clients/python` } },
  );
  const out = await processes.output(python, "the Python envs script", 600_000);
  const figures = JSON.parse(out.trim().split("\n").at(-1)!) as
    & Record<"client" | "aec" | "gymnasium" | "text", Timed>
    & {
      echo: { roundTrips: number; seconds: number };
    };
  const echoMs = (figures.echo.seconds * 1000) / figures.echo.roundTrips;
  const clientMsPerMatch = (figures.client.seconds * 1000) / figures.client.matches;
  const env = ({ matches, decisions, seconds }: Timed, againstClient = false) => ({
    matches,
    decisions,
    decisionsPerSecond: Math.round(decisions / seconds),
    msPerDecision: round3((seconds * 1000) / decisions),
    msPerMatch: round3((seconds * 1000) / matches),
    ratio: round3((seconds * 1000) / decisions / echoMs),
    ...(againstClient ? { vsAsyncClientPerMatch: round3((seconds * 1000) / matches / clientMsPerMatch) } : {}),
  });
  return {
    bench: "python-envs",
    python: PYTHON,
    baseline: {
      what: "websockets' blocking client, a turn-sized JSON frame to a ws echo server and back",
      roundTrips: figures.echo.roundTrips,
      msPerRoundTrip: round3(echoMs),
    },
    envs: {
      "async client (kuhn-poker, both seats, no env)": env(figures.client),
      "pettingzoo-aec (kuhn-poker, both seats)": env(figures.aec, true),
      "gymnasium (kuhn-poker vs random)": env(figures.gymnasium),
      "text (ipd vs tit-for-tat)": env(figures.text),
    },
  };
}, async () => {
  await processes.stopAll();
  await server.close();
});
