import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer } from "../support/server.ts";

/** The Python client (clients/python) against a real server, through its example Kuhn poker bot. */

const root = new URL("../..", import.meta.url).pathname;
const python = "/usr/bin/python3";
const canImport = (module: string) => spawnSync(python, ["-c", `import ${module}`]).status === 0;
const hasWebsockets = canImport("websockets");
const hasMsgpack = canImport("msgpack");
const suite = hasWebsockets ? "the Python client" : `the Python client (skipped: ${python} cannot import websockets)`;

/** Runs /usr/bin/python3 with `args` from the repository root and collects what it prints. */
function runPython(...args: string[]) {
  const child = spawn(python, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return once(child, "exit").then(([code]) => ({ code: code as number | null, out, err }));
}

const kuhnBot = (...args: string[]) => runPython("clients/python/examples/kuhn_bot.py", ...args);

/** Plays two matches through the library, answering each decision first with an action no game has. */
const RETRY_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus_client import LudusClient, random_action

errors = []

def policy(observation, legal, turn):
    if "error" in turn:
        errors.append(turn["error"])
        return random_action(legal)
    return {"type": "shout"}

async def main():
    async with LudusClient(sys.argv[1], sys.argv[2]) as client:
        results = await client.play("kuhn-poker", policy=policy, matches=2)
    print(json.dumps({"results": [vars(r) for r in results], "errors": errors}))

asyncio.run(main())
`;

/** Plays the dilemma with replay fields on its first decision, then withdraws the seat on the second. */
const META_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus_client import Answer, LudusClient, Withdraw

def policy(observation, legal, turn):
    if observation["round"] == 1:
        return Answer("cooperate", {"prompt": [{"role": "user", "content": "round 1"}], "response": "Answer: cooperate",
                                            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}})
    return Withdraw("the model endpoint went away")

async def main():
    async with LudusClient(sys.argv[1], sys.argv[2]) as client:
        [result] = await client.play("ipd", policy=policy)
    print(json.dumps(vars(result)))

asyncio.run(main())
`;

const MATCH_LINE = /^match \S+ seat [01] return [+-]?\d+ \(completed, \d+ steps\)$/gm;

const TURN = '"type":"turn"';

/**
 * A TCP relay in front of the server that cuts the first connection as soon as the server sends it
 * a `turn` frame: the bot loses its socket mid-match, as on a flaky network.
 */
async function flakyRelay(port: number): Promise<{ port: number; cuts: () => number; close: () => void }> {
  let cuts = 0;
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    sockets.add(client).add(upstream);
    client.on("data", (chunk) => upstream.write(chunk));
    let tail = ""; // the end of the previous chunk, in case the marker straddles two
    upstream.on("data", (chunk: Buffer) => {
      const seen = tail + chunk.toString("latin1");
      tail = seen.slice(-TURN.length);
      if (cuts === 0 && seen.includes(TURN)) {
        cuts++;
        client.destroy();
        upstream.destroy();
      } else client.write(chunk);
    });
    for (const [a, b] of [[client, upstream], [upstream, client]]) {
      a.on("close", () => b.destroy());
      a.on("error", () => b.destroy());
    }
  });
  relay.listen(0, "127.0.0.1");
  await once(relay, "listening");
  return {
    port: (relay.address() as { port: number }).port,
    cuts: () => cuts,
    close: () => {
      for (const socket of sockets) socket.destroy();
      relay.close();
    },
  };
}

describe.skipIf(!hasWebsockets)(suite, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;

  beforeAll(async () => {
    server = await startTestServer({ fillAfterMs: 50, fillStrategy: "random" });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const format of ["json", "msgpack"]) {
    const skip = format === "msgpack" && !hasMsgpack;
    it.skipIf(skip)(`plays Kuhn poker against a filled seat in ${format}${skip ? " (no msgpack)" : ""}`, async () => {
      const token = server.token(`kuhn-${format}`);
      const run = await kuhnBot("--url", server.wsUrl, "--token", token, "--matches", "3", "--format", format);
      expect(run.code, run.err).toBe(0);
      expect(run.out.match(MATCH_LINE), run.out).toHaveLength(3);
      expect(run.out).toMatch(/^3 matches, mean return [+-]\d+\.\d{3}$/m);
    });
  }

  it("reconnects and resumes a match when the socket drops mid-match", async () => {
    const relay = await flakyRelay(Number(new URL(server.url).port));
    try {
      const token = server.token("kuhn-flaky");
      const run = await kuhnBot("--url", `ws://127.0.0.1:${relay.port}/bot`, "--token", token, "--matches", "2");
      expect(run.code, run.err).toBe(0);
      expect(relay.cuts()).toBe(1);
      expect(run.err).toMatch(/connection to \S+ lost .*; reconnecting/);
      expect(run.out.match(MATCH_LINE), run.out).toHaveLength(2);
    } finally {
      relay.close();
    }
  });

  it("asks the policy again, with the server's error, after an illegal action", async () => {
    const run = await runPython("-c", RETRY_SCRIPT, server.wsUrl, server.token("kuhn-retry"));
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.results).toHaveLength(2);
    for (const result of report.results) {
      expect(result.returns[0] + result.returns[1]).toBe(0);
      expect(result.statuses).toEqual(["DONE", "DONE"]);
    }
    expect(report.errors.length).toBeGreaterThanOrEqual(2);
    expect(report.errors[0]).toMatchObject({ code: "illegal_action", retriesLeft: 1 });
    expect(report.errors[0].message).toContain("Legal now:");
  });

  it("attaches replay fields with Answer, and gives up the seat with Withdraw", async () => {
    const run = await runPython("-c", META_SCRIPT, server.wsUrl, server.token("py-llm", "llm"));
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out);
    expect(result.reason).toBe("completed");
    expect(result.statuses[result.seat]).toBe("ERROR");
    const rows = (await server.server.store.steps(result.match)).filter((row) => row.seat === result.seat);
    expect(rows[0]).toMatchObject({
      action: { type: "cooperate" },
      meta: { response: "Answer: cooperate", usage: { prompt_tokens: 7, completion_tokens: 3 } },
    });
    expect(rows[1]).toMatchObject({
      defaulted: "withdrawn",
      error: { code: "withdrawn", message: "the model endpoint went away" },
    });
  });

  it("exits 1 naming the server when the token is refused", async () => {
    const run = await kuhnBot("--url", server.wsUrl, "--token", "not-a-token", "--matches", "1");
    expect(run.code).toBe(1);
    expect(run.err).toContain(`the server at ${server.wsUrl} refused the token`);
    expect(run.err).toContain("(bad_token)");
    expect(run.out).toBe("");
  });

  it("exits 1 naming the URL when nothing listens there", async () => {
    const closed = createServer().listen(0, "127.0.0.1");
    await once(closed, "listening");
    const url = `ws://127.0.0.1:${(closed.address() as { port: number }).port}/bot`;
    closed.close();
    await once(closed, "close");
    const run = await kuhnBot("--url", url, "--token", "t", "--matches", "1");
    expect(run.code).toBe(1);
    expect(run.err).toContain(`could not connect to ${url}`);
  });

  it("exits 2 on bad usage", async () => {
    const run = await kuhnBot("--url", "http://127.0.0.1/bot", "--token", "t");
    expect(run.code).toBe(2);
    expect(run.err).toContain("--url must be a ws:// or wss:// URL");
  });
});
