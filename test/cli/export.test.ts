import * as arrow from "apache-arrow";
import { spawn } from "node:child_process";
import { once } from "node:events";
import process from "node:process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as parquet from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ludus } from "../support/cli.ts";
import { playRecorded, type Recorded, writeRecorded } from "../support/recorded-matches.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";
import { ReplayStore } from "../../db/store.ts";

const createdAt = (i: number) => new Date(Date.parse("2026-05-01T00:00:00Z") + i * 1000);
const RECORDED: Recorded[] = [
  ...[0, 1, 2].map((i) =>
    playRecorded({ id: `ipd-${i}`, game: "ipd", strategies: ["random"], createdAt: createdAt(i) })
  ),
  ...[3, 4, 5, 6].map((i) =>
    playRecorded({ id: `kuhn-${i}`, game: "kuhn-poker", strategies: ["random"], createdAt: createdAt(i) })
  ),
];
const DECISIONS = RECORDED.reduce((n, r) => n + r.steps.length, 0);
const KUHN_DECISIONS = RECORDED.filter((r) => r.match.game === "kuhn-poker").reduce((n, r) => n + r.steps.length, 0);

const jsonLines = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
const summaryCursor = (err: string) => /--cursor (\S+)\n$/.exec(err)?.[1];

describe.each(BACKENDS)("ludus export (%s)", (backend) => {
  let t: TestStore;
  let dir: string;
  let store: string[];
  beforeAll(async () => {
    t = await openTestStore(backend);
    await writeRecorded(t.store, RECORDED);
    await t.store.close(); // the command opens (and locks) the store itself
    store = t.databaseUrl ? ["--database-url", t.databaseUrl] : ["--data-dir", t.dataDir];
    dir = mkdtempSync(join(tmpdir(), "ludus-export-"));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it("writes a format to a file and says how many rows and where to resume", async () => {
    const file = join(dir, "turns.jsonl");
    const { code, out, err } = await ludus("export", "--format", "turns.jsonl", "--out", file, ...store);
    expect(err).toMatch(new RegExp(`^ludus: exported ${DECISIONS} rows \\(7 matches\\) of turns.jsonl to ${file} in `));
    expect(code).toBe(0);
    expect(out).toBe("");
    const rows = jsonLines(readFileSync(file, "utf8"));
    expect(rows).toHaveLength(DECISIONS);
    expect(summaryCursor(err)).toBe(rows.at(-1).cursor);

    const again = await ludus(
      "export",
      "--format",
      "turns.jsonl",
      "--out",
      file,
      "--cursor",
      summaryCursor(err)!,
      ...store,
    );
    expect(again.code).toBe(0);
    expect(again.err).toMatch(/no ended match to export after the cursor: .* has no rows; resume later with --cursor/);
    expect(readFileSync(file, "utf8")).toBe("");
  });

  it("writes to stdout with --out -, filtered and discounted", async () => {
    const { code, out, err } = await ludus(
      "export",
      "--format",
      "verl.jsonl",
      "--game",
      "kuhn-poker",
      "--discount",
      "0.5",
      "--out",
      "-",
      ...store,
    );
    expect(code).toBe(0);
    expect(err).toMatch(/exported \d+ rows \(4 matches\) of verl.jsonl to stdout/);
    const rows = jsonLines(out);
    expect(rows).toHaveLength(KUHN_DECISIONS);
    expect(new Set(rows.map((r) => r.data_source))).toEqual(new Set(["kuhn-poker"]));
  });

  it("writes Parquet that pyarrow-like readers load", async () => {
    const file = join(dir, "turns.parquet");
    const { code } = await ludus(
      "export",
      "--format",
      "parquet",
      "--out",
      file,
      "--from",
      "2026-05-01T00:00:03Z",
      ...store,
    );
    expect(code).toBe(0);
    const table = arrow.tableFromIPC(parquet.readParquet(readFileSync(file)).intoIPCStream());
    expect(table.numRows).toBe(KUHN_DECISIONS);
  });

  it("refuses bad flags, filters and cursors (exit 2), and a missing or locked store (exit 1)", async () => {
    const out = ["--out", join(dir, "x.jsonl")];
    const episodes = await ludus("export", "--format", "episodes.jsonl", "--out", "-", ...store);
    const cases: [string[], number, RegExp][] = [
      [["--format", "csv", ...out], 2, /expected one of: episodes\.jsonl, turns\.jsonl, verl\.jsonl, parquet/],
      [["--format", "turns.jsonl"], 2, /required option '--out <file\|->' not specified/],
      [["--format", "turns.jsonl", "--discount", "1.5", ...out], 2, /expected a number in \[0, 1\]/],
      [["--format", "turns.jsonl", "--game", "chess", ...out, ...store], 2, /no game `chess`; games: ipd/],
      [["--format", "turns.jsonl", "--from", "soon", ...out, ...store], 2, /`from` must be an ISO 8601 time/],
      [
        ["--format", "turns.jsonl", "--cursor", summaryCursor(episodes.err)!, ...out, ...store],
        2,
        /`cursor` belongs to a different query/,
      ],
      [["--format", "turns.jsonl", "--server", "ftp://x", ...out], 2, /expected an http:\/\/ or https:\/\/ address/],
      [
        ["--format", "turns.jsonl", "--server", "http://127.0.0.1:1", "--data-dir", dir, ...out],
        2,
        /option '--server <url>' cannot be used with option '--data-dir <dir>'/,
      ],
      [
        ["--format", "turns.jsonl", "--data-dir", join(dir, "nowhere"), ...out],
        1,
        /no replay store in .*nowhere.replay; .*--server/,
      ],
      [
        ["--format", "turns.jsonl", "--out", join(dir, "no", "such", "dir.jsonl"), ...store],
        1,
        /cannot write .*dir\.jsonl/,
      ],
    ];
    for (const [argv, exit, message] of cases) {
      const { code, err } = await ludus("export", ...argv);
      expect(err, argv.join(" ")).toMatch(message);
      expect(code, argv.join(" ")).toBe(exit);
    }
    if (backend === "pglite") {
      // A running server holds the embedded store: the message points to --server.
      const holder = await ReplayStore.open({ dataDir: t.dataDir });
      try {
        const { code, err } = await ludus("export", "--format", "turns.jsonl", ...out, ...store);
        expect(err).toMatch(new RegExp(`is in use by process ${Deno.pid}; .*\`ludus export --server http`));
        expect(code).toBe(1);
      } finally {
        await holder.close();
      }
    }
  });
});

describe("ludus export --server", () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    await writeRecorded(server.server.store, RECORDED);
    dir = mkdtempSync(join(tmpdir(), "ludus-export-"));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("streams the export from a running server, with the rows and cursor of its trailers", async () => {
    const file = join(dir, "episodes.jsonl");
    const { code, err } = await ludus("export", "--server", server.url, "--format", "episodes.jsonl", "--out", file);
    expect(err).toMatch(
      /^ludus: exported 7 rows \(7 matches\) of episodes.jsonl to .*episodes.jsonl in .*--cursor \S+\n$/,
    );
    expect(code).toBe(0);
    const rows = jsonLines(readFileSync(file, "utf8"));
    expect(rows.map((r) => r.match_id)).toEqual(RECORDED.map((r) => r.match.id));
    expect(summaryCursor(err)).toBe(rows.at(-1).cursor);

    const stdout = await ludus(
      "export",
      "--server",
      server.url,
      "--format",
      "turns.jsonl",
      "--game",
      "ipd",
      "--out",
      "-",
    );
    expect(stdout.code).toBe(0);
    expect(jsonLines(stdout.out)).toHaveLength(DECISIONS - KUHN_DECISIONS);
  });

  it("passes the server's refusals on, and says when it cannot reach it", async () => {
    const bad = await ludus(
      "export",
      "--server",
      server.url,
      "--format",
      "turns.jsonl",
      "--cursor",
      "zzz",
      "--out",
      "-",
    );
    expect(bad.err).toMatch(/`cursor` is not a cursor this server issued/);
    expect(bad.code).toBe(2);
    const gone = await ludus("export", "--server", "http://127.0.0.1:1", "--format", "turns.jsonl", "--out", "-");
    expect(gone.err).toMatch(/^ludus: error: cannot reach http:\/\/127.0.0.1:1: /);
    expect(gone.code).toBe(1);
  });
});

describe("ludus export of long matches", () => {
  it("writes every JSONL format with V8's heap capped at 64 MB: pages shrink as the decisions grow", async () => {
    // 150 IPD matches of 100 rounds: 30,000 decisions whose observations carry the history (~2 kB each), ~70 MB of
    // them. One page used to take 20,000 decisions whatever their size, and ran out of heap here. (Parquet is not
    // held to it: its writer pulls pages ahead of the file it writes, and under load it needs more.)
    const t = await openTestStore("pglite");
    const long = Array.from({ length: 150 }, (_, i) =>
      playRecorded({
        id: `long-${i}`,
        game: "ipd",
        config: { rounds: 100 },
        strategies: ["random"],
        createdAt: createdAt(i),
      }));
    await writeRecorded(t.store, long);
    await t.store.close();
    const dir = mkdtempSync(join(tmpdir(), "ludus-export-long-"));
    try {
      for (const format of ["episodes.jsonl", "turns.jsonl", "verl.jsonl"]) {
        const file = join(dir, format);
        const run = spawn("node", [
          "cli/launch.mjs",
          "ludus",
          "export",
          "--data-dir",
          t.dataDir,
          "--format",
          format,
          "--out",
          file,
        ], {
          cwd: new URL("../..", import.meta.url).pathname,
          env: { ...process.env, DATABASE_URL: "", DENO_V8_FLAGS: "--max-old-space-size=64" },
          stdio: ["ignore", "ignore", "pipe"],
        });
        let err = "";
        run.stderr!.on("data", (d) => (err += d));
        const [code] = await once(run, "exit");
        expect(err, format).toMatch(format === "episodes.jsonl" ? /exported 150 rows/ : /exported 30,000 rows/);
        expect(code, err).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await t.close();
    }
  });
});
