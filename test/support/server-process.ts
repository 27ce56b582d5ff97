import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { GATEWAY_PATH } from "../../protocol/frames.ts";

/** The real Deno binary (not npm's Node wrapper), so the PID we hold is the server's own. */
const DENO = "node_modules/@deno/linux-x64-glibc/deno";

/** `deno run <flags> cli/main.ts` exactly as the `ludus` task in deno.json runs it. */
function ludusCommand(): string[] {
  const tasks = JSON.parse(readFileSync("deno.json", "utf8")).tasks as Record<string, string>;
  return tasks.ludus.split(/\s+/).slice(1); // drop the leading `deno`
}

/** Starts `ludus <args>` as its own process, its stdout and stderr piped (the embedded store unless `env` names one). */
export function spawnLudus(args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(DENO, [...ludusCommand(), ...args], {
    env: { ...process.env, DATABASE_URL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs `ludus <args>` as its own process (as a person at a shell would) and collects what it printed. */
export function runLudus(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; out: string; err: string }> {
  const child = spawnLudus(args, env);
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  return once(child, "close").then(([code, signal]) => ({ code: (code ?? signal) as number | string, out, err }));
}

export interface ServerProcess {
  readonly url: string;
  readonly wsUrl: string;
  readonly child: ChildProcess;
  /** Everything the server printed on stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<number | string>;
}

/** Starts `ludus serve` as its own process on a free port and waits until it listens. */
export function startServerProcess(
  args: readonly string[],
  env: Record<string, string> = {},
  /** A command the server runs under, e.g. `["prlimit", "--nofile=256:256"]` for a low file limit. */
  under: readonly string[] = [],
): Promise<ServerProcess> {
  const command = [DENO, ...ludusCommand(), "serve", "--host", "127.0.0.1", "--port", "0", ...args];
  const [program, ...argv] = [...under, ...command];
  const child: ChildProcess = spawn(program, argv, {
    // The embedded store unless the caller names a database: CI's DATABASE_URL must not redirect it.
    env: { ...process.env, DATABASE_URL: "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exited = once(child, "exit").then(([code, signal]) => (code ?? signal ?? "unknown") as number | string);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s:\n${stderr}`)), 60_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      const url = /serving on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url && stderr.includes("replay store:")) {
        clearTimeout(timer);
        resolve({
          url,
          wsUrl: `${url.replace(/^http/, "ws")}${GATEWAY_PATH}`,
          child,
          stderr: () => stderr,
          exited,
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening:\n${stderr}`));
    });
  });
}

/** A TCP port free on 127.0.0.1 now (for a process whose address must be known before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
