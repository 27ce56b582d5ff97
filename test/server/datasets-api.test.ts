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
import { BACKENDS, emptyStoreOptions, openTestStore, type TestStore } from "../support/stores.ts";
import { RawBot } from "../support/raw-bot.ts";
import { getGame } from "../../games/registry.ts";

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

const tableOf = (bytes: Uint8Array) => arrow.tableFromIPC(parquet.readParquet(bytes).intoIPCStream());

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
      "config",
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

/** The connection's idle limit on the running server: far below what its slow export below takes. */
const IDLE_MS = 300;

describe.each(BACKENDS)("tensors.parquet on a running server (%s)", (backend) => {
  let server: TestServer;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const empty = await emptyStoreOptions(backend);
    cleanup = empty.cleanup;
    // A withdrawn seat aborts its match, as a Gymnasium or PettingZoo env closed mid-episode does.
    server = await startTestServer({
      databaseUrl: empty.options.databaseUrl,
      idleMs: IDLE_MS,
      conduct: { onTimeout: "abort" },
    });
  });
  afterAll(async () => {
    await server.close();
    await cleanup();
  });

  it("exports a simultaneous game whose match a seat withdrew from mid-turn, with the seat that moved", async () => {
    const host = await RawBot.connect(server.wsUrl, await server.token());
    const guest = await RawBot.connect(server.wsUrl, await server.token());
    host.send({ type: "create", game: "ipd" });
    const { match, invite } = await host.next("created");
    guest.send({ type: "join", match: invite });
    const turn = await guest.next("turn");
    await host.next("turn");
    guest.act(match, turn.seq, { type: "cooperate" });
    await guest.next("ack");
    host.send({ type: "withdraw", match, reason: "env closed" });
    expect(await guest.next("match_end")).toMatchObject({ reason: "aborted", culprit: 0 });
    await seedStore(server.server.store, { game: "ipd", matches: 1, strategies: ["random"] });
    const res = await fetchWithTrailers(`${server.url}/datasets/tensors.parquet?game=ipd`);
    expect(res.status).toBe(200);
    const table = tableOf(res.body);
    expect(table.numRows).toBe(Number(res.trailers["x-ludus-rows"]));
    const rows = table.toArray().filter((r) => r.match_id === match);
    expect(rows.map((r) => [r.seat, r.reward, r.done])).toEqual([[1, 0, true]]);
    expect(rows[0].action_id).toBeGreaterThanOrEqual(0);
    host.close();
    guest.close();
  });

  it("exports the default shapes whatever config a stranger played, and another shape with `config`", async () => {
    const store = server.server.store;
    const at = (i: number) => new Date(Date.parse("2026-06-01T00:00:00Z") + i * 1000);
    await writeRecorded(store, [
      playRecorded({ id: "kuhn-a", game: "kuhn-poker", strategies: ["random"], createdAt: at(0) }),
      playRecorded({
        id: "kuhn-3",
        game: "kuhn-poker",
        config: { rounds: 3 },
        strategies: ["random"],
        createdAt: at(1),
      }),
      playRecorded({ id: "kuhn-b", game: "kuhn-poker", strategies: ["random"], createdAt: at(2) }),
    ]);
    const plain = await fetchWithTrailers(`${server.url}/datasets/tensors.parquet?game=kuhn-poker`);
    expect(plain.status).toBe(200);
    const table = tableOf(plain.body);
    expect(new Set(table.toArray().map((r) => r.match_id))).toEqual(new Set(["kuhn-a", "kuhn-b"]));
    const game = getGame("kuhn-poker");
    const shape = (config: Record<string, unknown>) =>
      JSON.stringify(
        game.observationShape(game.schema.parse({ ...game.variants[game.defaultVariant].config, ...config })),
      );
    expect(table.schema.metadata.get("ludus.observation_shape")).toBe(shape({}));

    const config = encodeURIComponent(JSON.stringify({ rounds: 3 }));
    const three = await fetchWithTrailers(`${server.url}/datasets/tensors.parquet?game=kuhn-poker&config=${config}`);
    expect(three.status).toBe(200);
    const other = tableOf(three.body);
    expect(new Set(other.toArray().map((r) => r.match_id))).toEqual(new Set(["kuhn-3"]));
    expect(other.schema.metadata.get("ludus.observation_shape")).toBe(shape({ rounds: 3 }));
    expect(shape({ rounds: 3 })).not.toBe(shape({}));
    // Its cursor resumes that export and no other.
    const resumed = await fetchWithTrailers(
      `${server.url}/datasets/tensors.parquet?game=kuhn-poker&config=${config}&cursor=${
        three.trailers["x-ludus-cursor"]
      }`,
    );
    expect([resumed.status, resumed.trailers["x-ludus-rows"]]).toEqual([200, "0"]);
    const crossed = await fetch(
      `${server.url}/datasets/tensors.parquet?game=kuhn-poker&cursor=${three.trailers["x-ludus-cursor"]}`,
    );
    expect(crossed.status).toBe(400);
    for (
      const [query, message] of [
        ["game=kuhn-poker&config=rounds", /`config` must be a JSON object/],
        [`game=kuhn-poker&config=${encodeURIComponent('{"rounds":"x"}')}`, /is not a kuhn-poker config: rounds/],
        [`format=x&game=kuhn-poker`, /unknown parameter `format`/],
      ] as const
    ) {
      const res = await fetch(`${server.url}/datasets/tensors.parquet?${query}`);
      expect(res.status, query).toBe(400);
      expect((await res.json()).error.message, query).toMatch(message);
    }
    const turns = await fetch(`${server.url}/datasets/turns.jsonl?config=${config}`);
    expect((await turns.json()).error.message).toMatch(/`config` picks the shapes of `tensors\.parquet`/);
  });

  it("answers a slow export with its status and headers at once and streams it past the idle limit", async () => {
    const store = server.server.store;
    // More than a page of matches, so that the export is silent between pages too.
    const at = (i: number) => new Date(Date.parse("2026-07-01T00:00:00Z") + i * 1000);
    await writeRecorded(
      store,
      Array.from(
        { length: 200 },
        (_, i) => playRecorded({ id: `slow-${i}`, game: "kuhn-poker", strategies: ["random"], createdAt: at(i) }),
      ),
    );
    const ended = store.endedMatches.bind(store);
    let reads = 0;
    // Every read of the store takes longer than the connection may stay silent: the export is busy, not the client.
    store.endedMatches = async (...args) => {
      reads++;
      await new Promise((resolve) => setTimeout(resolve, 2 * IDLE_MS));
      return ended(...args);
    };
    try {
      const answer = await fetchWithTrailers(`${server.url}/datasets/tensors.parquet?game=kuhn-poker`);
      expect(answer.status).toBe(200);
      expect(answer.headers["content-type"]).toBe("application/vnd.apache.parquet");
      const kuhn = await ended({ game: "kuhn-poker", ended: true }, 10_000, 0);
      expect(answer.trailers["x-ludus-matches"]).toBe(String(kuhn.length));
      expect(tableOf(answer.body).numRows).toBe(Number(answer.trailers["x-ludus-rows"]));
      expect(reads).toBeGreaterThan(1);
    } finally {
      store.endedMatches = ended;
    }
  });
});

describe("a NUL in a path or query", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("is refused with 400 on every route the server lists", async () => {
    const missing = await fetch(`${server.url}/no-such-route`);
    const listed = (await missing.json()).error.message.replace(/^.*routes: /, "").split(", ") as string[];
    const paths = [
      ...new Set(
        listed.map((route) => route.replace(/^[A-Z]+ /, "").replace(/:[a-z]+/gi, "x%00").replace(/\*$/, "x%00")),
      ),
    ];
    expect(paths.length).toBeGreaterThan(10);
    for (const path of paths) {
      const urls = [`${server.url}${path.replaceAll("%00", "")}?game=ipd%00`];
      if (path.includes("%00")) urls.push(`${server.url}${path}`);
      for (const url of urls) {
        const res = await fetch(url);
        expect(res.status, url).toBe(400);
        expect((await res.json()).error, url).toEqual({
          code: "bad_path",
          message: "the path or query holds a NUL character (%00), which no route accepts",
        });
      }
    }
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
