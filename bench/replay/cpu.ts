import { existsSync, readFileSync } from "node:fs";
import process from "node:process";

/** Cores busy over a measured window: this process, and the whole machine (Linux only, else null). */
export interface CoresBusy {
  /** This process: the benchmark's JS and, for PGlite, the database itself. */
  readonly process: number;
  /**
   * Every process on the machine, PostgreSQL's included; when it is well above what the benchmark and
   * its database can use, something else was running and the figures are lower than they should be.
   */
  readonly machine: number | null;
}

/** Busy and total jiffies of all CPUs, from /proc/stat's first line. */
function machineJiffies(): { busy: number; total: number } | null {
  if (!existsSync("/proc/stat")) return null;
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3] - fields[4], total };
}

/** Starts a window; the returned function ends it and says how many cores were busy. */
export function measureCores(): () => CoresBusy {
  const start = performance.now();
  const usage = process.cpuUsage();
  const machine = machineJiffies();
  return () => {
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(usage);
    const now = machineJiffies();
    const round2 = (x: number) => Math.round(x * 100) / 100;
    return {
      process: round2((used.user + used.system) / 1e6 / seconds),
      machine: machine && now
        ? round2(((now.busy - machine.busy) / (now.total - machine.total)) * navigator.hardwareConcurrency)
        : null,
    };
  };
}

/** Runs `pass` once untimed, then again and again for at least `seconds`: the passes, their seconds and cores busy. */
export async function repeatFor(
  seconds: number,
  pass: () => Promise<unknown>,
): Promise<{ passes: number; elapsed: number; coresBusy: CoresBusy }> {
  await pass();
  const cores = measureCores();
  const start = performance.now();
  let passes = 0;
  do {
    await pass();
    passes++;
  } while (performance.now() - start < seconds * 1000);
  return { passes, elapsed: (performance.now() - start) / 1000, coresBusy: cores() };
}
