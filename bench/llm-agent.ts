/**
 * What the LLM agent (clients/llm) and the bot gateway add around a model. One in-process Ludus server
 * (test/support/server.ts: the real gateway and an embedded PGlite replay store) and a local endpoint
 * speaking the chat-completions wire format (test/support/openai-server.ts) that answers every request at
 * once with a legal action. `runLlm` plays private matches of the IPD (`--ipd-matches`, ten decisions each)
 * and Kuhn poker (`--kuhn-matches`, one or two each) against the built-in `random` strategy, at each
 * `--concurrency` (matches at once; the agent's `maxInFlight` is set to the same number so its request gate
 * is not what limits it). Figures per game and concurrency: decisions/s, matches/s, and the wall time per
 * decision in ms (wall time ÷ the LLM seat's decisions in the store).
 *
 * The same-run baseline is the bare cost of a model call: as many chat-completions requests as the agent
 * made, sent straight to the same endpoint with `fetch` (the body the agent sent first in that run, so
 * the same prompt size), one after another or `concurrency` at a time, each reply read as JSON.
 * `ratio` = agent ms per decision ÷ raw ms per request; `addedMsPerDecision` is their difference. Server,
 * endpoint and agent share this process's event loop, so both sides pay for the endpoint alike, and the
 * agent's side includes what the server does for a decision (game step, replay write, frames).
 *
 * A second same-run baseline separates the agent from the server: the same matches played by a plain SDK
 * bot (clients/sdk, a uniformly random legal action, no model). `agentOwnMsPerDecision` = agent ms per
 * decision − bot ms per decision − raw ms per request: what prompting, reading the reply and the replay
 * fields cost on their own.
 *
 * Also the size of the `meta` the agent attaches to each decision (prompt, reply, usage, attempts), as
 * the replay store keeps it: bytes of its JSON, mean and max over the measured matches.
 *
 *   deno task bench:llm [--ipd-matches 150] [--kuhn-matches 600] [--concurrency 1,8] [--warmup 4]
 * Prints one JSON object on stdout; progress goes to stderr.
 */
import { parseArgs } from "node:util";
import { runLlm } from "../clients/llm/index.ts";
import { cliWebSocket } from "../cli/commands/bot.ts";
import { Bot, randomAction } from "../clients/sdk/index.ts";
import type { StepRecordRow } from "../db/records.ts";
import { type ChatRequestBody, legalAnswer, startFakeOpenAI } from "../test/support/openai-server.ts";
import { startTestServer } from "../test/support/server.ts";
import { round3 } from "./selfplay/histogram.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    "ipd-matches": { type: "string", default: "150" },
    "kuhn-matches": { type: "string", default: "600" },
    concurrency: { type: "string", default: "1,8" },
    warmup: { type: "string", default: "4" },
  },
});

function wholeFlag(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, got ${value}`);
  return n;
}

const CONCURRENCY = values.concurrency.split(",").map((c) => wholeFlag("concurrency", c.trim(), 1));
const WARMUP = wholeFlag("warmup", values.warmup, 0);
const GAMES = [
  { game: "ipd", matches: wholeFlag("ipd-matches", values["ipd-matches"], 1) },
  { game: "kuhn-poker", matches: wholeFlag("kuhn-matches", values["kuhn-matches"], 1) },
];
const MODEL = "ludus-bench-model";
const SEAT = 0; // runLlm seats the agent at seat 0 of the private matches it creates

const log = (line: string) => console.error(`llm-agent: ${line}`);

const server = await startTestServer();
const fake = await startFakeOpenAI({
  script: (request, index) => ({ content: legalAnswer(request, (n) => index % n) }),
});
const token = await server.token("llm-bench", "llm", Math.max(...CONCURRENCY));
const endpoint = `${fake.baseUrl}/chat/completions`;

interface AgentRun {
  readonly seconds: number;
  /** The agent's decisions, as the store keeps them. */
  readonly rows: StepRecordRow[];
  readonly requests: number;
  /** The first request the endpoint got in this run: the baseline's body. */
  readonly firstRequest: ChatRequestBody;
  readonly reasks: number;
  readonly fallbacks: number;
}

async function playAgent(game: string, matches: number, concurrency: number): Promise<AgentRun> {
  const first = fake.requests.length;
  let stats = { requests: 0, reasks: 0, fallbacks: 0 };
  const started = performance.now();
  const { ends, failure } = await runLlm({
    url: server.wsUrl,
    token,
    game,
    matches,
    concurrency,
    opponent: "random",
    seat: 0, // the benchmark reads seat 0's rows
    agent: { chat: { baseUrl: fake.baseUrl, model: MODEL }, maxInFlight: concurrency },
    WebSocket: cliWebSocket, // as `ludus llm` connects
    onAgent: (agent) => stats = agent.stats,
  });
  const seconds = (performance.now() - started) / 1000;
  if (failure) throw new Error(`${game}: the agent failed: ${failure.message}`);
  if (ends.length !== matches) throw new Error(`${game}: ${ends.length} of ${matches} matches ended`);
  const byMatch = await server.server.store.stepsOf(ends.map((end) => end.match));
  const rows = [...byMatch.values()].flat().filter((row) => row.seat === SEAT);
  return {
    seconds,
    rows,
    requests: stats.requests,
    firstRequest: fake.requests[first],
    reasks: stats.reasks,
    fallbacks: stats.fallbacks,
  };
}

/** The same matches played by a plain SDK bot choosing at random: what the server costs a decision. */
async function playBot(
  game: string,
  matches: number,
  concurrency: number,
): Promise<{ seconds: number; decisions: number }> {
  const bot = await Bot.connect({ url: server.wsUrl, token, text: true });
  const played: string[] = [];
  let started = 0;
  const lane = async () => {
    while (started < matches) {
      started++;
      const created = await bot.create({
        game,
        seat: SEAT,
        opponents: { [String(1 - SEAT)]: "strategy:random" },
        policy: (_observation, legal) => randomAction(legal),
      });
      played.push((await created.result).match);
    }
  };
  const begun = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, matches) }, lane));
  const seconds = (performance.now() - begun) / 1000;
  await bot.close();
  const byMatch = await server.server.store.stepsOf(played);
  return { seconds, decisions: [...byMatch.values()].flat().filter((row) => row.seat === SEAT).length };
}

/** `requests` chat-completions requests with `body`, `concurrency` at a time; returns the seconds taken. */
async function rawRequests(body: ChatRequestBody, requests: number, concurrency: number): Promise<number> {
  let sent = 0;
  const lane = async () => {
    while (sent < requests) {
      sent++;
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${endpoint} answered HTTP ${response.status}`);
      await response.json();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, requests) }, lane));
  return (performance.now() - started) / 1000;
}

const metaBytes = (row: StepRecordRow) => new TextEncoder().encode(JSON.stringify(row.meta)).length;

async function bench() {
  const results = [];
  for (const { game, matches } of GAMES) {
    if (WARMUP > 0) {
      log(`${game}: warming up, ${WARMUP} matches`);
      const warm = await playAgent(game, WARMUP, Math.min(WARMUP, Math.max(...CONCURRENCY)));
      await rawRequests(warm.firstRequest, warm.requests, 1);
    }
    const runs = [];
    const sizes: number[] = [];
    for (const concurrency of CONCURRENCY) {
      const agent = await playAgent(game, matches, concurrency);
      const decisions = agent.rows.length;
      sizes.push(...agent.rows.map(metaBytes));
      const rawSeconds = await rawRequests(agent.firstRequest, agent.requests, concurrency);
      const msPerDecision = (agent.seconds * 1000) / decisions;
      const msPerRequest = (rawSeconds * 1000) / agent.requests;
      const plain = await playBot(game, matches, concurrency);
      const botMsPerDecision = (plain.seconds * 1000) / plain.decisions;
      log(
        `${game} ×${concurrency}: ${decisions} decisions in ${agent.seconds.toFixed(2)} s ` +
          `(${msPerDecision.toFixed(3)} ms each); raw requests ${msPerRequest.toFixed(3)} ms each; ` +
          `a plain bot ${botMsPerDecision.toFixed(3)} ms a decision`,
      );
      runs.push({
        concurrency,
        matches,
        decisions,
        seconds: round3(agent.seconds),
        decisionsPerSecond: Math.round(decisions / agent.seconds),
        matchesPerSecond: round3(matches / agent.seconds),
        msPerDecision: round3(msPerDecision),
        requestsPerDecision: round3(agent.requests / decisions),
        reasks: agent.reasks,
        fallbacks: agent.fallbacks,
        raw: {
          requests: agent.requests,
          requestBytes: new TextEncoder().encode(JSON.stringify(agent.firstRequest)).length,
          seconds: round3(rawSeconds),
          requestsPerSecond: Math.round(agent.requests / rawSeconds),
          msPerRequest: round3(msPerRequest),
        },
        bot: { decisions: plain.decisions, seconds: round3(plain.seconds), msPerDecision: round3(botMsPerDecision) },
        ratio: round3(msPerDecision / msPerRequest),
        addedMsPerDecision: round3(msPerDecision - msPerRequest),
        agentOwnMsPerDecision: round3(msPerDecision - botMsPerDecision - msPerRequest),
      });
    }
    results.push({
      game,
      runs,
      metaBytes: {
        decisions: sizes.length,
        mean: Math.round(sizes.reduce((sum, n) => sum + n, 0) / sizes.length),
        max: Math.max(...sizes),
      },
    });
  }
  return {
    bench: "llm-agent",
    matches: Object.fromEntries(GAMES.map(({ game, matches }) => [game, matches])),
    concurrency: CONCURRENCY,
    warmupMatches: WARMUP,
    opponent: "random",
    deno: Deno.version.deno,
    cores: navigator.hardwareConcurrency,
    store: server.server.store.backend,
    results,
  };
}

await report(bench, () => Promise.all([fake.close(), server.close()]).then(() => {}));
// Connections the server's websocket layer or fetch keep alive can hold the process open after closing.
Deno.exit(0);
