import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectPython, runPython } from "../support/python.ts";
import { startTestServer } from "../support/server.ts";
import { startRestartableServer } from "./restartable-server.ts";

/** The Python client (clients/python) against a real server, through its example Kuhn poker bot. */

const root = new URL("../..", import.meta.url).pathname;
const { python, ready, suite } = projectPython(["websockets", "msgpack"], "the Python client");

/** Runs the project's Python with `args` from the repository root and collects what it prints. */
const python3 = (...args: string[]) => runPython(python, args).done;

const kuhnBot = (...args: string[]) => python3("clients/python/examples/kuhn_bot.py", ...args);

/** A script's helper: the class, code and message of the LudusError `work` raises, or None. */
const REFUSAL = `
async def refusal(work):
    try:
        await work
    except LudusError as e:
        return [type(e).__name__, e.code, e.message]
    return None
`;

/** Plays two matches through the library, answering each decision first with an action no game has. */
const RETRY_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus import LudusClient, random_action

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
from ludus import Answer, LudusClient, Withdraw

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

/**
 * Plays every seat itself: a private Kuhn match with a "self" opponent, then two queued tickets that may meet
 * each other; prints each result with the seats each decision was asked for.
 */
const SELF_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus import LudusClient, random_action

asked = {}

def policy(observation, legal, turn):
    asked.setdefault(turn["match"], {})[turn["seq"]] = turn["seat"]
    return random_action(legal)

async def main():
    async with LudusClient(sys.argv[1], sys.argv[2]) as client:
        created = await client.create("kuhn-poker", config={"rounds": 3}, opponents={1: "self"}, policy=policy)
        own = await created.results()
        queued = await client.play("kuhn-poker", policy=policy, matches=2, self_play=True, concurrency=2)
    print(json.dumps({"seats": created.seats, "own": [vars(r) for r in own], "queued": [vars(r) for r in queued],
                      "asked": asked}))

asyncio.run(main())
`;

/**
 * Plays Leduc against a built-in with the numeric face, answering by id: an illegal id first (fold, when nothing is
 * owed), then the highest legal id; prints the face, what each turn carried and the server's refusal.
 */
const NUMERIC_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus import ActionId, LudusClient

turns, errors = [], []

def policy(observation, legal, turn):
    if "error" in turn:
        errors.append(turn["error"])
    turns.append({"tensor": len(turn["tensor"]), "legalIds": turn["legalIds"]})
    return ActionId(0) if len(turns) == 1 else ActionId(max(turn["legalIds"]))

async def main():
    starts = []
    async with LudusClient(sys.argv[1], sys.argv[2], numeric=True,
                           on_frame=lambda f: f["type"] == "match_start" and starts.append(f["numeric"])) as client:
        created = await client.create("leduc-poker", opponents={1: "strategy:random"}, seed="7", policy=policy)
        [result] = await created.results()
    print(json.dumps({"match": result.match, "numeric": starts, "turns": turns, "errors": errors}))

asyncio.run(main())
`;

/**
 * Plays a self-play match whose first decision waits for a line on stdin: the test restarts the server
 * meanwhile. One reconnect attempt only: the wait for a restarting server (1012) counts time, not attempts.
 */
const RESTART_SCRIPT = `
import asyncio, json, logging, sys
sys.path.insert(0, "clients/python")
from ludus import LudusClient, random_action

logging.basicConfig(level=logging.WARNING, format="restart: %(message)s")
held = []

async def policy(observation, legal, turn):
    if not held:
        held.append(turn["seq"])
        print("waiting", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    return random_action(legal)

async def main():
    async with LudusClient(sys.argv[1], sys.argv[2], reconnect_attempts=1, reconnect_delay=0.1) as client:
        created = await client.create("kuhn-poker", config={"rounds": 3}, opponents={"1": "self"}, policy=policy)
        results = await created.results()
    print(json.dumps([vars(r) for r in results]))

asyncio.run(main())
`;

/**
 * Declares who plays: the connection's agent for a match against a built-in; then per seat, two models at one table in
 * a seed group; then the refusals of a bad agent, in `auth` and in `create`.
 */
const AGENT_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus import LudusClient, LudusError

url, token = sys.argv[1], sys.argv[2]
agent = {"model": "qwen3-8b", "endpoint": "http://127.0.0.1:8000/v1", "sampling": {"temperature": 0.7, "max_tokens": 64}}

${REFUSAL}
async def main():
    async with LudusClient(url, token, agent=agent) as client:
        alone = await client.create("kuhn-poker", opponents={1: "strategy:random"})
        await alone.results()
        pair = await client.create("kuhn-poker", opponents={1: "self"}, group="g",
                                   agents={0: {"model": "model-a", "sampling": {"top_p": 0.9}}, 1: {"model": "model-b"}})
        await pair.results()
        bad_agents = await refusal(client.create("kuhn-poker", opponents={1: "self"}, agents={1: "model-b"}))
    bad_auth = await refusal(LudusClient(url, token, agent={"model": "m", "api_key": "sk-1"}).connect())
    print(json.dumps({"alone": alone.match, "pair": pair.match, "bad_agents": bad_agents, "bad_auth": bad_auth}))

asyncio.run(main())
`;

/**
 * Invites, each client on its own token: A creates a Kuhn match with an open seat and joins it itself (refused); B
 * takes the seat through argv[3] (the test's relay, which cuts B's first connection at its first turn); C joins the
 * full match, then an invite nobody issued; D (one match at most) holds a match and joins E's. A's first decision waits
 * until C was refused, so that the match is still live and full then.
 */
const JOIN_SCRIPT = `
import asyncio, json, sys
sys.path.insert(0, "clients/python")
from ludus import LudusClient, LudusError, random_action

url, relayed, tokens = sys.argv[1], sys.argv[2], sys.argv[3:]

${REFUSAL}
async def main():
    full_checked = asyncio.Event()

    async def first_waits(observation, legal, turn):
        await full_checked.wait()
        return random_action(legal)

    async with LudusClient(url, tokens[0]) as a, LudusClient(relayed, tokens[1], reconnect_delay=0.05) as b, \\
            LudusClient(url, tokens[2]) as c, LudusClient(url, tokens[3]) as d, LudusClient(url, tokens[4]) as e:
        created = await a.create("kuhn-poker", config={"rounds": 3}, opponents={1: "open"}, seed="11",
                                 policy=first_waits)
        own = await refusal(a.join(created.invite))
        joined = await b.join(created.invite)
        full = await refusal(c.join(created.invite))
        unknown = await refusal(c.join("no-such-invite"))
        full_checked.set()
        await d.create("kuhn-poker", opponents={1: "open"})
        other = await e.create("kuhn-poker", opponents={1: "open"})
        too_many = await refusal(d.join(other.invite))
        [mine] = await created.results()
        [theirs] = await joined.results()
    print(json.dumps({"created": [created.match, created.seats], "joined": [joined.match, joined.invite, joined.seats],
                      "results": [vars(mine), vars(theirs)], "own": own, "full": full, "unknown": unknown,
                      "too_many": too_many, "other": other.match}))

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

describe.skipIf(!ready)(suite, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;

  beforeAll(async () => {
    server = await startTestServer({ fillAfterMs: 50, fillStrategy: "random" });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const format of ["json", "msgpack"]) {
    it(`plays Kuhn poker against a filled seat in ${format}`, async () => {
      const token = await server.token(`kuhn-${format}`);
      const run = await kuhnBot("--url", server.wsUrl, "--token", token, "--matches", "3", "--format", format);
      expect(run.code, run.err).toBe(0);
      expect(run.out.match(MATCH_LINE), run.out).toHaveLength(3);
      expect(run.out).toMatch(/^3 matches, mean return [+-]\d+\.\d{3}$/m);
    });
  }

  it("reconnects and resumes a match when the socket drops mid-match", async () => {
    const relay = await flakyRelay(Number(new URL(server.url).port));
    try {
      const token = await server.token("kuhn-flaky");
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
    const run = await python3("-c", RETRY_SCRIPT, server.wsUrl, await server.token("kuhn-retry"));
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
    const run = await python3("-c", META_SCRIPT, server.wsUrl, await server.token("py-llm", "llm"));
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out);
    // Only the fill's built-in is left once the seat is withdrawn: the server ends the match there.
    expect(result.reason).toBe("aborted");
    expect(result.statuses[result.seat]).toBe("ERROR");
    const rows = (await server.server.store.steps(result.match)).filter((row) => row.seat === result.seat);
    expect(rows[0]).toMatchObject({
      action: { type: "cooperate" },
      meta: { response: "Answer: cooperate", usage: { prompt_tokens: 7, completion_tokens: 3 } },
    });
    expect(rows[1]).toMatchObject({
      action: null,
      error: { code: "withdrawn", message: "the model endpoint went away" },
    });
  });

  it("asks for the numeric face and answers with action ids", async () => {
    const run = await python3("-c", NUMERIC_SCRIPT, server.wsUrl, await server.token("py-numeric"));
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.numeric).toEqual([{ observationShape: [30], actionCount: 3, encoderVersion: 1 }]);
    expect(report.turns[0]).toEqual({ tensor: 30, legalIds: [1, 2] });
    expect(report.errors[0]).toMatchObject({ code: "illegal_action", message: expect.stringContaining("ids 1, 2") });
    const rows = (await server.server.store.steps(report.match)).filter((row) => row.seat === 0);
    // The first decision, answered by id 2 after the refused 0: a raise, with the id kept as its input.
    expect(rows[0]).toMatchObject({ action: { type: "raise" }, input: { actionId: 2 } });
  });

  it("records the agent the connection declares, each seat's own from `create`'s agents, and the group", async () => {
    const run = await python3("-c", AGENT_SCRIPT, server.wsUrl, await server.token("py-agents", "llm"));
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    const alone = await server.server.store.match(report.alone);
    expect(alone!.seats[0]).toMatchObject({
      name: "py-agents",
      model: "qwen3-8b",
      endpoint: "http://127.0.0.1:8000/v1",
      sampling: { temperature: 0.7, max_tokens: 64 },
    });
    expect(alone!.seats[1]).not.toHaveProperty("model"); // the built-in's seat is not the connection's
    expect(alone!.group).toBeNull();
    const pair = await server.server.store.match(report.pair);
    expect(pair!.group).toBe("g");
    expect(pair!.seats[0]).toMatchObject({ model: "model-a", sampling: { top_p: 0.9 } });
    expect(pair!.seats[0]).not.toHaveProperty("endpoint"); // a seat `agents` names does not keep the connection's
    expect(pair!.seats[1]).toMatchObject({ model: "model-b" });
    expect(pair!.seats[1]).not.toHaveProperty("sampling");
    expect(report.bad_agents.slice(0, 2)).toEqual(["LudusError", "bad_frame"]);
    expect(report.bad_agents[2]).toMatch(/`agents\.1`: an agent is an object of `model`, `endpoint` and `sampling`/);
    expect(report.bad_auth.slice(0, 2)).toEqual(["LudusAuthError", "bad_frame"]);
    expect(report.bad_auth[2]).toMatch(/`agent`: an agent is an object of `model`, `endpoint` and `sampling`/);
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

describe.skipIf(!ready)(`${suite}: several seats of its own`, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer(); // no fill: queued tickets can only meet each other
  });
  afterAll(async () => {
    await server?.close();
  });

  it('plays every seat of a match with a "self" opponent, and queued tickets that meet each other', async () => {
    const run = await python3("-c", SELF_SCRIPT, server.wsUrl, await server.token("py-self"));
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.seats).toEqual([0, 1]);
    for (const results of [report.own, report.queued]) {
      expect(results.map((r: { seat: number }) => r.seat).sort()).toEqual([0, 1]);
      expect(results[0].match).toBe(results[1].match);
      expect(results[0].returns).toEqual(results[1].returns);
      expect(results[0].reason).toBe("completed");
      // Each decision was asked of the seat that held it.
      for (const row of await server.server.store.steps(results[0].match)) {
        expect(report.asked[results[0].match][row.seq], `decision ${row.seq}`).toBe(row.seat);
        expect(row.defaulted).toBeNull();
      }
    }
  });
});

describe.skipIf(!ready)(`${suite}: joining by invite`, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it("takes an open seat by invite and plays it to the end through a dropped socket; refusals carry the server's code", async () => {
    const relay = await flakyRelay(Number(new URL(server.url).port));
    try {
      const tokens = [
        await server.token("py-host"),
        await server.token("py-guest"),
        await server.token("py-late"),
        await server.token("py-busy", "bot", 1),
        await server.token("py-other"),
      ];
      const run = await python3("-c", JOIN_SCRIPT, server.wsUrl, `ws://127.0.0.1:${relay.port}/bot`, ...tokens);
      expect(run.code, run.err).toBe(0);
      const report = JSON.parse(run.out);
      const [match, seats] = report.created;
      expect(seats).toEqual([0]);
      expect(report.joined).toEqual([match, expect.any(String), [1]]);
      // The guest's socket was cut at its first turn; it resumed and answered every decision itself.
      expect(relay.cuts()).toBe(1);
      expect(run.err).toMatch(/connection to \S+ lost .*; reconnecting/);
      const [mine, theirs] = report.results;
      expect([mine.match, mine.seat, mine.reason]).toEqual([match, 0, "completed"]);
      expect([theirs.match, theirs.seat, theirs.reason]).toEqual([match, 1, "completed"]);
      expect(theirs.returns).toEqual(mine.returns);
      expect(mine.returns[0] + mine.returns[1]).toBe(0);
      const record = await server.server.store.match(match);
      expect(record!.seats.map((s) => s?.name)).toEqual(["py-host", "py-guest"]);
      expect(record!.returns).toEqual(mine.returns);
      const steps = await server.server.store.steps(match);
      expect(steps.length).toBeGreaterThan(0);
      expect(steps.every((row) => row.defaulted === null)).toBe(true);

      expect(report.own.slice(0, 2)).toEqual(["LudusError", "already_seated"]);
      expect(report.own[2]).toContain(`this token already sits in seat 0 of match ${match}`);
      expect(report.full).toEqual(["LudusError", "match_full", `match ${match} has no open seat`]);
      expect(report.unknown).toEqual(["LudusError", "unknown_match", "no live match or invite `no-such-invite`"]);
      expect(report.too_many).toEqual([
        "LudusError",
        "too_many_matches",
        "this token may be in 1 matches or queues at once; it is in 1",
      ]);
      // The refused join took nothing: the other match's seat is still open.
      expect(server.server.matches.get(report.other)!.openSeats()).toEqual([1]);
    } finally {
      relay.close();
    }
  });
});

describe.skipIf(!ready)(`${suite}: through a server restart`, () => {
  it("reconnects after 1012 while the server is down, resumes both seats, and finishes the match", async () => {
    const table = await startRestartableServer();
    const child = spawn(python, ["-c", RESTART_SCRIPT, table.wsUrl, await table.token("py-restart")], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const exited = once(child, "exit");
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d) => {
          out += d;
          if (out.includes("waiting\n")) resolve();
        });
        void exited.then(() => reject(new Error(`the script ended before its first decision: ${err}`)));
      });
      const match = table.server.matches.all()[0].id;
      expect((await table.stop()).kept).toBe(1);
      await table.start();
      child.stdin.end("go\n");
      const [code] = await exited;
      expect(code, err).toBe(0);
      expect(err).toMatch(/connection to \S+ lost \(received 1012 \(service restart\) server restarting/);
      const results = JSON.parse(out.slice(out.indexOf("\n") + 1));
      expect(results.map((r: { match: string; seat: number; reason: string }) => [r.match, r.seat, r.reason]))
        .toEqual([[match, 0, "completed"], [match, 1, "completed"]]);
      const steps = await table.server.store.steps(match);
      expect(steps.every((row) => row.defaulted === null)).toBe(true);
    } finally {
      child.kill();
      await table.close();
    }
  });
});
