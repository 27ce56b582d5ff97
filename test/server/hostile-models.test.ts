import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Bot, type Policy, randomAction } from "../../clients/sdk/index.ts";
import { bigModel, externalDataModel, linearModel, loopModel, tileModel } from "../support/onnx-models.ts";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

/**
 * Models a contributor could upload to a league's `POST /policies`, each meant to stop the server, against a
 * real `ludus serve` process that keeps serving a canary (its /health answered quickly, bot matches played)
 * all along: refused at registration, or quarantined in play, the server responsive and stoppable throughout.
 */

const dir = mkdtempSync(join(tmpdir(), "ludus-hostile-"));
const KB = 1024;

/** The server's resident memory now and its peak since `resetPeak`, from /proc, in bytes. */
const memoryOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) * KB;
  return { rss: field("VmRSS"), peak: field("VmHWM") };
};
/** Sets the peak to the resident memory now (Linux's clear_refs "5"), so earlier spikes are not counted. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, "5");

/** Polls /health every 50 ms, keeping the slowest answer, until stopped. */
function canary(url: string) {
  let slowest = 0;
  let stopped = false;
  // A failed poll ends the polling and is thrown by `stop` (never left unhandled should a test end first).
  const running = (async () => {
    while (!stopped) {
      const started = performance.now();
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
      await response.body?.cancel();
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })().then(() => undefined, (error: unknown) => error);
  return {
    get slowest() {
      return slowest;
    },
    stop: async () => {
      stopped = true;
      const failure = await running;
      if (failure) throw failure;
      return slowest;
    },
  };
}

const random: Policy = (_observation, legal) => randomAction(legal);

describe("hostile ONNX models against a running server", () => {
  let server: ServerProcess | undefined;
  const bots: Bot[] = [];
  afterAll(async () => {
    await Promise.all(bots.map((b) => b.close().catch(() => {})));
    server?.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const admin = () => JSON.parse(readFileSync(join(dir, "server.json"), "utf8")).token as string;
  const post = (name: string, body: Uint8Array) =>
    fetch(`${server!.url}/policies?name=${name}&game=kuhn-poker`, {
      method: "POST",
      body: body as Uint8Array<ArrayBuffer>,
      headers: { authorization: `Bearer ${admin()}` },
    });
  let botsMade = 0;
  const botToken = async () => {
    const response = await fetch(`${server!.url}/tokens?name=canary-${++botsMade}&kind=bot`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin()}` },
    });
    return (await response.json()).token as string;
  };
  const stop = async () => {
    const started = performance.now();
    server!.child.kill("SIGTERM");
    const code = await server!.exited;
    return { code, ms: performance.now() - started };
  };

  it("refuses each hostile upload with its reason while a canary is served; stops on SIGTERM", async () => {
    server = await startServerProcess(["--data-dir", dir, "--policy-batch-ms", "3000", "--policy-memory-mb", "1024"]);
    const health = canary(server.url);
    const bot = await Bot.connect({ url: server.wsUrl, token: await botToken() });
    bots.push(bot);
    let played = 0;
    let canaryRunning = true;
    const matches = (async () => {
      while (canaryRunning) {
        const { result } = await bot.create({
          game: "kuhn-poker",
          opponents: { 1: "strategy:random" },
          policy: random,
        });
        expect((await result).reason).toBe("completed");
        played++;
      }
    })();
    const refusals: [string, Uint8Array, RegExp][] = [
      ["external", externalDataModel(11, 2, "data/server.json"), /external data/],
      ["nan", linearModel(11, 2, new Array(22).fill(0), [Number.NaN, 0]), /non-finite logit \(NaN\)/],
      ["inf", linearModel(11, 2, new Array(22).fill(0), [0, Number.POSITIVE_INFINITY]), /non-finite logit/],
      // 2 ** 62 iterations: it would never end.
      ["endless", loopModel(11, 2, 2n ** 62n), /trial run failed: .*took longer than its budget of 3000 ms/],
      // 100 million floats a row: 400 MB for each of the trial batch's 4 observations, past the 1 GiB budget.
      ["tile", tileModel(11, 2, 9_090_910), /trial run failed: .*memory budget of 1024 MiB/],
    ];
    for (const [name, model, message] of refusals) {
      const before = played;
      const response = await post(name, model);
      const body = await response.json();
      expect([response.status, body.error?.code], `${name}: ${JSON.stringify(body)}`).toEqual([400, "bad_policy"]);
      expect(body.error.message, name).toMatch(message);
      // The canary's matches went on while the model was tried.
      await until(`a canary match after ${name}`, () => played > before);
    }
    canaryRunning = false;
    await matches;
    expect(played).toBeGreaterThan(refusals.length);
    // Every hostile model ran in a process of its own: the server answered /health quickly throughout.
    expect(await health.stop()).toBeLessThan(2000);
    // A valid 16 MB model registers without the server's memory growing past a few times its size (PGlite's own
    // bytea encoding took a string per byte: GBs of heap for 110 MB, and the process died of it).
    resetPeak(server.child.pid!);
    const { rss } = memoryOf(server.child.pid!);
    const big = await post("big", bigModel(11, 2, 16_000_000));
    expect(big.status).toBe(201);
    const grown = memoryOf(server.child.pid!).peak - rss;
    expect(grown).toBeLessThan(400 * KB * KB);
    const { policies } = await (await fetch(`${server.url}/policies`)).json();
    expect(policies.map((p: { name: string }) => p.name)).toEqual(["big"]);
    const stopped = await stop();
    expect([0, "SIGTERM"]).toContain(stopped.code);
    expect(stopped.ms).toBeLessThan(15_000);
  });

  it("quarantines a policy that goes over budget in play: its restored match ends in error, it can be removed", async () => {
    // The first test's server, should it have failed before stopping it.
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    // Registered under a generous budget: each batch takes a few hundred ms (a Loop of 300 000 trips).
    server = await startServerProcess(["--data-dir", dir, "--policy-batch-ms", "5000"]);
    expect((await post("heavy", loopModel(11, 2, 300_000n))).status).toBe(201);
    const bot = await Bot.connect({ url: server.wsUrl, token: await botToken() });
    bots.push(bot);
    // The policy moves first; the bot never answers, so the match is unfinished when the server stops.
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const never: Policy = () => (asked(), new Promise(() => {}));
    const { match } = await bot.create({
      game: "kuhn-poker",
      seat: 1,
      opponents: { 0: "policy:heavy" },
      policy: never,
    });
    await waiting;
    await bot.close();
    expect([0, "SIGTERM"]).toContain((await stop()).code);

    // Restarted (nothing freezes) with a budget the policy cannot keep: the next match that asks it quarantines it.
    server = await startServerProcess(["--data-dir", dir, "--policy-batch-ms", "50"]);
    const health = canary(server.url);
    const player = await Bot.connect({ url: server.wsUrl, token: await botToken() });
    bots.push(player);
    const live = await player.create({ game: "kuhn-poker", seat: 1, opponents: { 0: "policy:heavy" }, policy: random });
    await live.result.catch(() => {});
    const ended = await until("the match ended", async () => {
      const { match: record } = await (await fetch(`${server!.url}/matches/${live.match}`)).json();
      return record.endedAt ? record : undefined;
    });
    expect(ended.endReason).toBe("error");
    expect(ended.error).toMatch(/policy:heavy@1.*took longer than its budget of 50 ms/);
    expect(server.stderr()).toContain("policy:heavy@1 quarantined");
    // The match restored from before the restart, which seats it too, ended in error with it: it never froze anything.
    const { match: restored } = await (await fetch(`${server.url}/matches/${match}`)).json();
    expect(restored).toMatchObject({ endReason: "error", error: expect.stringMatching(/policy quarantined/) });
    // No new match seats it.
    const again = await Bot.connect({ url: server.wsUrl, token: await botToken() });
    bots.push(again);
    await expect(again.create({ game: "kuhn-poker", seat: 1, opponents: { 0: "policy:heavy" }, policy: random }))
      .rejects
      .toThrow(/quarantined/);
    // The operator removes it.
    const removed = await fetch(`${server.url}/policies/heavy`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${admin()}` },
    });
    expect(removed.status).toBe(200);
    expect(await health.stop()).toBeLessThan(2000);
    expect([0, "SIGTERM"]).toContain((await stop()).code);
  });
});
