import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connectRedis, redisExposure } from "../../server/cluster/redis-state.ts";
import { RUNTIME_FILE } from "../../server/runtime-file.ts";
import { freePort, runLudus, startServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const modeOf = (path: string) => statSync(path).mode & 0o777;

/**
 * What a server keeps on disk is its user's alone: the data directory (the store, the node id, the runtime file with
 * a live admin token) is 0700, made so or tightened; a runtime file that a server killed outright left behind is
 * removed by the next command that takes the store.
 */
describe("the data directory of a server", () => {
  const root = mkdtempSync(join(tmpdir(), "ludus-private-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is private, and a SIGKILLed server's runtime file goes with the next command on its store", async () => {
    const fresh = join(root, "fresh");
    const loose = join(root, "loose");
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755); // the umask may have narrowed it
    for (const dataDir of [fresh, loose]) {
      const server = await startServerProcess(["--data-dir", dataDir]);
      try {
        expect(modeOf(dataDir)).toBe(0o700);
        expect(modeOf(join(dataDir, RUNTIME_FILE))).toBe(0o600);
      } finally {
        server.child.kill("SIGKILL");
        await server.exited;
      }
      expect(existsSync(join(dataDir, RUNTIME_FILE))).toBe(true);
      const listed = await runLudus(["token", "list", "--data-dir", dataDir]);
      expect(listed.code, listed.err).toBe(0);
      expect(existsSync(join(dataDir, RUNTIME_FILE))).toBe(false);
    }
  });
});

describe("the cluster's Redis", () => {
  it("warns of a Redis asked without a password off this machine, and never of one on loopback", () => {
    expect(redisExposure(new URL("redis://10.1.2.3:6379"))).toMatch(
      /without a password: anyone who can reach it can act for any player .*redis:\/\/\[user\]:password@host/,
    );
    expect(redisExposure(new URL("redis://:secret@10.1.2.3:6379"))).toBeUndefined();
    expect(redisExposure(new URL("rediss://ludus:secret@redis.internal:6380"))).toBeUndefined();
    for (const host of ["127.0.0.1", "localhost", "[::1]", "127.0.0.5"]) {
      expect(redisExposure(new URL(`redis://${host}:6379`))).toBeUndefined();
    }
  });

  it.skipIf(!existsSync("/usr/bin/redis-server"))("connects with the password a private Redis asks for", async () => {
    const port = await freePort();
    const redis = spawn("/usr/bin/redis-server", [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--requirepass",
      "s3cret",
      "--save",
      "",
      "--appendonly",
      "no",
    ], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    redis.stdout!.on("data", (d) => (out += d));
    try {
      await until("redis-server to start", () => out.includes("Ready to accept connections"));
      const client = await connectRedis(`redis://:s3cret@127.0.0.1:${port}`, "private-test");
      expect(await client.ping()).toBe("PONG");
      client.disconnect();
      const refused = await connectRedis(`redis://:wrong@127.0.0.1:${port}`, "private-test").then(
        () => "connected",
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/^cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/?: WRONGPASS/);
      expect(refused).not.toContain("wrong");
    } finally {
      redis.kill("SIGKILL");
      await once(redis, "exit");
    }
  });
});
