import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { resolve } from "node:path";

/** The repository's root, with a trailing slash. */
export const ROOT = new URL("../..", import.meta.url).pathname;

/**
 * The project's Python (`$LUDUS_PYTHON`, else the .venv that `npm test` makes: cli/python-env.mjs), whether it can import `modules`, and the
 * suite's name: `what`, or why it is skipped.
 */
export function projectPython(modules: readonly string[], what: string) {
  const python = process.env.LUDUS_PYTHON ?? resolve(ROOT, ".venv/bin/python");
  const ready = existsSync(python) && spawnSync(python, ["-c", `import ${modules.join(", ")}`]).status === 0;
  const list = modules.length > 1 ? `${modules.slice(0, -1).join(", ")} and ${modules.at(-1)}` : modules[0];
  const why = `${python} cannot import ${list}; npm test sets it up, or run node cli/python-env.mjs`;
  if (!ready && process.env.CI) throw new Error(`${what} needs the project's Python, which CI must have: ${why}`);
  return { python, ready, suite: ready ? what : `${what} (skipped: ${why})` };
}

export interface PythonRun {
  readonly child: ChildProcess;
  /** Its exit code and everything it printed. */
  readonly done: Promise<{ code: number | null; out: string; err: string }>;
}

/**
 * Runs `python args…` (in `cwd`, `env` over ours) and collects what it prints. Its stdin is `stdin`, written then
 * closed; or, with `openStdin`, left open for the caller to write.
 */
export function runPython(
  python: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string; openStdin?: boolean } = {},
): PythonRun {
  const child = spawn(python, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, PYTHONUNBUFFERED: "1", ...options.env },
    stdio: [options.stdin === undefined && !options.openStdin ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  return { child, done: once(child, "exit").then(([code]) => ({ code: code as number | null, out, err })) };
}

/** The last line a script printed, as JSON: its report (libraries may log before it). */
export const lastJsonLine = (out: string) => JSON.parse(out.trim().split("\n").at(-1)!);
