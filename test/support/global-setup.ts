import { spawnSync } from "node:child_process";
import { join } from "node:path";

/**
 * Once per run, before any test file: bundles web/src into web/dist/app.js as `npm start` does, so that no test runs
 * a stale page, and no two files build it at once (one would serve the bundle while the other rewrites it).
 */
export default function setup(): void {
  const result = spawnSync(process.execPath, ["task", "--quiet", "build:web"], {
    cwd: join(import.meta.dirname!, "..", ".."),
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`deno task build:web failed:\n${result.stderr}${result.stdout}`);
}
