import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runLlm } from "../../clients/llm/index.ts";
import { type FakeOpenAI, legalAnswer, logprobOf, startFakeOpenAI } from "../support/openai-server.ts";
import { projectPython, ROOT, runPython } from "../support/python.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Exports of LLM matches played for real (a model behind an OpenAI-compatible endpoint that returns token
 * log-probabilities when asked), downloaded from a running server and read by Python as docs/datasets.md says:
 * who played each row, the multi-game JSONL formats through pyarrow, and the docs' TRL recipe, run as written.
 */

const root = ROOT;
const { python, ready, suite } = projectPython(["datasets", "pyarrow.json"], "exports read by Python");

const MODEL = "fake-7b";
const SAMPLING = { logprobs: true, top_logprobs: 2 };

/** The recipe exactly as docs/datasets.md gives it: the Python block after its `trl-recipe` marker. */
function trlRecipe(): string {
  const doc = readFileSync(join(root, "docs/datasets.md"), "utf8");
  const block = /<!-- trl-recipe -->\s*```python\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/datasets.md has no ```python block after <!-- trl-recipe -->");
  return block[1];
}

async function runScript(dir: string, script: string): Promise<string> {
  const file = join(dir, "script.py");
  writeFileSync(file, script);
  const { code, out, err } = await runPython(python, [file], {
    cwd: dir,
    // Nothing from the network, and no cache outside this test's directory.
    env: { HF_DATASETS_OFFLINE: "1", HF_HUB_OFFLINE: "1", HF_HOME: join(dir, "hf") },
  }).done;
  if (code !== 0) throw new Error(`python exited ${code}: ${err}`);
  return out;
}

describe.skipIf(!ready)(suite, () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let dir: string;
  const download = async (format: string, query = "") => {
    const response = await fetch(`${server.url}/datasets/${format}${query}`);
    expect(response.status, await response.clone().text().then((t) => t.slice(0, 300))).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    writeFileSync(join(dir, format === "parquet" ? "turns.parquet" : format), bytes);
    return new TextDecoder().decode(bytes);
  };
  const rows = (text: string) => text.split("\n").filter(Boolean).map((l) => JSON.parse(l));

  beforeAll(async () => {
    server = await startTestServer();
    fake = await startFakeOpenAI({ script: (request) => ({ content: legalAnswer(request, () => 0) }) });
    dir = mkdtempSync(join(tmpdir(), "ludus-export-python-"));
    const token = await server.token("model-seat", "llm", 100);
    const play = (game: string, opponent: string, stream: boolean) =>
      runLlm({
        url: server.wsUrl,
        token,
        game,
        opponent,
        seed: game,
        agent: { chat: { baseUrl: fake.baseUrl, model: MODEL, stream, extraBody: SAMPLING } },
      });
    // Two games whose observations differ in type field by field; one answer streamed, one whole.
    for (const [game, opponent, stream] of [["ipd", "tit-for-tat", false], ["kuhn-poker", "random", true]] as const) {
      const { failure } = await play(game, opponent, stream);
      expect(failure).toBeUndefined();
    }
  });
  afterAll(async () => {
    await fake.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("says who played every row: model, endpoint, sampling, renderer and the answer's log-probabilities", async () => {
    const turns = rows(await download("turns.jsonl"));
    const llm = turns.filter((r) => r.participant_kind === "llm");
    expect(new Set(llm.map((r) => r.game))).toEqual(new Set(["ipd", "kuhn-poker"]));
    for (const row of llm) {
      expect(row).toMatchObject({
        participant_name: "model-seat",
        participant_model: MODEL,
        participant_endpoint: fake.baseUrl,
        renderer: "ludus",
      });
      expect(JSON.parse(row.participant_sampling)).toEqual(SAMPLING);
      // The fake scores the answer in pieces of 7 characters; the bytes arrays are left out.
      const pieces: string[] = row.response.match(/[\s\S]{1,7}/g);
      expect(JSON.parse(row.logprobs)).toEqual(pieces.map((piece, i) => {
        const { bytes: _, top_logprobs, ...token } = logprobOf(piece, i, 2);
        return { ...token, top_logprobs: top_logprobs.map(({ bytes: _, ...t }) => t) };
      }));
    }
    for (const row of turns.filter((r) => r.participant_kind === "builtin")) {
      expect(row).toMatchObject({ participant_model: null, renderer: null, logprobs: null });
      expect(["tit-for-tat", "random"]).toContain(row.participant_strategy);
    }
    // The filters over HTTP: the model's matches against tit-for-tat that completed.
    const filtered = rows(
      await download("turns.jsonl", `?model=${MODEL}&opponent=builtin:tit-for-tat&status=completed`),
    );
    expect(new Set(filtered.map((r) => r.game))).toEqual(new Set(["ipd"]));
    expect(filtered).toHaveLength(turns.filter((r) => r.game === "ipd").length);
    expect(rows(await download("turns.jsonl", `?model=${MODEL}&status=TIMEOUT`))).toEqual([]);
  });

  it("reads every JSONL format of several games with pyarrow", async () => {
    const counts: Record<string, number> = {};
    for (const format of ["turns.jsonl", "episodes.jsonl", "verl.jsonl"]) {
      counts[format] = rows(await download(format)).length;
    }
    const out = await runScript(
      dir,
      `import json, pyarrow.json
tables = {f: pyarrow.json.read_json(f) for f in ["turns.jsonl", "episodes.jsonl", "verl.jsonl"]}
turns = tables["turns.jsonl"]
print(json.dumps({
    "rows": {f: t.num_rows for f, t in tables.items()},
    "observation": sorted(turns.schema.field("observation").type.names),
    "ipd_round": [r for r in turns.column("observation").combine_chunks().field("ipd").field("round").to_pylist() if r][:2],
}))`,
    );
    const read = JSON.parse(out);
    expect(read.rows).toEqual(counts);
    expect(read.observation).toEqual(["ipd", "kuhn-poker"]);
    expect(read.ipd_round).toEqual([1, 1]); // both seats of the first round
  });

  it("runs the TRL recipe of docs/datasets.md on Parquet and on JSONL: prompts are lists of chat messages", async () => {
    await download("parquet");
    await download("turns.jsonl");
    const recipe = trlRecipe();
    for (const source of ["parquet", "jsonl"]) {
      const code = source === "parquet" ? recipe : recipe.replace(
        'load_dataset("parquet", data_files="turns.parquet"',
        'load_dataset("json", data_files="turns.jsonl"',
      );
      if (source === "jsonl") expect(code).toContain('load_dataset("json", data_files="turns.jsonl"');
      const out = await runScript(
        dir,
        `${code}
print(json.dumps({"rows": len(sft), "columns": sft.column_names, "first": sft[0],
    "all_lists": all(isinstance(r["prompt"], list) and all(set(m) == {"role", "content"} for m in r["prompt"]) for r in sft)}))`,
      );
      const read = JSON.parse(out);
      expect(read.rows, source).toBeGreaterThan(0);
      expect(read.columns).toEqual(["prompt", "completion"]);
      expect(read.all_lists, source).toBe(true);
      expect(read.first.prompt[0].role).toBe("system");
      expect(read.first.prompt.at(-1).role).toBe("user");
      expect(read.first.completion).toEqual([{ role: "assistant", content: expect.stringContaining("Answer:") }]);
    }
  });
});
