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

function kuhnBot(...args: string[]) {
  const child = spawn(python, ["clients/python/examples/kuhn_bot.py", ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return once(child, "exit").then(([code]) => ({ code: code as number | null, out, err }));
}

const MATCH_LINE = /^match \S+ seat [01] return [+-]?\d+ \(completed, \d+ steps\)$/gm;

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
    upstream.on("data", (chunk: Buffer) => {
      if (cuts === 0 && chunk.includes('"type":"turn"')) {
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
