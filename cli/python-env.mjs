// The project's Python environment (.venv): the trainer (policies/trainer) and the Python client with its
// environments and trainer adapters (clients/python), with mypy, which type-checks both. Made on first use, as
// `npm install` is for the npm packages, and again when either package's manifest changes.
//   node cli/python-env.mjs    make it (or say in one line why it cannot be made), then exit
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const VENV = join(root, ".venv");
export const VENV_PYTHON = join(VENV, "bin", "python");
const PACKAGES = ["./policies/trainer", "./clients/python[msgpack,envs,trl]", "mypy==2.4.*"];
const MANIFESTS = ["policies/trainer/pyproject.toml", "clients/python/pyproject.toml"];
const stampPath = join(VENV, ".ludus-install-stamp");

function manifestHash() {
  const hash = createHash("sha256").update(PACKAGES.join("\n"));
  for (const file of MANIFESTS) hash.update(readFileSync(join(root, file)));
  return hash.digest("hex");
}

/**
 * pip's configured indexes (`pip config get global.extra-index-url`) as the only ones to ask: a machine whose
 * public index is unreachable lists its local wheel stores there, and pip would otherwise retry the public one
 * for minutes before each package. With none configured, pip's default index.
 */
function indexArgs() {
  const got = spawnSync(VENV_PYTHON, ["-m", "pip", "config", "get", "global.extra-index-url"], { encoding: "utf8" });
  const urls = got.status === 0 ? got.stdout.split(/\s+/).filter(Boolean) : [];
  return urls.flatMap((url, i) => [i === 0 ? "--index-url" : "--extra-index-url", url]);
}

/**
 * Makes .venv with every Python package the project uses, unless it is there for these manifests already.
 * Returns null when it is ready, else one sentence saying why not and what to run.
 */
export function ensurePythonEnv({ quiet = false } = {}) {
  const hash = manifestHash();
  if (existsSync(VENV_PYTHON) && existsSync(stampPath) && readFileSync(stampPath, "utf8") === hash) return null;
  const python = process.env.PYTHON ?? "python3";
  if (!quiet) console.error("ludus: setting up the project's Python environment in .venv (pip install)...");
  const stdio = quiet ? "ignore" : "inherit";
  if (!existsSync(VENV_PYTHON)) {
    const made = spawnSync(python, ["-m", "venv", VENV], { cwd: root, stdio });
    if (made.status !== 0) {
      return `${python} -m venv .venv failed (is Python 3.10+ with its venv module installed? On Debian: ` +
        `apt-get install python3-venv), so the Python parts cannot run; install it, or set PYTHON to a python3`;
    }
  }
  const pip = spawnSync(VENV_PYTHON, ["-m", "pip", "install", "-q", ...indexArgs(), ...PACKAGES], { cwd: root, stdio });
  if (pip.status !== 0) {
    return `pip install into .venv failed (see pip's messages above), so the Python parts cannot run; ` +
      `run node cli/python-env.mjs again once pip can reach an index that has ${PACKAGES.join(", ")}`;
  }
  writeFileSync(stampPath, hash);
  return null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const why = ensurePythonEnv();
  if (why) {
    console.error(`ludus: ${why}.`);
    process.exit(1);
  }
}
