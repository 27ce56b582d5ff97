import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StepRecordRow } from "../../db/records.ts";
import { ReplayStore } from "../../db/store.ts";
import { lastJsonLine, projectPython, runPython } from "../support/python.ts";
import { playRecorded, type Recorded, writeRecorded } from "../support/recorded-matches.ts";
import { runLudus } from "../support/server-process.ts";

/**
 * JSONL exports whose LLM rows come after a long stretch of built-in rows, read by readers that type columns from
 * the first rows they see (pyarrow.json: its first block; Hugging Face `datasets`: its first chunk). A field that is
 * null on every built-in row and nested on an LLM's (messages, log-probabilities, a refusal) or a seat that gains
 * fields (an LLM's model) failed to load; Parquet of the same rows loaded. The readers' blocks are made small here
 * (LUDUS_JSONL_BUILTINS=3000 and LUDUS_JSONL_BLOCK=1048576, pyarrow's default, reproduce it at full size).
 */

const { python, ready, suite } = projectPython(["datasets", "pyarrow.json"], "JSONL exports typed by first rows");
const BUILTINS = Number(process.env.LUDUS_JSONL_BUILTINS ?? 300);
const BLOCK = Number(process.env.LUDUS_JSONL_BLOCK ?? 32 << 10);
const FORMATS = ["turns.jsonl", "verl.jsonl", "episodes.jsonl"] as const;
const T0 = Date.parse("2026-03-01T00:00:00Z");

/** A Kuhn match whose seat 0 is an LLM: messages, response, usage, log-probabilities, and one refused attempt. */
function llmMatch(i: number): Recorded {
  const recorded = playRecorded({
    id: `llm-${i}`,
    game: "kuhn-poker",
    strategies: ["random"],
    createdAt: new Date(T0 + (BUILTINS + i) * 1000),
  });
  const steps = recorded.steps.map((row, n): StepRecordRow =>
    row.seat !== 0 ? row : {
      ...row,
      meta: {
        prompt: [{ role: "system", content: "rules" }, { role: "user", content: `turn ${row.turn}` }],
        response: "[check]",
        usage: { prompt_tokens: 100, completion_tokens: 3 },
        renderer: "spiral",
        logprobs: [{ token: "[check]", logprob: -0.25, top_logprobs: [{ token: "[check]", logprob: -0.25 }] }],
      },
      ...(n === 0
        ? {
          attempts: [{ input: "raise", code: "illegal_action", message: "not legal now" }],
          error: { code: "illegal_action", message: "not legal now" },
        }
        : {}),
    }
  );
  const llm = {
    kind: "llm" as const,
    name: "llm-alice",
    tokenId: "tok-alice",
    model: "qwen-7b",
    endpoint: "http://127.0.0.1:8000/v1",
    sampling: { temperature: 0.7 },
  };
  return { match: { ...recorded.match, seats: [llm, recorded.match.seats[1]!] }, steps };
}

describe.skipIf(!ready)(suite, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-jsonl-types-"));
  const counts: Record<string, number> = {};

  beforeAll(async () => {
    const store = await ReplayStore.open({ dataDir });
    const builtins = Array.from({ length: BUILTINS }, (_, i) =>
      playRecorded({
        id: `builtin-${i}`,
        game: "kuhn-poker",
        strategies: ["random"],
        createdAt: new Date(T0 + i * 1000),
      }));
    // Written in order, so that they end (and are exported) in order: every built-in row before the LLMs'.
    for (const recorded of [...builtins, ...[0, 1, 2].map(llmMatch)]) await writeRecorded(store, [recorded]);
    await store.close();
    for (const format of FORMATS) {
      const out = join(dataDir, format);
      const run = await runLudus(["export", "--format", format, "--out", out, "--data-dir", dataDir]);
      expect(run.code, run.err).toBe(0);
    }
  }, 240_000);
  afterAll(() => process.env.LUDUS_KEEP ? console.log(dataDir) : rmSync(dataDir, { recursive: true, force: true }));

  it("every row of a format has the same keys, and pyarrow and datasets read each format", async () => {
    const script = join(dataDir, "read.py");
    writeFileSync(
      script,
      `import json, sys, pyarrow.json as pj, datasets
datasets.disable_progress_bars()
report = {}
for f in ${JSON.stringify(FORMATS)}:
    path = f"${dataDir}/{f}"
    lines = [json.loads(l) for l in open(path)]
    def keys(v):
        return sorted(v) if isinstance(v, dict) else None
    shapes = {json.dumps([keys(r), keys(r.get("extra_info")), [keys(s) for s in r.get("seats", [])][:1]]) for r in lines}
    entry = {"rows": len(lines), "shapes": len(shapes)}
    try:
        table = pj.read_json(path, read_options=pj.ReadOptions(block_size=${BLOCK}))
        entry["pyarrow"] = table.num_rows
    except Exception as e:
        entry["pyarrow"] = str(e)[:300]
    try:
        ds = datasets.load_dataset("json", data_files=path, split="train", cache_dir="${dataDir}/hf")
        entry["datasets"] = len(ds)
    except Exception as e:
        entry["datasets"] = f"{e} {e.__cause__}"[:300]
    report[f] = entry
print(json.dumps(report))
`,
    );
    const { code, out, err } = await runPython(python, [script], {
      env: { HF_DATASETS_OFFLINE: "1", HF_HUB_OFFLINE: "1", HF_HOME: join(dataDir, "hf") },
    }).done;
    expect(code, err).toBe(0);
    const report = lastJsonLine(out);
    for (const format of FORMATS) {
      const { rows, shapes, pyarrow, datasets } = report[format];
      counts[format] = rows;
      expect({ format, shapes, pyarrow, datasets }).toEqual({ format, shapes: 1, pyarrow: rows, datasets: rows });
    }
    expect(counts["episodes.jsonl"]).toBe(BUILTINS + 3);
  }, 120_000);
});
