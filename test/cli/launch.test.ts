import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import process from "node:process";
import { ReplayStore } from "../../db/store.ts";
import { games as registry } from "../../games/registry.ts";
import WebSocket from "ws";
import { GATEWAY_PATH } from "../../protocol/frames.ts";
import { until } from "../support/until.ts";

/** The README's entry points, as a person runs them: through Node, the launcher and a Deno task. */

const root = new URL("../..", import.meta.url).pathname;
/** The embedded store, as on a fresh machine: CI's DATABASE_URL would point every server here at one shared database. */
const env = { ...process.env, DATABASE_URL: "" };

function launch(...args: string[]) {
  return started(spawn("node", ["cli/launch.mjs", ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  }));
}

function started(child: ReturnType<typeof spawn>) {
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const exited = once(child, "exit").then(([code, signal]) => ({ code, signal, out, err }));
  return { child, exited, stderr: () => err };
}

/** Resolves with the server's URL once it says it serves (the store opened). */
function serving(stderr: () => string): Promise<string> {
  return until("the server to start", () => {
    const url = /serving on (http:\/\/\S+)/.exec(stderr())?.[1];
    return url && stderr().includes("replay store:") ? url : undefined;
  }).catch((error) => {
    throw new Error(`${error.message}; it said:\n${stderr()}`);
  });
}

/** Resolves once nothing answers at `url` any more. */
function gone(url: string): Promise<boolean> {
  return until(`${url} to stop answering`, () => fetch(`${url}/health`).then((r) => void r.body?.cancel(), () => true));
}

/**
 * Resolves once the embedded store in `dataDir` opens again: the server closes its port first and the
 * store last, so a closed port alone does not mean the process has let go of the store.
 */
function released(dataDir: string): Promise<boolean> {
  return until(`the store in ${dataDir} to be let go`, async () => {
    try {
      await (await ReplayStore.open({ dataDir })).close();
      return true;
    } catch (error) {
      if (!/is in use by/.test(String(error))) throw error;
      return false;
    }
  });
}

describe("the launcher", () => {
  it("serves /health and /games through `ludus serve`, and stops cleanly on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ludus-launch-"));
    const run = launch("ludus", "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir);
    const url = await serving(run.stderr);
    const health = await (await fetch(`${url}/health`)).json();
    expect(health.status).toBe("ok");
    const games = await (await fetch(`${url}/games`)).json();
    expect(games.games).toHaveLength(registry.length);
    run.child.kill("SIGTERM");
    const { code, err } = await run.exited;
    // Deno's child_process reports the signal it sent even when the child exits 0, so the proof of
    // a clean stop is the server's own word and a closed port.
    expect(code ?? 0).toBe(0);
    expect(err).toMatch(/SIGTERM: stopping/);
    expect(err).toMatch(/ludus: stopped; 0 live matches are kept/);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // What a service manager or container runtime does to `npm start`: a signal to npm itself. It used to exit
  // npm and leave the server running orphaned, holding the port and the store.
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`stops the server when npm start gets ${signal}`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "ludus-npm-"));
      const npm = started(
        spawn("npm", ["start", "--", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
          cwd: root,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      const url = await serving(npm.stderr);
      process.kill(npm.child.pid!, signal);
      await npm.exited;
      await gone(url);
      await released(dataDir);
      expect(npm.stderr()).toMatch(new RegExp(`${signal}: stopping`));
      rmSync(dataDir, { recursive: true, force: true });
    });
  }

  it("stops the server when its launcher is killed outright", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ludus-orphan-"));
    const run = launch("ludus", "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir);
    const url = await serving(run.stderr);
    run.child.kill("SIGKILL");
    await run.exited;
    await gone(url);
    await released(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("holds the bot connections --max-connections allows, refuses the next with 503, and warns of a lower file limit", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ludus-cap-"));
    const serve = (max: number) =>
      launch(
        "ludus",
        "serve",
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--data-dir",
        dataDir,
        "--max-connections",
        `${max}`,
      );
    const capped = serve(2);
    const url = `${(await serving(capped.stderr)).replace(/^http/, "ws")}${GATEWAY_PATH}`;
    const open = () =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(url);
        socket.once("open", () => resolve(socket));
        socket.once("error", reject);
      });
    const held = [await open(), await open()];
    await expect(open()).rejects.toThrow(/503/);
    held.forEach((socket) => socket.close());
    capped.child.kill("SIGTERM");
    await capped.exited;
    expect(capped.stderr()).not.toMatch(/warning/);
    await released(dataDir);
    // More than the process may open files for: said at the start, with what to do.
    const files = Number(execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" })); // NaN when unlimited
    const beyond = serve(1_000_000);
    await serving(beyond.stderr);
    if (files < 1_000_000) {
      expect(beyond.stderr()).toMatch(
        new RegExp(`warning: this process may open ${files} files, too few for --max-connections 1000000.*ulimit -n`),
      );
    }
    beyond.child.kill("SIGTERM");
    await beyond.exited;
    await released(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("passes the CLI's exit codes through", async () => {
    const bad = await launch("ludus", "simulate", "--game", "nope", "--seats", "random").exited;
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`Allowed choices are ${registry.map((g) => g.id).join(", ")}.`);
    const ok = await launch(
      "ludus",
      "simulate",
      "--game",
      "ipd",
      "--seats",
      "always-defect",
      "--matches",
      "1",
      "--json",
    )
      .exited;
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).meanReturns).toEqual([10, 10]);
  });
});
