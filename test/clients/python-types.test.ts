import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { projectPython, ROOT } from "../support/python.ts";

/**
 * The project's Python is typed, and mypy holds it to that: the client (clients/python) and the trainer
 * (policies/trainer) each type-check clean under the [tool.mypy] of their own pyproject.toml, the way a contributor
 * runs it (`python -m mypy` in the package's folder). Needs mypy in the project's .venv (`.ci/run` installs it);
 * without it the suite says so and skips.
 */

const root = ROOT;
const { python, ready, suite } = projectPython(["mypy"], "python types");

const PACKAGES = [
  { name: "the client", folder: "clients/python", pkg: "ludus" },
  { name: "the trainer", folder: "policies/trainer", pkg: "ludus_trainer" },
];

/** mypy as a contributor runs it in `folder`, its cache outside the repository; never throws on type errors. */
async function mypy(folder: string, ...args: string[]) {
  const cache = join(tmpdir(), "ludus-mypy-cache", folder.replaceAll("/", "-"));
  try {
    const { stdout, stderr } = await promisify(execFile)(python, ["-m", "mypy", "--cache-dir", cache, ...args], {
      cwd: resolve(root, folder),
      maxBuffer: 16 * 1024 * 1024,
    });
    return { status: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { status: failed.code ?? -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

const pythonFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".py"));

describe.skipIf(!ready)(suite, () => {
  for (const { name, folder, pkg } of PACKAGES) {
    it(`${name} (${folder}) type-checks clean, every module of ${pkg} included`, async () => {
      const { status, output } = await mypy(folder);
      // The output is the message: which file, which line, what mypy found.
      expect(output, output).toMatch(/^Success: no issues found in \d+ source files$/m);
      expect(status, output).toBe(0);
      // The package's own source (not the copy pip installed in the venv), all of it.
      const checked = Number(/in (\d+) source files/.exec(output)![1]);
      expect(checked).toBe(pythonFiles(resolve(root, folder, pkg)).length);
    });
  }
});
