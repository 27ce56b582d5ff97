import * as arrow from "apache-arrow";
import { get, type IncomingHttpHeaders } from "node:http";
import * as parquet from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportDataset, type ExportFormat, type ExportOptions, FORMATS } from "../../db/export/index.ts";
import type { ReplayStore } from "../../db/store.ts";
import { datasetRoutes } from "../../server/api/datasets.ts";
import { type RunningServer, startHttpServer } from "../../server/http.ts";
import { playRecorded, writeRecorded } from "../support/recorded-matches.ts";
import { seedStore } from "../support/seed-store.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  trailers: NodeJS.Dict<string>;
}

/** GET with node:http, which (unlike fetch) hands over the trailers. */
function fetchWithTrailers(url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on(
        "end",
        () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks),
            trailers: res.trailers,
          }),
      );
      res.on("error", reject);
    }).on("error", reject);
  });
}

const KUHN = 1500;
const createdAt = (i: number) => new Date(Date.parse("2026-04-01T00:00:00Z") + i * 1000);

async function direct(t: TestStore, format: ExportFormat, options: Partial<ExportOptions> = {}): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const c of exportDataset(t.store, format, { filter: {}, ...options })) chunks.push(c);
  return Buffer.concat(chunks);
}

describe.each(BACKENDS)("GET /datasets (%s)", (backend) => {
  let t: TestStore;
  let server: RunningServer;
  let reads = 0;
  /** A slow store: reads past the first `reads` wait for `until`. */
  let slowAfter: { reads: number; until: Promise<unknown> } | undefined;
  beforeAll(async () => {
    t = await openTestStore(backend);
    await writeRecorded(t.store, [
      ...[0, 1, 2].map((i) =>
        playRecorded({ id: `ipd-${i}`, game: "ipd", strategies: ["random"], createdAt: createdAt(i) })
      ),
      ...Array.from(
        { length: KUHN },
        (_, i) =>
          playRecorded({ id: `kuhn-${i}`, game: "kuhn-poker", strategies: ["random"], createdAt: createdAt(10 + i) }),
      ),
    ]);
    const matches = t.store.endedMatches.bind(t.store);
    t.store.endedMatches = (...args) => {
      reads++;
      return slowAfter !== undefined && reads > slowAfter.reads
        ? slowAfter.until.then(() => matches(...args))
        : matches(...args);
    };
    server = await startHttpServer({ port: 0, host: "127.0.0.1" }, { routes: [datasetRoutes(t.store)] });
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it("lists the formats and the parameters they take", async () => {
    const res = await fetch(`${server.url}/datasets`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.formats.map((f: { name: string }) => f.name)).toEqual([...FORMATS]);
    expect(body.formats[3]).toMatchObject({ name: "parquet", contentType: "application/vnd.apache.parquet" });
    expect(Object.keys(body.parameters)).toEqual([
      "game",
      "version",
      "variant",
      "participant",
      "player",
      "model",
      "opponent",
      "status",
      "from",
      "to",
      "cursor",
      "discount",
    ]);
  });

  it("streams each format as the store exports it, with the final cursor, rows and matches as trailers", async () => {
    for (const format of FORMATS) {
      const res = await fetchWithTrailers(`${server.url}/datasets/${format}?game=ipd&discount=0.9`);
      expect(res.status, format).toBe(200);
      const binary = format === "parquet" || format === "tensors.parquet";
      expect(res.headers["content-type"]).toBe(binary ? "application/vnd.apache.parquet" : "application/x-ndjson");
      expect(res.headers["content-disposition"]).toMatch(/^attachment; filename="ludus-/);
      expect(res.trailers["x-ludus-matches"]).toBe("3");
      if (binary) {
        const table = arrow.tableFromIPC(parquet.readParquet(res.body).intoIPCStream());
        expect(table.numRows).toBe(Number(res.trailers["x-ludus-rows"]));
        expect(table.numRows).toBe(60);
        continue;
      }
      expect(res.body.equals(await direct(t, format, { filter: { game: "ipd" }, discount: 0.9 }))).toBe(true);
      const lines = res.body.toString("utf8").trim().split("\n");
      expect(lines).toHaveLength(Number(res.trailers["x-ludus-rows"]));
      // The trailer's cursor is the one on the last row, and resuming from it leaves nothing.
      const last = JSON.parse(lines.at(-1)!);
      expect(res.trailers["x-ludus-cursor"]).toBe(last.cursor ?? last.extra_info.cursor);
      const rest = await fetchWithTrailers(
        `${server.url}/datasets/${format}?game=ipd&discount=0.9&cursor=${res.trailers["x-ludus-cursor"]}`,
      );
      expect(rest.status).toBe(200);
      expect(rest.body).toHaveLength(0);
      expect(rest.trailers).toMatchObject({ "x-ludus-rows": "0", "x-ludus-cursor": res.trailers["x-ludus-cursor"] });
    }
  });

  it("answers bad filters, parameters and cursors with 400 and unknown formats with 404, saying what is allowed", async () => {
    const cases: [string, number, string, RegExp][] = [
      ["/datasets/csv", 404, "unknown_format", /formats: episodes\.jsonl, turns\.jsonl, verl\.jsonl, parquet/],
      ["/datasets/tensors.parquet", 400, "bad_query", /`tensors\.parquet` needs `game`/],
      [
        "/datasets/tensors.parquet?game=ipd&version=9",
        400,
        "bad_query",
        /ipd version 9 is not in this build \(versions: 1\)/,
      ],
      ["/datasets/turns.jsonl?game=chess", 400, "bad_query", /no game `chess`; games: ipd/],
      ["/datasets/turns.jsonl?limit=3", 400, "bad_query", /unknown parameter `limit`; allowed: .*cursor, discount/],
      ["/datasets/turns.jsonl?from=yesterday", 400, "bad_query", /`from` must be an ISO 8601 time/],
      ["/datasets/turns.jsonl?game=ipd&game=kuhn-poker", 400, "bad_query", /`game` is given more than once/],
      ["/datasets/turns.jsonl?discount=1.5", 400, "bad_query", /`discount` must be a number in \[0, 1\]/],
      ["/datasets/turns.jsonl?cursor=nonsense", 400, "bad_query", /not a cursor this server issued/],
    ];
    for (const [path, status, code, message] of cases) {
      const res = await fetch(server.url + path);
      expect(res.status, path).toBe(status);
      const { error } = await res.json();
      expect(error.code, path).toBe(code);
      expect(error.message, path).toMatch(message);
    }
    const episodes = await fetchWithTrailers(`${server.url}/datasets/episodes.jsonl?game=ipd`);
    const foreign = await fetch(
      `${server.url}/datasets/turns.jsonl?game=ipd&cursor=${episodes.trailers["x-ludus-cursor"]}`,
    );
    expect(foreign.status).toBe(400);
    expect((await foreign.json()).error.message).toMatch(/belongs to a different query/);
  });

  it("answers HEAD without exporting", async () => {
    const before = reads;
    const res = await fetch(`${server.url}/datasets/parquet`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.apache.parquet");
    expect(reads).toBe(before);
  });

  it("cuts the body short, without trailers, when the store fails midway", async () => {
    const sql = t.store.sql as { query: ReplayStore["sql"]["query"] };
    const query = sql.query;
    sql.query = (text, params) =>
      text.includes("string_agg") && (params?.[0] as string[]).includes("kuhn-400")
        ? Promise.reject(new Error("connection lost"))
        : query(text, params);
    try {
      const answer = await fetchWithTrailers(`${server.url}/datasets/turns.jsonl`).catch((e: Error) => e);
      if (!(answer instanceof Error)) expect(answer.trailers).not.toHaveProperty("x-ludus-rows");
    } finally {
      sql.query = query;
    }
    // A failure before the first byte is still answered with a status.
    sql.query = (text, params) =>
      text.includes("string_agg") ? Promise.reject(new Error("connection lost")) : query(text, params);
    try {
      const res = await fetch(`${server.url}/datasets/episodes.jsonl`);
      expect(res.status).toBe(500);
      expect((await res.json()).error).toEqual({
        code: "export_failed",
        message: "the replay store could not be read: connection lost",
      });
    } finally {
      sql.query = query;
    }
  });

  it("stops reading the store when the client goes away", async () => {
    const pages = Math.ceil((KUHN + 3) / 200);
    const before = reads;
    // The store is slow past the first page and its read-ahead, so the export is surely under way when the
    // client leaves, whatever the machine's speed.
    const gone = Promise.withResolvers<void>();
    slowAfter = { reads: before + 3, until: gone.promise.then(() => new Promise((r) => setTimeout(r, 100))) };
    await new Promise<void>((resolve, reject) => {
      const req = get(`${server.url}/datasets/turns.jsonl`, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", (e) => (e.message.includes("socket hang up") ? resolve() : reject(e)));
    }).finally(() => gone.resolve());
    // Whatever it read ahead, an export that stopped reads no further; a whole export would read every page.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const read = reads - before;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reads - before).toBe(read);
    expect(read).toBeLessThan(pages);
    slowAfter = undefined;
    // The server goes on answering.
    expect((await fetch(`${server.url}/datasets`)).status).toBe(200);
  });
});

describe("GET /datasets on a running server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("exports the matches the server recorded", async () => {
    const ids = await seedStore(server.server.store, {
      game: "ipd",
      matches: 2,
      strategies: ["tit-for-tat", "random"],
    });
    const res = await fetchWithTrailers(`${server.url}/datasets/turns.jsonl?game=ipd`);
    expect(res.status).toBe(200);
    const rows = res.body.toString("utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(rows).toHaveLength(40);
    expect(new Set(rows.map((r) => r.match_id))).toEqual(new Set(ids));
    expect(res.trailers["x-ludus-matches"]).toBe("2");
    const missing = await fetch(`${server.url}/nowhere`);
    expect((await missing.json()).error.message).toMatch(/GET \/datasets, GET \/datasets\/:format/);
  });
});
