import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ludus } from "../support/cli.ts";
import { strategyAsNetwork } from "../support/policy-models.ts";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";

/**
 * docs/train-on-ludus.md's block (register a network, measure it, rate it), run as printed while `ludus serve` holds
 * the data directory's embedded store: the commands that seat a policy reach it through that server. Each command
 * names the server's `--data-dir` (the block's commands use the default, `data`, where the server runs).
 */

const dir = mkdtempSync(join(tmpdir(), "ludus-policy-server-"));
const dataDir = join(dir, "data");

describe("policy players while a server holds the store", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    writeFileSync(join(dir, "my-agent.onnx"), strategyAsNetwork("kuhn-poker", "nash"));
    server = await startServerProcess(["--data-dir", dataDir]);
  });
  afterAll(async () => {
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const result = await ludus(...argv, "--data-dir", dataDir);
    expect(result.code, `${argv.join(" ")}: ${result.err}`).toBe(0);
    return result;
  };

  it("registers, measures, simulates and rates a policy as the docs print it, through the running server", async () => {
    await run("policy", "add", join(dir, "my-agent.onnx"), "--game", "kuhn-poker", "--name", "my-agent");
    const exact = await run("exploitability", "--game", "kuhn-poker", "--policy", "policy:my-agent");
    expect(exact.out).toMatch(/^policy:my-agent@1 in kuhn-poker \(standard\), both seats: exploitability 0(\.0+\d*)? /);
    const simulated = await run(
      "simulate",
      "--game",
      "kuhn-poker",
      "--seats",
      "policy:my-agent,nash",
      "--matches",
      "1000",
    );
    expect(simulated.out).toContain("policy:my-agent@1");
    const rated = await run(
      "tournament",
      "--game",
      "kuhn-poker",
      "--players",
      "policy:my-agent,nash,random",
      "--matches",
      "400",
    );
    expect(rated.err).toContain(`is being played on ${new URL(server.url).origin}`);
    expect(rated.out).toMatch(/1200 of 1200 matches counted/);
    for (const player of ["policy:my-agent", "nash", "random"]) {
      expect(rated.out).toMatch(new RegExp(`\\d  ${player} `));
    }
  });

  it("reads the policies from --server when the data directory does not say where its server is", async () => {
    // The store stays held, but no address is left beside it: the refusal says what to do, and --server does it.
    rmSync(join(dataDir, "server.json"));
    const argv = ["exploitability", "--game", "kuhn-poker", "--policy", "policy:my-agent", "--data-dir", dataDir];
    const refused = await ludus(...argv);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`the replay store in ${dataDir} is in use`);
    expect(refused.err).toContain("or take --server http://HOST:PORT");
    const through = await ludus(...argv, "--server", server.url, "--json");
    expect(through.code, through.err).toBe(0);
    expect(JSON.parse(through.out)).toMatchObject({ policy: "policy:my-agent@1" });
    expect(JSON.parse(through.out).exploitability).toBeLessThan(1e-3);
  });
});
