/**
 * The training loop's throughput: `ludus train` (a server on a fresh embedded store playing self-play, the Python
 * trainer pulling the tensors dataset, learning, registering each version) for a fixed number of versions, against
 * the same run's baseline: the same number of matches played in-process by built-in strategies with no store, no
 * export and no learning (`simulate`), which is what the loop would cost if recording, exporting, learning and
 * registering were free.
 *
 * Figures: matches a second through the loop and in the baseline, their ratio, where the trainer's time went
 * (waiting for the server to play and export, learning, registering), and the last version's figures (exploitability
 * for Kuhn and Leduc poker). Needs the trainer's Python (`--python`, $LUDUS_PYTHON or ./.venv).
 *
 *   deno task bench:train [--game kuhn-poker] [--versions 60] [--matches-per-version 1000] [--method cfr]
 * Prints one JSON object on stdout; the loop's progress goes to stderr.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { run } from "../cli/main.ts";
import { getGame } from "../games/registry.ts";
import { simulate } from "../policies/simulate.ts";
import { round3 } from "./selfplay/histogram.ts";
import { report } from "./report.ts";

const { values } = parseArgs({
  options: {
    game: { type: "string", default: "kuhn-poker" },
    versions: { type: "string", default: "60" },
    "matches-per-version": { type: "string", default: "1000" },
    method: { type: "string" },
  },
});
const dir = mkdtempSync(join(tmpdir(), "ludus-bench-train-"));

async function bench() {
  const versions = Number(values.versions);
  let out = "";
  // The trainer's last progress line says where its time went.
  let spent: unknown;
  const err = (text: string) => {
    for (const line of text.split("\n")) if (line.includes('"spent"')) spent = JSON.parse(line).spent;
    Deno.stderr.writeSync(new TextEncoder().encode(text));
  };
  const started = performance.now();
  const code = await run([
    "train",
    "--game",
    values.game!,
    "--name",
    "bench",
    "--versions",
    String(versions),
    "--minutes",
    "600",
    "--matches-per-version",
    values["matches-per-version"]!,
    ...(values.method ? ["--method", values.method] : []),
    "--data-dir",
    dir,
    "--json",
  ], { out: (t) => void (out += t), err });
  const wall = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`ludus train exited with ${code}`);
  const result = JSON.parse(out);
  const curve = JSON.parse(readFileSync(result.curve, "utf8")).curve as { matches: number; seconds: number }[];
  const last = curve.at(-1)!;
  const loopRate = last.matches / last.seconds;
  const baseline = await simulate({ game: getGame(values.game!), seats: ["random"], matches: last.matches, seed: 1 });
  const baselineRate = baseline.matches / (baseline.steps / baseline.stepsPerSecond);
  return {
    game: values.game,
    versions,
    matchesPerVersion: Number(values["matches-per-version"]),
    loop: {
      matches: last.matches,
      seconds: round3(last.seconds),
      matchesPerSecond: round3(loopRate),
      wallSeconds: round3(wall),
    },
    baseline: { what: "simulate, built-in random in every seat, no store", matchesPerSecond: round3(baselineRate) },
    loopOverBaseline: round3(loopRate / baselineRate),
    trainerSeconds: spent,
    last: result.last,
  };
}

await report(bench, () => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
