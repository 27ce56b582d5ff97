#!/usr/bin/env node
// The README's commands start here, on a machine that may have only Node and npm: install
// what is missing (npm owns node_modules; see .npmrc), then hand over to a Deno task.
//   node cli/launch.mjs <deno-task> [args...]
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensurePythonEnv } from "./python-env.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stampPath = join(root, "node_modules", ".ludus-install-stamp");

function manifestHash() {
  const hash = createHash("sha256");
  for (const file of ["package.json", "package-lock.json"]) {
    const path = join(root, file);
    if (existsSync(path)) hash.update(readFileSync(path));
  }
  return hash.digest("hex");
}

function ensureInstalled() {
  const installed = existsSync(join(root, "node_modules", "deno", "package.json")) &&
    existsSync(stampPath) && readFileSync(stampPath, "utf8") === manifestHash();
  if (installed) return;
  console.error("ludus: installing dependencies (npm install)...");
  // `npm install`, not `npm ci`: the registry mirror lacks some other platforms' optional
  // packages, which the lockfile then lacks too, and `npm ci` refuses that.
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error("ludus: npm install failed; see the messages above.");
    process.exit(result.status ?? 1);
  }
  writeFileSync(stampPath, manifestHash());
}

/** Newest modification time under `dir`, in ms. */
function newest(dir) {
  return Math.max(
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs
    ),
  );
}

/** `ludus serve` serves the web app: bundle it when web/src (or the shared protocol/games) changed since. */
function ensureWebApp(deno) {
  const bundle = join(root, "web", "dist", "app.js");
  // games/ too: each game's web table is its folder's table.tsx.
  const sources = ["web/src", "protocol", "games"].map((d) => newest(join(root, d)));
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= Math.max(...sources)) return;
  console.error("ludus: building the web app (deno task build:web)...");
  const result = spawnSync(deno, ["task", "--quiet", "build:web"], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error("ludus: building the web app failed; see the messages above.");
    process.exit(result.status ?? 1);
  }
}

const [task, ...args] = process.argv.slice(2);
if (!task) {
  console.error("usage: node cli/launch.mjs <deno-task> [args...]");
  process.exit(2);
}
ensureInstalled();
const deno = createRequire(join(root, "package.json"))("deno/install_api.cjs").runInstall();
if (task === "ludus" && args[0] === "serve") ensureWebApp(deno);
// The whole suite covers the Python parts too: set them up like the npm packages; the suites that need them say
// they were skipped when that cannot be done on this machine.
if (task === "test:all") {
  const why = ensurePythonEnv();
  if (why) console.error(`ludus: the Python suites will be skipped: ${why}.`);
}
// A task that is one plain `deno ...` command runs directly, so that signals reach it: `deno task`
// would start it through npm's Node wrapper of deno, which does not pass signals on.
const command = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).tasks?.[task];
const direct = typeof command === "string" && /^deno [^&|;<>$`'"]+$/.test(command);
const argv = direct ? [...command.split(/\s+/).slice(1), ...args] : ["task", "--quiet", task, ...args];
// The child knows this process as its supervisor: should it die without passing a signal on, the
// server stops by itself (cli/commands/serve.ts) rather than run on orphaned.
const child = spawn(deno, argv, {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, LUDUS_SUPERVISOR_PID: String(process.pid) },
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
// And should whoever started this process (npm) go away without a word, pass on a SIGTERM.
const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(orphaned);
  child.kill("SIGTERM");
}, 500);
orphaned.unref();
child.on("exit", (code, signal) => {
  if (!signal) process.exit(code ?? 1);
  // Die of the same signal, so callers see how the task ended.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
