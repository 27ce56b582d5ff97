import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure } from "../../games/core/config.ts";
import { games, numericInfo } from "../../games/registry.ts";
import { lastJsonLine, projectPython, ROOT, runPython } from "../support/python.ts";
import { startTestServer } from "../support/server.ts";

/**
 * The Python package's environments (clients/python/ludus/envs) against a real server: PettingZoo's and Gymnasium's
 * own API checkers, the TextArena-shaped text environment, and the 100-match example run from a pip install. Needs
 * the project's .venv (or $LUDUS_PYTHON) with numpy, gymnasium and pettingzoo; without them the suite says so and skips.
 */

const root = resolve(ROOT);
const { python, ready, suite } = projectPython(
  ["numpy", "gymnasium", "pettingzoo", "websockets"],
  "the Python environments",
);

/**
 * Runs `script` with the source package first on the path; argv: the gateway URL, the token, then `args`; with
 * `openStdin` its stdin stays open for the test to write.
 */
const runScript = (script: string, args: string[], openStdin = false) =>
  runPython(python, ["-c", script, ...args], {
    cwd: tmpdir(),
    env: { PYTHONPATH: join(root, "clients/python") },
    openStdin,
  });

const py = async (script: string, ...args: string[]) => {
  const run = await runScript(script, args).done;
  expect(run.code, run.err).toBe(0);
  return lastJsonLine(run.out);
};

const API_TESTS = `
import json, sys
from pettingzoo.test import api_test, parallel_api_test, render_test
from gymnasium.utils.env_checker import check_env
from ludus.envs.pettingzoo import LudusAECEnv, parallel_env
from ludus.envs.gymnasium import LudusEnv
from ludus.envs.sync import catalogue

url, token = sys.argv[1], sys.argv[2]
checked, refused = [], {}
for game in ("kuhn-poker", "ipd", "tic-tac-toe"):
    env = LudusAECEnv(url, token, game)
    api_test(env, num_cycles=50)
    checked.append(["aec", game, env.match.id])
    env.close()
render_test(lambda render_mode: LudusAECEnv(url, token, "kuhn-poker", render_mode=render_mode))
for game, variant in (("ipd", None), ("trust-and-split", "no-press")):
    env = parallel_env(url, token, game, variant=variant)
    parallel_api_test(env, num_cycles=50)
    checked.append(["parallel", game, env.aec_env.match.id])
    env.close()
for game, variant in (("kuhn-poker", None), ("trust-and-split", None)):
    try:
        parallel_env(url, token, game, variant=variant)
    except ValueError as e:
        refused[game] = str(e)
# Every game the Gymnasium env offers: those whose default variant has a numeric face.
for game in (info["id"] for info in catalogue(url) if "observationShape" in info["variants"][info["defaultVariant"]]):
    env = LudusEnv(url, token, game, text=True, render_mode="ansi")
    check_env(env)
    assert isinstance(env.render(), str) and env.render(), env.render()
    checked.append(["gym", game, env.match.id])
    env.close()
print(json.dumps({"checked": checked, "refused": refused}))
`;

/**
 * Hold'em episodes on 20 seeds against the random strategy, which folds the first hand before seat 0 acts on some
 * of them: what each reset returned, and again for the same seed.
 */
const HOLDEM_RESETS = `
import json, sys
import numpy as np
from ludus.envs.gymnasium import LudusEnv

url, token = sys.argv[1], sys.argv[2]
env = LudusEnv(url, token, "holdem")
report = []
for seed in range(20):
    observation, info = env.reset(seed=seed)
    entry = {"seed": seed, "match": env.match.id, "skipped": info.get("skipped", []),
             "valid": bool(env.observation_space.contains(observation)), "legal": int(info["action_mask"].sum())}
    again, info_again = env.reset(seed=seed)
    entry["same"] = bool(np.array_equal(observation, again)) and len(info_again.get("skipped", [])) == len(entry["skipped"])
    observation, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info_again["action_mask"])[0]))
    entry["stepped"] = bool(env.observation_space.contains(observation))
    report.append(entry)
env.close()
print(json.dumps(report))
`;

/** Two seeded episodes of each env, plus one with another seed: what each seat saw, and how the match ended. */
const DETERMINISM = `
import json, sys
import numpy as np
from ludus.envs.pettingzoo import LudusAECEnv
from ludus.envs.gymnasium import LudusEnv
from ludus.envs.text import LudusTextEnv

url, token = sys.argv[1], sys.argv[2]

def aec(env, seed):
    env.reset(seed=seed)
    seen = []
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        seen.append([agent, observation["observation"].tolist(), observation["action_mask"].tolist(), reward])
        # The lowest legal id: the same actions every time.
        env.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
    return seen

def gym(env, seed):
    observation, info = env.reset(seed=seed)
    seen, terminated = [observation.tolist()], False
    while not terminated:
        observation, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        seen.append([observation.tolist(), reward])
    return seen

def text(env, seed):
    env.reset(seed=seed)
    seen, done = [], False
    while not done:
        player, observation = env.get_observation()
        seen.append([player, observation])
        done, info = env.step(observation.split("Legal now: ")[-1].split(" | ")[0])
    rewards, info = env.close()
    return [seen, rewards]

aec_env = LudusAECEnv(url, token, "leduc-poker")
gym_env = LudusEnv(url, token, "kuhn-poker", opponents={1: "strategy:random"})
text_env = LudusTextEnv(url, token, "leduc-poker", opponents={1: "strategy:random"})
report = {name: [run(env, 11), run(env, 11), run(env, 12)]
          for name, run, env in (("aec", aec, aec_env), ("gym", gym, gym_env), ("text", text, text_env))}
aec_env.close()
gym_env.close()
print(json.dumps(report))
`;

/** Kuhn poker against a built-in: a refused action first, then legal ones; what the env said at each step. */
const TEXT_EPISODE = `
import json, sys
from ludus.envs.text import LudusTextEnv

url, token = sys.argv[1], sys.argv[2]
env = LudusTextEnv(url, token, "kuhn-poker", opponents={1: "strategy:random"})
env.reset(seed=5)
steps, done = [], False
while not done:
    player, observation = env.get_observation()
    action = "shout" if not steps else observation.split("Legal now: ")[-1].split(" | ")[-1]
    done, info = env.step(action)
    steps.append({"player": player, "observation": observation, "action": action, "done": done, "info": info})
rewards, game_info = env.close()
print(json.dumps({"steps": steps, "rewards": rewards, "game_info": game_info}))
`;

/** A simultaneous game through one text env: each seat's decision in turn, both recorded with the env's agent. */
const TEXT_SELF_PLAY = `
import json, sys
from ludus.envs.text import LudusTextEnv

url, token = sys.argv[1], sys.argv[2]
env = LudusTextEnv(url, token, "ipd", config={"rounds": 3}, agent={"model": "self-player", "sampling": {"seed": 1}},
                   group="ipd-self")
env.reset(seed=1)
players, done = [], False
while not done:
    player, observation = env.get_observation()
    players.append(player)
    done, info = env.step("defect" if player == 0 else "cooperate")
rewards, game_info = env.close()
print(json.dumps({"players": players, "rewards": rewards, "game_info": game_info}))
`;

/** Each way of failing to start, as the error the caller catches: type, code and message. */
const FAILURES = `
import json, sys
from ludus import LudusError
from ludus.envs.text import LudusTextEnv
from ludus.envs.pettingzoo import LudusAECEnv

url, token, nowhere = sys.argv[1], sys.argv[2], sys.argv[3]
cases = {
    "nowhere": lambda: LudusTextEnv(nowhere, token, "kuhn-poker").reset(),
    "bad_token": lambda: LudusTextEnv(url, "not-a-token", "kuhn-poker").reset(),
    "bad_token_aec": lambda: LudusAECEnv(url, "not-a-token", "kuhn-poker"),
    "unknown_game": lambda: LudusTextEnv(url, token, "chess"),
    "bad_strategy": lambda: LudusTextEnv(url, token, "kuhn-poker", opponents={1: "strategy:psychic"}).reset(),
}
report = {}
for name, start in cases.items():
    try:
        start()
        report[name] = None
    except LudusError as e:
        report[name] = [type(e).__name__, e.code, e.message]
print(json.dumps(report))
`;

/**
 * Waits for a line on stdin (the test stops the server meanwhile), then tries to play on. A stopping server closes
 * with 1012 (it restarts, keeping its matches), which the client waits out for \`restart_wait\` seconds: 1 here.
 */
const SERVER_GONE = `
import json, sys
from ludus import LudusError
from ludus.envs.text import LudusTextEnv

url, token = sys.argv[1], sys.argv[2]
env = LudusTextEnv(url, token, "kuhn-poker", opponents={1: "strategy:random"},
                   client_options={"restart_wait": 1, "reconnect_attempts": 2, "reconnect_delay": 0.1})
env.reset(seed=2)
player, observation = env.get_observation()
print("ready", flush=True)
sys.stdin.readline()
try:
    env.step(observation.split("Legal now: ")[-1].split(" | ")[0])
    env.get_observation()
    print(json.dumps({"raised": None}))
except LudusError as e:
    print(json.dumps({"raised": [type(e).__name__, e.code, e.message]}))
`;

/**
 * A Gymnasium episode whose seat 1 is "open": on_invite hands the invite to a remote bot, a LudusClient on another
 * token in its own thread, which joins and plays random legal actions; the env plays the lowest legal id.
 */
const OPEN_SEAT = `
import asyncio, json, sys, threading
import numpy as np
from ludus import LudusClient, random_action
from ludus.envs.gymnasium import LudusEnv

url, token, remote_token = sys.argv[1], sys.argv[2], sys.argv[3]
remote = {}

async def join(invite):
    async with LudusClient(url, remote_token) as client:
        joined = await client.join(invite, policy=lambda observation, legal, turn: random_action(legal))
        remote["seats"] = joined.seats
        [result] = await joined.results()
        remote["result"] = vars(result)

threads = []
def on_invite(invite):
    remote["invite"] = invite
    threads.append(threading.Thread(target=asyncio.run, args=(join(invite),)))
    threads[0].start()

env = LudusEnv(url, token, "kuhn-poker", opponents={1: "open"}, on_invite=on_invite)
observation, info = env.reset(seed=3)
rewards, terminated = [], False
while not terminated:
    observation, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    rewards.append(reward)
threads[0].join()
print(json.dumps({"match": env.match.id, "invite": env.match.invite, "rewards": rewards, "info": {
    k: info[k] for k in ("returns", "statuses", "reason")}, "remote": remote}))
env.close()
`;

describe.skipIf(!ready)(suite, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it("passes PettingZoo's api_test and parallel_api_test, and Gymnasium's check_env on every game it offers", async () => {
    const { checked, refused } = await py(API_TESTS, server.wsUrl, await server.token("py-api"));
    const numeric = games.filter((game) => "observationShape" in numericInfo(game, configure(game, {}).config));
    expect(numeric.map((game) => game.id)).toContain("holdem");
    expect(checked.map((c: string[]) => c.slice(0, 2))).toEqual([
      ["aec", "kuhn-poker"],
      ["aec", "ipd"],
      ["aec", "tic-tac-toe"],
      ["parallel", "ipd"],
      ["parallel", "trust-and-split"],
      ...numeric.map((game) => ["gym", game.id]),
    ]);
    // Each was a match on the server, played by the token in every seat the env held.
    for (const [kind, game, id] of checked) {
      const record = await server.server.store.match(id);
      expect(record, `${kind} ${game}`).toMatchObject({ game });
      const tokenSeats = record!.seats.filter((s) => s?.name === "py-api").length;
      expect(tokenSeats, `${kind} ${game}`).toBe(kind === "gym" ? 1 : record!.seats.length);
    }
    // A game that takes turns is refused by the parallel API, naming the variants it plays.
    const supported = "ipd (classic, lola), trust-and-split (no-press)";
    expect(refused["kuhn-poker"]).toBe(
      `parallel_env plays games whose every seat moves at once in every step: ${supported} on this server; ` +
        "kuhn-poker (standard) takes turns, so play it through LudusAECEnv",
    );
    expect(refused["trust-and-split"]).toContain("trust-and-split (rps) takes turns");
  });

  it("resets hold'em into a decision of the seat, playing on past matches the opponent ends first", async () => {
    const report = await py(HOLDEM_RESETS, server.wsUrl, await server.token("py-holdem"));
    expect(report).toHaveLength(20);
    const skipping = report.filter((entry: { skipped: string[] }) => entry.skipped.length > 0);
    expect(skipping.length).toBeGreaterThan(0);
    await server.server.store.writer.drain();
    for (const entry of report) {
      expect(entry, `seed ${entry.seed}`).toMatchObject({ valid: true, same: true, stepped: true });
      expect(entry.legal, `seed ${entry.seed}`).toBeGreaterThan(0);
    }
    for (const { seed, skipped, match } of skipping) {
      // Each skipped match ended before seat 0 was asked anything; the next is seeded on from the episode's seed.
      for (const [k, id] of skipped.entries()) {
        const record = await server.server.store.match(id);
        expect(record, id).toMatchObject({ game: "holdem", seed: k === 0 ? String(seed) : `${seed}/${k}` });
        expect(record!.endReason).toBe("completed");
        expect((await server.server.store.steps(id)).filter((row) => row.seat === 0)).toEqual([]);
      }
      const played = await server.server.store.match(match);
      expect(played!.seed).toBe(`${seed}/${skipped.length}`);
    }
  });

  it('plays an episode against a remote bot that takes the "open" seat with the invite on_invite hands it', async () => {
    const report = await py(
      OPEN_SEAT,
      server.wsUrl,
      await server.token("py-gym-host"),
      await server.token("py-gym-guest"),
    );
    expect(report.remote.invite).toBe(report.invite);
    expect(report.remote.seats).toEqual([1]);
    expect(report.rewards.slice(0, -1).every((r: number) => r === 0)).toBe(true);
    const record = await server.server.store.match(report.match);
    expect(record!.seats.map((s) => s?.name)).toEqual(["py-gym-host", "py-gym-guest"]);
    expect(record!.seed).toBe("3");
    // The last step's reward is seat 0's return, as the store and the remote bot have it.
    const returns = record!.returns!;
    expect(report.rewards.at(-1)).toBe(returns[0]);
    expect(report.info).toEqual({ returns, statuses: ["DONE", "DONE"], reason: "completed" });
    expect(report.remote.result).toMatchObject({ match: report.match, seat: 1, returns });
    expect(returns[0] + returns[1]).toBe(0);
  });

  it("gives the same observations for the same seed, and others for another", async () => {
    const report = await py(DETERMINISM, server.wsUrl, await server.token("py-seeds"));
    for (const name of ["aec", "gym", "text"]) {
      const [first, again, other] = report[name];
      expect(again, name).toEqual(first);
      expect(other, name).not.toEqual(first);
    }
    // The AEC env saw both seats; rewards came at the end and sum to zero (Leduc is zero-sum).
    const [aec] = report.aec;
    expect(new Set(aec.map((row: unknown[]) => row[0]))).toEqual(new Set(["player_0", "player_1"]));
    const finals = aec.slice(-2).map((row: unknown[]) => row[3] as number);
    expect(finals[0] + finals[1]).toBe(0);
  });

  it("plays a text episode against a built-in: the server's text, a refused action's error, rewards at close", async () => {
    const { steps, rewards, game_info } = await py(TEXT_EPISODE, server.wsUrl, await server.token("py-text"));
    const [refused, ...played] = steps;
    expect(refused.player).toBe(0);
    expect(refused.observation).toContain("You are player 0. The rules:\nKuhn poker for two players");
    expect(refused.observation).toMatch(/Your card is [JQK]/);
    expect(refused.observation).toMatch(/Legal now: check \| bet$/);
    expect(refused.done).toBe(false);
    expect(refused.info).toEqual({
      error: 'could not read an action in "shout". Legal now: check | bet.',
      code: "illegal_action",
      retries_left: 1,
    });
    // The same player acts again, told why.
    expect(played[0].player).toBe(0);
    expect(played[0].observation).toContain('Your last action was refused: could not read an action in "shout"');
    // Only what is new to the player, as in TextArena: the rules came with its first observation.
    expect(played[0].observation).not.toContain("The rules:");
    expect(played[0].info).toEqual({ action: { type: "bet" } });
    expect(steps.at(-1).done).toBe(true);
    const id = game_info[0].match;
    const record = await server.server.store.match(id);
    expect(record!.returns).toEqual([rewards[0], rewards[1]]);
    expect(rewards[0] + rewards[1]).toBe(0);
    expect(game_info[0]).toMatchObject({
      status: "DONE",
      reason: "completed",
      seed: "5",
      played_here: true,
      refused: 1,
    });
    expect(game_info[1]).toMatchObject({ status: "DONE", played_here: false, refused: 0 });
    // The replay has the bet the env sent, as the game read it, for seat 0.
    const rows = (await server.server.store.steps(id)).filter((row) => row.seat === 0);
    expect(rows[0].action).toEqual({ type: "bet" });
  });

  it("presents each seat's decision in turn in a simultaneous game played through one env", async () => {
    const { players, rewards, game_info } = await py(TEXT_SELF_PLAY, server.wsUrl, await server.token("py-ipd"));
    expect(players).toEqual([0, 1, 0, 1, 0, 1]);
    expect(rewards).toEqual({ 0: 15, 1: 0 }); // three rounds of the temptation against the sucker's payoff
    expect(game_info[1]).toMatchObject({ played_here: true, reason: "completed" });
    const record = await server.server.store.match(game_info[0].match);
    expect(record!.group).toBe("ipd-self");
    for (const seat of record!.seats) expect(seat).toMatchObject({ model: "self-player", sampling: { seed: 1 } });
  });

  it("raises with the server's message: nothing listening, a refused token, an unknown game, a bad strategy", async () => {
    const closed = createServer().listen(0, "127.0.0.1");
    await once(closed, "listening");
    const nowhere = `ws://127.0.0.1:${(closed.address() as { port: number }).port}/bot`;
    closed.close();
    await once(closed, "close");
    const report = await py(FAILURES, server.wsUrl, await server.token("py-fail"), nowhere);
    expect(report.nowhere[0]).toBe("LudusConnectionError");
    expect(report.nowhere[2]).toContain(`could not connect to ${nowhere}`);
    for (const name of ["bad_token", "bad_token_aec"]) {
      expect(report[name].slice(0, 2), name).toEqual(["LudusAuthError", "bad_token"]);
    }
    expect(report.unknown_game.slice(0, 2)).toEqual(["LudusError", "unknown_game"]);
    expect(report.unknown_game[2]).toMatch(/no game `chess`; games: .*kuhn-poker/);
    expect(report.bad_strategy.slice(0, 2)).toEqual(["LudusError", "bad_strategy"]);
    expect(report.bad_strategy[2]).toContain("psychic");
  });
});

describe.skipIf(!ready)(`${suite}: a server that goes away`, () => {
  it("raises instead of waiting when the server stops mid-episode", async () => {
    const table = await startTestServer();
    const run = runScript(SERVER_GONE, [table.wsUrl, await table.token("py-gone")], true);
    let closed = false;
    try {
      await new Promise<void>((ready, failed) => {
        run.child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && ready());
        void run.done.then((r) => failed(new Error(`the script ended early: ${r.err}`)));
      });
      await table.close();
      closed = true;
      run.child.stdin!.end("go\n");
      const { code, out, err } = await run.done;
      expect(code, err).toBe(0);
      const { raised } = lastJsonLine(out);
      expect(raised[0]).toBe("LudusConnectionError");
      expect(raised[2]).toContain(`could not connect to ${table.wsUrl}: the connection was lost and`);
      expect(raised[2]).toMatch(/\d+ reconnects failed over 1 s of the server's restart$/);
    } finally {
      run.child.kill();
      if (!closed) await table.close();
    }
  });
});

describe.skipIf(!ready)(`${suite}: the example, installed with pip`, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "ludus-pip-"));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("plays 100 Kuhn matches through the PettingZoo env from a pip install, all recorded", async () => {
    // A copy of the package, so that pip's build folder is the test's own.
    const source = join(dir, "source");
    for (const part of ["pyproject.toml", "README.md", "ludus"]) {
      cpSync(join(root, "clients/python", part), join(source, part), { recursive: true });
    }
    const target = join(dir, "site");
    const pip = spawnSync(python, [
      "-m",
      "pip",
      "install",
      "--quiet",
      "--no-deps",
      "--no-build-isolation",
      "--no-index",
      "--target",
      target,
      source,
    ], { encoding: "utf8" });
    expect(pip.status, pip.stderr).toBe(0);
    expect(existsSync(join(target, "ludus/envs/pettingzoo.py"))).toBe(true);
    // The envs extra brings what exporting a trained network to ONNX needs (torch.onnx.export: onnx, onnxscript).
    const metadata = readFileSync(join(target, "ludus_client-0.1.0.dist-info/METADATA"), "utf8");
    const envs = [...metadata.matchAll(/^Requires-Dist: ([\w-]+)[^;\n]*; extra == "envs"$/gm)].map((m) => m[1]);
    expect(envs).toEqual(["numpy", "gymnasium", "pettingzoo", "onnx", "onnxscript"]);
    const token = await server.token("py-kuhn-100");
    const example = join(root, "clients/python/examples/pettingzoo_kuhn.py");
    const { code, out, err } = await runPython(python, [example, server.wsUrl, token], {
      cwd: tmpdir(),
      env: { PYTHONPATH: target },
    }).done;
    expect(code, err).toBe(0);
    const summary = /^100 matches in [\d.]+ s \(\d+ matches\/s\); returns: player_0 ([+-]\d+), player_1 ([+-]\d+)$/m
      .exec(out);
    expect(summary, out).not.toBeNull();
    const ended = await server.server.store.endedMatches({ participant: "py-kuhn-100" }, 1000);
    expect(ended).toHaveLength(100);
    expect(new Set(ended.map((m) => m.seed))).toEqual(new Set(Array.from({ length: 100 }, (_, i) => String(i))));
    for (const match of ended) {
      expect(match).toMatchObject({ game: "kuhn-poker", endReason: "completed", statuses: ["DONE", "DONE"] });
    }
    const total = ended.reduce((sum, m) => sum + m.returns![0], 0);
    expect(Number(summary![1])).toBe(total);
    expect(Number(summary![2])).toBe(-total);
  });
});
