/** The bench's child processes: started with the open-file limit raised, and all stopped at the end, whatever happens. */

const decoder = new TextDecoder();

/** Raises the soft open-file limit to the hard one (thousands of sockets need it), then runs the command as is. */
const RAISE_FILE_LIMIT = 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"';

export class Processes {
  private readonly running = new Set<Deno.ChildProcess>();

  /** Starts `command args` (in `cwd`, with `env` over ours); stdout is piped when `captureStdout`, stderr goes to ours. */
  spawn(
    command: string,
    args: readonly string[],
    options: { cwd: string; captureStdout?: boolean; env?: Record<string, string> },
  ): Deno.ChildProcess {
    const child = new Deno.Command("sh", {
      args: ["-c", RAISE_FILE_LIMIT, "sh", command, ...args],
      cwd: options.cwd,
      env: options.env,
      stdin: "null",
      stdout: options.captureStdout ? "piped" : "null",
      stderr: "inherit",
    }).spawn();
    this.running.add(child);
    child.status.finally(() => this.running.delete(child));
    return child;
  }

  /** Runs a child to its end and returns its stdout; past `timeoutMs` it is killed and this throws. */
  async output(child: Deno.ChildProcess, what: string, timeoutMs: number): Promise<string> {
    const timer = setTimeout(() => this.kill(child), timeoutMs);
    try {
      const { code, stdout } = await child.output();
      if (code !== 0) throw new Error(`${what} exited with ${code}`);
      return decoder.decode(stdout);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM, then SIGKILL if it is still there after a second. */
  async stop(child: Deno.ChildProcess): Promise<void> {
    if (!this.running.has(child)) return;
    this.kill(child, "SIGTERM");
    const killer = setTimeout(() => this.kill(child), 1000);
    await child.status;
    clearTimeout(killer);
  }

  stopAll(): Promise<void[]> {
    return Promise.all([...this.running].map((child) => this.stop(child)));
  }

  private kill(child: Deno.ChildProcess, signal: Deno.Signal = "SIGKILL"): void {
    try {
      child.kill(signal);
    } catch {
      // it has exited already
    }
  }
}

/** A loopback port nobody listens on now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Waits until `url` answers an HTTP GET; throws if `child` exits first or `timeoutMs` passes. */
export async function waitForHttp(url: string, child: Deno.ChildProcess, timeoutMs = 30_000): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (exited) throw new Error(`the process meant to serve ${url} exited`);
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}
