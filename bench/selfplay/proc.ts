/** What Linux's /proc says about a process: CPU time, resident memory, open-file limit. */

/** A process's CPU time in clock ticks (`getconf CLK_TCK` a second) and its write system calls, so far. */
export interface ProcessCounters {
  readonly userTicks: number;
  readonly systemTicks: number;
  /**
   * write(2)/writev(2) calls (/proc/PID/io `syscw`): Deno writes each websocket frame with one. Its reads
   * go through recv(2), which `syscr` does not count, so reads are not reported.
   */
  readonly writeCalls: number;
}

export function processCounters(pid: number): ProcessCounters {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const io = Deno.readTextFileSync(`/proc/${pid}/io`);
  const ioField = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(io)?.[1] ?? NaN);
  return {
    userTicks: Number(fields[11]), // fields 14 and 15 of proc_pid_stat(5): utime, stime of all threads
    systemTicks: Number(fields[12]),
    writeCalls: ioField("syscw"),
  };
}

/** Resident set size of `pid`, in KiB. */
export function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!line) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(line[1]);
}

/** The soft limit on open files of `pid` ("unlimited" as Infinity). */
export function openFileLimit(pid: number): number {
  const limits = Deno.readTextFileSync(`/proc/${pid}/limits`);
  const line = /^Max open files\s+(\S+)/m.exec(limits);
  if (!line) throw new Error(`no open-file limit in /proc/${pid}/limits`);
  return line[1] === "unlimited" ? Infinity : Number(line[1]);
}

/** What a process did between two readings: CPU seconds and system calls. */
export interface ProcessUsage {
  readonly userSeconds: number;
  readonly systemSeconds: number;
  readonly writeCalls: number;
}

export function usageBetween(before: ProcessCounters, after: ProcessCounters, clockTicks: number): ProcessUsage {
  return {
    userSeconds: (after.userTicks - before.userTicks) / clockTicks,
    systemSeconds: (after.systemTicks - before.systemTicks) / clockTicks,
    writeCalls: after.writeCalls - before.writeCalls,
  };
}
