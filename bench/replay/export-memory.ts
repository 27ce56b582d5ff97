/**
 * Peak memory of an export of long matches: `--matches` IPD matches of `--rounds` rounds (500: 1,000 decisions
 * whose observations carry the history, a ~9 MB episode each), stored, then exported whole in each format, each
 * format in a process of its own that opens the stored matches and does nothing else. The figure is how far JS heap used + external memory (ArrayBuffers, the embedded
 * store's WebAssembly memory) rose above what it was before the export, at its highest as the chunks are handed
 * over, each time after a full GC (what the export holds, not its garbage); and the largest chunk.
 *
 *   deno run -A bench/replay/export-memory.ts [--rounds 500] [--matches 2] [--backend pglite|postgres]
 *                                             [--formats episodes.jsonl,turns.jsonl,verl.jsonl,parquet]
 * (Not tensors.parquet by default: a long IPD's tensor has another shape than its variant's, which it refuses.)
 * Prints one JSON object on stdout.
 */
import { parseArgs } from "node:util";
import { exportDataset, exportFormat } from "../../db/export/index.ts";
import { ReplayStore, type StoreOptions } from "../../db/store.ts";
import { playRecorded, writeRecorded } from "../../test/support/recorded-matches.ts";
import { type Backend, emptyStoreOptions } from "../../test/support/stores.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "500" },
    matches: { type: "string", default: "2" },
    backend: { type: "string", default: "pglite" },
    formats: { type: "string", default: "episodes.jsonl,turns.jsonl,verl.jsonl,parquet" },
    /** Internal: measure this one format here, on the store these options open (the parent fills one). */
    format: { type: "string" },
    store: { type: "string" },
  },
});

interface Figures {
  readonly peakRiseMiB: number;
  readonly largestChunkMiB: number;
  readonly bytes: number;
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Exports the store `options` opens in `format`, in this process, and measures it. */
async function measure(format: string, options: StoreOptions): Promise<Figures> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const inUse = () => {
    const { heapUsed, external } = Deno.memoryUsage();
    return heapUsed + external;
  };
  const store = await ReplayStore.open(options);
  try {
    gc();
    const before = inUse();
    let peak = before, largest = 0, bytes = 0;
    for await (const chunk of exportDataset(store, exportFormat(format), { filter: {} })) {
      gc(); // what is held, not garbage not yet collected
      peak = Math.max(peak, inUse());
      largest = Math.max(largest, chunk.byteLength);
      bytes += chunk.byteLength;
    }
    return { peakRiseMiB: mib(peak - before), largestChunkMiB: mib(largest), bytes };
  } finally {
    await store.close();
  }
}

if (values.format) console.log(JSON.stringify(await measure(values.format, JSON.parse(values.store!))));
else {
  const { options, cleanup } = await emptyStoreOptions(values.backend as Backend);
  try {
    const store = await ReplayStore.open(options);
    const rounds = Number(values.rounds);
    await writeRecorded(
      store,
      Array.from({ length: Number(values.matches) }, (_, i) =>
        playRecorded({
          id: `long-${i}`,
          game: "ipd",
          config: { rounds },
          strategies: ["tit-for-tat", "random"],
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
        })),
    );
    await store.close();
    const results: Record<string, Figures> = {};
    for (const format of values.formats.split(",")) {
      const self = new URL(import.meta.url).pathname;
      const args = [
        "run",
        "-A",
        "--v8-flags=--expose-gc",
        self,
        "--format",
        format,
        "--store",
        JSON.stringify(options),
      ];
      const { code, stdout } = await new Deno.Command(Deno.execPath(), { args, stderr: "inherit" }).output();
      if (code !== 0) throw new Error(`measuring ${format} failed (exit ${code})`);
      results[format] = JSON.parse(new TextDecoder().decode(stdout));
      console.error(format, results[format]);
    }
    console.log(JSON.stringify({ backend: values.backend, rounds, matches: Number(values.matches), results }));
  } finally {
    await cleanup();
  }
}
