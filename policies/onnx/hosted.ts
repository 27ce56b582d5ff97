import { existsSync } from "node:fs";
import { fileURLToPath as fromFileUrl } from "node:url";
import { PolicyError } from "./network.ts";
import type { PolicyDevice } from "./network.ts";
import { FRAME, frame, FrameReader } from "./host.ts";

/**
 * A policy network in a process of its own (policies/onnx/host.ts), so that no model can hold the server:
 * each call has a time budget, past which the process is killed (SIGKILL: onnxruntime's native loop cannot be
 * interrupted any other way, not even by terminating a worker thread), and, where `prlimit` exists, a memory
 * budget the kernel enforces (RLIMIT_DATA: an allocation past it fails, and the process with it). Either way
 * the caller gets a PolicyBudgetError and this network is done for good.
 */

export interface HostOptions {
  readonly device?: PolicyDevice;
  readonly threads?: number;
  /** The most one batch may take, in ms (default 1000). */
  readonly batchMs?: number;
  /** The most loading the model may take, in ms (default 60 000: a 100 MB model takes seconds). */
  readonly loadMs?: number;
  /** The process's data memory limit, in MiB (default 1024); 0: none. */
  readonly memoryMb?: number;
}

export const DEFAULT_BATCH_MS = 1000;
export const DEFAULT_MEMORY_MB = 1024;
const DEFAULT_LOAD_MS = 60_000;

/** A model that went over its budget of time or memory, or whose process died: it must not be asked again. */
export class PolicyBudgetError extends PolicyError {
  constructor(message: string) {
    super(message);
    this.name = "PolicyBudgetError";
  }
}

/** A call on a network its owner released (a batch still in flight then): nothing is wrong with the model. */
export class NetworkReleasedError extends Error {
  constructor(label: string) {
    super(`${label} was released`);
    this.name = "NetworkReleasedError";
  }
}

const HOST = fromFileUrl(new URL("./host.ts", import.meta.url));
const CONFIG = fromFileUrl(new URL("../../deno.json", import.meta.url));
const PRLIMIT = ["/usr/bin/prlimit", "/bin/prlimit"].find((p) => existsSync(p));

/** Whether the memory budget is enforced here (it needs util-linux's prlimit). */
export const memoryBudgetEnforced = PRLIMIT !== undefined;

/** How many budgets of waiting (for a core, on a loaded machine) a batch gets, however little CPU it used. */
const WAIT_FACTOR = 30;

/** Linux counts a process's CPU time in ticks of 1/100 s (USER_HZ). */
const MS_PER_TICK = 10;

/** The CPU time (user and system, every thread) process `pid` has used, in ms; undefined where /proc is not. */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // After the command name (in parentheses, which may hold spaces): state is field 3, utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

/** A host process started with `memoryMb` of data memory (0: no limit), waiting for its model. */
function spawnHost(memoryMb: number): Deno.ChildProcess {
  const deno = [Deno.execPath(), "run", "--quiet", "--config", CONFIG, "--allow-read", "--allow-env", "--allow-ffi"];
  const argv = [...deno, "--allow-sys", HOST];
  const [program, ...args] = PRLIMIT && memoryMb > 0 ? [PRLIMIT, `--data=${memoryMb * 1024 * 1024}`, ...argv] : argv;
  return new Deno.Command(program, { args, stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
}

/**
 * One host process per memory budget started ahead and waiting, unreferenced (it holds no server open, and ends when
 * the server does: its stdin closes): a new version, which a trainer registers every step and the next matches seat,
 * does not wait for Deno and onnxruntime to start (0.4–0.9 s on a loaded 2-core machine).
 */
const spares = new Map<number, { child: Deno.ChildProcess; exited: boolean }>();

function takeHost(memoryMb: number): Deno.ChildProcess {
  const spare = spares.get(memoryMb);
  const next = { child: spawnHost(memoryMb), exited: false };
  next.child.unref();
  next.child.status.then(() => (next.exited = true));
  spares.set(memoryMb, next);
  if (!spare || spare.exited) return spawnHost(memoryMb);
  spare.child.ref();
  return spare.child;
}

interface Pending {
  readonly resolve: (frame: { type: number; payload: Uint8Array }) => void;
  readonly reject: (error: Error) => void;
}

export class HostedNetwork {
  private readonly child: Deno.ChildProcess;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private pending?: Pending;
  /** Set once the process is gone or condemned: every later call fails with it. */
  private dead?: PolicyBudgetError | NetworkReleasedError;
  private stderr = "";
  size = 0;
  actions = 0;

  private constructor(private readonly label: string, private readonly options: HostOptions) {
    const memoryMb = options.memoryMb ?? DEFAULT_MEMORY_MB;
    this.child = takeHost(memoryMb);
    this.writer = this.child.stdin.getWriter();
    this.read();
    this.child.stderr.pipeTo(
      new WritableStream({
        write: (chunk) => void (this.stderr = (this.stderr + new TextDecoder().decode(chunk)).slice(-2000)),
      }),
    ).catch(() => {});
    this.child.status.then((status) => {
      const memory = memoryMb > 0 && memoryBudgetEnforced ? ` (its memory budget is ${memoryMb} MiB)` : "";
      const why = /out of memory|alloc|Cannot allocate/i.test(this.stderr)
        ? "ran out of memory"
        : `exited (${status.signal ?? status.code})`;
      this.fail(new PolicyBudgetError(`${this.label}: its inference process ${why}${memory}`));
    });
  }

  /**
   * Loads `model` for `config` of `game` in a process of its own, checked as PolicyNetwork.load checks it and
   * refusing external data. A PolicyError says why it cannot play; a PolicyBudgetError that loading went over
   * its budget.
   */
  static async open(
    model: Uint8Array,
    game: { id: string; version?: number },
    config: unknown,
    label: string,
    options: HostOptions = {},
  ): Promise<HostedNetwork> {
    const hosted = new HostedNetwork(label, options);
    try {
      const header = {
        game: game.id,
        gameVersion: game.version,
        config,
        device: options.device,
        threads: options.threads,
      };
      await hosted.writer.write(frame(FRAME.load, new TextEncoder().encode(JSON.stringify(header))));
      const answer = hosted.ask(frame(FRAME.model, model), options.loadMs ?? DEFAULT_LOAD_MS, "loading it");
      const { size, actions } = JSON.parse(new TextDecoder().decode((await answer).payload));
      hosted.size = size;
      hosted.actions = actions;
      return hosted;
    } catch (error) {
      hosted.kill();
      throw error;
    }
  }

  /** The logits of `count` observations laid end to end in `observations`, within the batch budget. */
  async logits(observations: Float32Array, count: number): Promise<Float32Array> {
    const rows = observations.subarray(0, count * this.size);
    const payload = new Uint8Array(4 + rows.byteLength);
    new DataView(payload.buffer).setUint32(0, count, true);
    payload.set(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength), 4);
    const budget = this.options.batchMs ?? DEFAULT_BATCH_MS;
    const { payload: answer } = await this.ask(frame(FRAME.run, payload), budget, `a batch of ${count}`);
    const logits = new Float32Array(answer.buffer, answer.byteOffset, answer.byteLength / 4);
    for (let i = 0; i < logits.length; i++) {
      if (!Number.isFinite(logits[i])) {
        this.fail(
          new PolicyBudgetError(`${this.label} answered a non-finite logit (${logits[i]}) for ${count} observations`),
        );
        this.kill();
        throw this.dead;
      }
    }
    return logits;
  }

  /** Sends `request` and waits for its answer, killing the process if it takes longer than `budgetMs`. */
  private ask(request: Uint8Array, budgetMs: number, what: string): Promise<{ type: number; payload: Uint8Array }> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.pending) return Promise.reject(new Error(`${this.label}: one call at a time`));
    return new Promise((resolve, reject) => {
      // The budget is the process's CPU time where /proc tells it: on a loaded machine a batch may wait long for a
      // core, and a sound model must not be quarantined for that. Waiting is bounded too, at WAIT_FACTOR budgets.
      const pid = this.child.pid;
      const cpuAtStart = cpuMs(pid);
      const started = performance.now();
      let timer: ReturnType<typeof setTimeout>;
      const check = () => {
        const used = cpuAtStart === undefined ? undefined : (cpuMs(pid) ?? Infinity) - cpuAtStart;
        const waited = performance.now() - started;
        if (used !== undefined && used < budgetMs && waited < budgetMs * WAIT_FACTOR) {
          timer = setTimeout(check, budgetMs - used);
          return;
        }
        const over = used === undefined || used >= budgetMs ? "took longer than" : `waited ${WAIT_FACTOR}× past`;
        this.fail(new PolicyBudgetError(`${this.label}: ${what} ${over} its budget of ${budgetMs} ms`));
        this.kill();
      };
      timer = setTimeout(check, budgetMs);
      this.pending = {
        resolve: (answer) => {
          clearTimeout(timer);
          if (answer.type !== FRAME.failed) return resolve(answer);
          const { message } = JSON.parse(new TextDecoder().decode(answer.payload));
          // onnxruntime refusing an allocation past RLIMIT_DATA: the memory budget, not a fault of the format.
          if (!/bad_alloc|failed to allocate/i.test(message)) return reject(new PolicyError(message));
          const memoryMb = this.options.memoryMb ?? DEFAULT_MEMORY_MB;
          this.fail(
            new PolicyBudgetError(`${this.label}: ${what} needed more than its memory budget of ${memoryMb} MiB`),
          );
          this.kill();
          reject(this.dead);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.writer.write(request).catch(() => {});
    });
  }

  private async read(): Promise<void> {
    const reader = new FrameReader();
    try {
      for await (const chunk of this.child.stdout) {
        for (const answer of reader.push(chunk)) {
          const pending = this.pending;
          this.pending = undefined;
          pending?.resolve(answer);
        }
      }
    } catch {
      // The process was killed: its status says so.
    }
  }

  private fail(error: PolicyBudgetError | NetworkReleasedError): void {
    this.dead ??= error;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(this.dead);
  }

  private kill(): void {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }

  /** Ends the process (its session goes with it). */
  async release(): Promise<void> {
    this.fail(new NetworkReleasedError(this.label));
    await this.writer.close().catch(() => {});
    // A process busy in a long batch would not read its end of stdin: it goes at once.
    const gone = await Promise.race([this.child.status.then(() => true), delay(2000).then(() => false)]);
    if (!gone) this.kill();
    await this.child.status;
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
