import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { games as registry } from "../../games/registry.ts";

/** The README's entry points, as a person runs them: through Node, the launcher and a Deno task. */

const root = new URL("../..", import.meta.url).pathname;

function launch(...args: string[]) {
  const child = spawn("node", ["cli/launch.mjs", ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = once(child, "exit").then(([code, signal]) => ({ code, signal, out, err }));
  return { child, exited, stderr: () => err };
}

describe("the launcher", () => {
  it("serves /health and /games through `ludus serve`, and stops cleanly on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ludus-launch-"));
    const run = launch("ludus", "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir);
    let url: string | undefined;
    for (let i = 0; i < 300 && !url; i++) {
      await new Promise((r) => setTimeout(r, 50));
      url = /serving on (http:\/\/\S+)/.exec(run.stderr())?.[1];
    }
    expect(url, run.stderr()).toBeDefined();
    const health = await (await fetch(`${url}/health`)).json();
    expect(health.status).toBe("ok");
    const games = await (await fetch(`${url}/games`)).json();
    expect(games.games).toHaveLength(registry.length);
    run.child.kill("SIGTERM");
    const { code, err } = await run.exited;
    // Deno's child_process reports the signal it sent even when the child exits 0, so the proof of
    // a clean stop is the server's own word and a closed port.
    expect(code ?? 0).toBe(0);
    expect(err).toMatch(/shutting down/);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
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
