import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  exportDataset,
  type ExportFormat,
  exportFormat,
  type ExportOptions,
  type ExportProgress,
  FORMATS,
  parseDiscount,
} from "../../db/export/index.ts";
import { parseFilter, QueryError } from "../../db/query.ts";
import type { MatchRecord, StepRecordRow } from "../../db/records.ts";
import type { ReplayStore } from "../../db/store.ts";
import { getGame } from "../../games/registry.ts";
import { playRecorded, type Recorded, writeRecorded } from "../support/recorded-matches.ts";
import { SEAT_FILTER_EXPECTED, SEAT_FILTER_MATCHES } from "../support/seat-filter-matches.ts";
import { seedStore } from "../support/seed-store.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

type Row = Record<string, unknown> & { match_id: string; seq: number };

const T0 = Date.parse("2026-03-01T00:00:00Z");
const at = (minute: number) => new Date(T0 + minute * 60_000);

/** IPD, 3 rounds, tit-for-tat against always-defect: rewards [0,5], [1,1], [1,1] — computed by hand below. */
const known = playRecorded({
  id: "known-ipd",
  game: "ipd",
  config: { rounds: 3 },
  strategies: ["tit-for-tat", "always-defect"],
  createdAt: at(0),
});

const ALICE_MODEL = {
  model: "qwen-7b",
  endpoint: "http://127.0.0.1:8000/v1",
  sampling: { temperature: 0.7, seed: 3, stop: '["\\n"]' },
} as const;

/** Token log-probabilities as an LLM seat attaches them (meta.logprobs). */
const logprobsOf = (text: string) =>
  text.split(" ").map((token, i) => ({
    token,
    logprob: -(i + 1) / 4,
    top_logprobs: [{ token, logprob: -(i + 1) / 4 }],
  }));

/**
 * A Kuhn match whose seat 0 is an LLM (its model, endpoint and sampling declared): its prompts, responses,
 * token counts, renderer, log-probabilities, and one refused attempt.
 */
function withLlmSeat(recorded: Recorded): Recorded {
  const steps = recorded.steps.map((row, i): StepRecordRow =>
    row.seat !== 0 ? row : {
      ...row,
      meta: {
        prompt: [{ role: "system", content: "rules" }, { role: "user", content: `turn ${row.turn}` }],
        response: `I choose [${(row.action as { type: string }).type}]`,
        usage: { prompt_tokens: 100 + i, completion_tokens: 7 },
        renderer: "spiral",
        logprobs: logprobsOf(`I choose [${(row.action as { type: string }).type}]`),
      },
      ...(i === 0
        ? {
          attempts: [{ input: "raise", code: "illegal_action", message: "not legal now; legal: check, bet" }],
          error: { code: "illegal_action", message: "not legal now; legal: check, bet" },
        }
        : {}),
    }
  );
  return {
    match: {
      ...recorded.match,
      seats: [{ kind: "llm", name: "llm-alice", tokenId: "tok-alice", ...ALICE_MODEL }, recorded.match.seats[1]!],
    },
    steps,
  };
}

/** An IPD match whose seat 0 timed out in round 2 and forfeited: its last row has no action. */
function forfeited(recorded: Recorded): Recorded {
  const [first, second, third] = recorded.steps;
  const lost: StepRecordRow = {
    ...third,
    action: null,
    legal: false,
    error: { code: "timeout", message: "the seat's clock ran out" },
    rewards: null,
  };
  return {
    match: {
      ...recorded.match,
      statuses: ["TIMEOUT", "DONE"],
      returns: first.rewards ?? second.rewards,
      endReason: "forfeit",
      culprit: 0,
      steps: 1,
    },
    steps: [first, second, lost],
  };
}

const unfinished = (recorded: Recorded): Recorded => ({
  match: { ...recorded.match, returns: null, endReason: null, endedAt: null, statuses: ["ACTIVE", "ACTIVE"] },
  steps: recorded.steps.slice(0, 3),
});

const RECORDED: Recorded[] = [
  known,
  ...[1, 2, 3, 4].map((i) =>
    playRecorded({ id: `ipd-${i}`, game: "ipd", strategies: ["random", "grim-trigger"], createdAt: at(i) })
  ),
  ...[5, 6, 7, 8, 9].map((i) =>
    playRecorded({ id: `kuhn-${i}`, game: "kuhn-poker", strategies: ["random"], createdAt: at(i) })
  ),
  withLlmSeat(
    playRecorded({ id: "kuhn-llm", game: "kuhn-poker", strategies: ["always-raise", "random"], createdAt: at(10) }),
  ),
  ...[11, 12].map((i) =>
    playRecorded({ id: `leduc-${i}`, game: "leduc-poker", strategies: ["random"], createdAt: at(i) })
  ),
  forfeited(playRecorded({ id: "ipd-forfeit", game: "ipd", strategies: ["random"], createdAt: at(13) })),
  // Same creation time as the next: exports follow the order matches end in (here, the order they are written).
  playRecorded({ id: "tie-b", game: "tic-tac-toe", strategies: ["random"], createdAt: at(14) }),
  playRecorded({ id: "tie-a", game: "tic-tac-toe", strategies: ["random"], createdAt: at(14) }),
  unfinished(playRecorded({ id: "still-running", game: "ipd", strategies: ["random"], createdAt: at(15) })),
];

const ENDED = RECORDED.filter((r) => r.match.endedAt !== null);
/** Ended matches in export order: the order they ended in, which is the order they are written below. */
const ORDER = ENDED;
const DECISIONS = ENDED.reduce((n, r) => n + r.steps.length, 0);

async function collect(
  store: ReplayStore,
  format: ExportFormat,
  options: Partial<ExportOptions> = {},
): Promise<{ bytes: Uint8Array; progress: ExportProgress[] }> {
  const progress: ExportProgress[] = [];
  const chunks: Uint8Array[] = [];
  for await (
    const chunk of exportDataset(store, format, { filter: {}, onProgress: (p) => progress.push(p), ...options })
  ) chunks.push(chunk);
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((offset, c) => (bytes.set(c, offset), offset + c.length), 0);
  return { bytes, progress };
}

const lines = (bytes: Uint8Array): Row[] =>
  new TextDecoder().decode(bytes).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));

async function jsonl(store: ReplayStore, format: ExportFormat, options: Partial<ExportOptions> = {}): Promise<Row[]> {
  return lines((await collect(store, format, options)).bytes);
}

/** A decision's (or, in episodes, a match's) identity in any JSONL format. */
const key = (r: Row): string => {
  const info = (r.extra_info ?? r) as Row;
  return `${info.match_id}#${info.seq ?? ""}`;
};

/**
 * Parquet rows as plain objects, JSON-text columns parsed and the game-shaped ones under the game's id, to compare
 * with turns.jsonl.
 */
function parquetRows(bytes: Uint8Array): Row[] {
  const table = arrow.tableFromIPC(parquet.readParquet(bytes).intoIPCStream());
  const json = ["observation", "action"]; // the game-shaped ones; the other JSON columns are text in JSONL too
  return table.toArray().map((row) => {
    const o = row.toJSON() as Record<string, unknown>;
    for (const k of json) if (typeof o[k] === "string") o[k] = JSON.parse(o[k] as string);
    for (const k of ["observation", "action"]) if (o[k] !== null) o[k] = { [o.game as string]: o[k] };
    return o as Row;
  });
}

/** A game-shaped value as the JSONL formats write it: under the game's id. */
const perGame = (game: string, value: unknown) => (value === null ? null : { [game]: value });

/** A decision of a `game` match as episodes.jsonl writes it, its fields in the line's order. */
const episodeStep = (game: string) => (s: StepRecordRow) => ({
  seq: s.seq,
  turn: s.turn,
  seat: s.seat,
  observation: perGame(game, s.observation),
  action: perGame(game, s.action),
  input: s.input == null ? null : JSON.stringify(s.input),
  legal: s.legal,
  error: s.error === null ? null : JSON.stringify(s.error),
  attempts: JSON.stringify(s.attempts),
  defaulted: s.defaulted,
  latency_ms: s.latencyMs,
  meta: s.meta === null ? null : JSON.stringify(s.meta),
  rewards: s.rewards,
  at: s.at.toISOString(),
  prompt: s.prompt ?? null,
  legal_ids: s.legalIds ?? null,
});

/** Each episode line's `steps` array as it stands in the text, by match id. */
async function episodeStepTexts(store: ReplayStore): Promise<Map<string, string>> {
  const text = new TextDecoder().decode((await collect(store, "episodes.jsonl")).bytes);
  return new Map(
    text.split("\n").filter((l) => l !== "").map((line) => {
      const from = line.indexOf(',"steps":') + ',"steps":'.length, to = line.lastIndexOf(',"cursor":');
      return [(JSON.parse(line) as Row).match_id, line.slice(from, to)];
    }),
  );
}

describe.each(BACKENDS)("dataset export (%s)", (backend) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(backend);
    await writeRecorded(t.store, RECORDED);
  });
  afterAll(() => t.close());

  it("exports every ended match in the order they ended, never an unfinished one", async () => {
    const episodes = await jsonl(t.store, "episodes.jsonl");
    expect(episodes.map((e) => e.match_id)).toEqual(ORDER.map((r) => r.match.id));
    const turns = await jsonl(t.store, "turns.jsonl");
    expect(turns).toHaveLength(DECISIONS);
    expect(turns.some((r) => r.match_id === "still-running")).toBe(false);
    expect(await jsonl(t.store, "verl.jsonl")).toHaveLength(DECISIONS);
    expect(parquetRows((await collect(t.store, "parquet")).bytes)).toHaveLength(DECISIONS);
  });

  it("writes the full record of each match in episodes.jsonl", async () => {
    const [episode] = await jsonl(t.store, "episodes.jsonl", { filter: { game: "ipd", to: at(0.5) } });
    const { match, steps } = known;
    expect(episode).toMatchObject({
      match_id: "known-ipd",
      game: "ipd",
      game_version: match.gameVersion,
      variant: "classic",
      config: { ipd: match.config },
      seed: match.seed,
      seats: match.seats,
      conduct: match.conduct,
      statuses: ["DONE", "DONE"],
      returns: [2, 7],
      end_reason: "completed",
      error: null,
      culprit: null,
      game_steps: 3,
      created_at: match.createdAt.toISOString(),
      ended_at: match.endedAt!.toISOString(),
    });
    expect(episode.steps).toEqual(steps.map(episodeStep("ipd")));
    expect(typeof episode.cursor).toBe("string");
  });

  it("computes step rewards, returns and discounted returns-to-go as a hand computation does", async () => {
    const known3 = { filter: { game: "ipd" as const, to: at(0.5) } };
    // Rewards per round: [0,5], [1,1], [1,1]. With γ = 0.5, seat 0: G2 = 1, G1 = 1 + 0.5·1 = 1.5,
    // G0 = 0 + 0.5·1.5 = 0.75; seat 1: G2 = 1, G1 = 1.5, G0 = 5 + 0.75 = 5.75.
    const half = await jsonl(t.store, "turns.jsonl", { ...known3, discount: 0.5 });
    expect(half.map((r) => [r.turn, r.seat, r.reward, r.return, r.return_to_go])).toEqual([
      [0, 0, 0, 2, 0.75],
      [0, 1, 5, 7, 5.75],
      [1, 0, 1, 2, 1.5],
      [1, 1, 1, 7, 1.5],
      [2, 0, 1, 2, 1],
      [2, 1, 1, 7, 1],
    ]);
    // Undiscounted, the return-to-go at the first turn is the return.
    const whole = await jsonl(t.store, "turns.jsonl", known3);
    expect(whole.map((r) => r.return_to_go)).toEqual([2, 7, 2, 2, 1, 1]);
    // γ = 0: only the step's own reward.
    const myopic = await jsonl(t.store, "turns.jsonl", { ...known3, discount: 0 });
    expect(myopic.map((r) => r.return_to_go)).toEqual(myopic.map((r) => r.reward));
  });

  it("gives every decision of a sequential game its step's reward, and the undiscounted return-to-go sums to the return", async () => {
    const turns = await jsonl(t.store, "turns.jsonl", { filter: { game: "leduc-poker" } });
    for (const { match, steps } of ENDED.filter((r) => r.match.game === "leduc-poker")) {
      const rows = turns.filter((r) => r.match_id === match.id);
      expect(rows.map((r) => r.seq)).toEqual(steps.map((s) => s.seq));
      for (const row of rows) {
        const seat = row.seat as number;
        const reward = steps.find((s) => s.turn === row.turn && s.rewards)?.rewards?.[seat] ?? 0;
        const toGo = steps.filter((s) => s.turn >= (row.turn as number) && s.rewards)
          .reduce((sum, s) => sum + s.rewards![seat], 0);
        expect(row.reward).toBe(reward);
        expect(row.return_to_go).toBeCloseTo(toGo, 9);
        expect(row.return).toBe(match.returns![seat]);
      }
      expect(rows.filter((r) => r.turn === 0).map((r) => r.return_to_go)).toEqual(
        rows.filter((r) => r.turn === 0).map((r) => r.return),
      );
    }
  });

  it("fills the turns view from the record: prompt, LLM messages, response, tokens, attempts, participants", async () => {
    const turns = await jsonl(t.store, "turns.jsonl", { filter: { participant: "tok-alice" } });
    const recorded = ENDED.find((r) => r.match.id === "kuhn-llm")!;
    expect(turns.map((r) => r.seq)).toEqual(recorded.steps.map((s) => s.seq));
    const kuhn = getGame("kuhn-poker");
    for (const [i, row] of turns.entries()) {
      const step = recorded.steps[i];
      expect(row).toMatchObject({
        match_id: "kuhn-llm",
        game: "kuhn-poker",
        variant: "standard",
        seat: step.seat,
        role: `seat${step.seat}`,
        ...(step.seat === 0
          ? {
            participant_kind: "llm",
            participant_name: "llm-alice",
            participant_token: "tok-alice",
            participant_strategy: null,
            participant_model: ALICE_MODEL.model,
            participant_endpoint: ALICE_MODEL.endpoint,
            participant_sampling: expect.any(String),
            renderer: "spiral",
            logprobs: JSON.stringify(step.meta!.logprobs),
          }
          : {
            participant_kind: "builtin",
            participant_name: "random",
            participant_token: null,
            participant_strategy: "random",
            participant_model: null,
            participant_endpoint: null,
            participant_sampling: null,
            renderer: null,
            logprobs: null,
          }),
        participant_policy_id: null,
        participant_policy_version: null,
        participant_greedy: null,
        participant_learner: false,
        turn: step.turn,
        observation: { "kuhn-poker": step.observation },
        prompt: kuhn.describe(step.observation),
        messages: step.meta?.prompt ? JSON.stringify(step.meta.prompt) : null,
        response: step.meta?.response ?? null,
        action: { "kuhn-poker": step.action },
        legal: true,
        error: step.error && JSON.stringify(step.error),
        attempts: step.attempts.length,
        defaulted: null,
        latency_ms: 1.5,
        prompt_tokens: step.seat === 0 ? (step.meta!.usage as { prompt_tokens: number }).prompt_tokens : null,
        completion_tokens: step.seat === 0 ? 7 : null,
      });
    }
    expect(turns[0]).toMatchObject({ attempts: 1 });
    expect(JSON.parse(turns[0].error as string)).toMatchObject({ code: "illegal_action" });
    // Sampling parameters are JSON text (whatever the seat declared, so readers never meet two types in one column).
    expect(JSON.parse(turns[0].participant_sampling as string)).toEqual(ALICE_MODEL.sampling);
    // Only the match's last row carries the cursor that resumes after it.
    expect(turns.map((r) => r.cursor === null)).toEqual(turns.map((_, i) => i < turns.length - 1));
  });

  it("keeps the decision a forfeit cut short, without an action", async () => {
    const turns = await jsonl(t.store, "turns.jsonl", { filter: { game: "ipd", from: at(13) } });
    expect(turns.map((r) => [r.turn, r.seat, r.legal, r.action === null])).toEqual([
      [0, 0, true, false],
      [0, 1, true, false],
      [1, 0, false, true],
    ]);
    expect(turns[2]).toMatchObject({ reward: 0, return_to_go: 0 });
    expect(JSON.parse(turns[2].error as string)).toMatchObject({ code: "timeout" });
  });

  it("shapes verl.jsonl rows: rules and the observation's text, or the LLM's own messages", async () => {
    const rows = await jsonl(t.store, "verl.jsonl", { filter: { game: "kuhn-poker" }, discount: 0.9 });
    const turns = await jsonl(t.store, "turns.jsonl", { filter: { game: "kuhn-poker" }, discount: 0.9 });
    expect(rows).toHaveLength(turns.length);
    const kuhn = getGame("kuhn-poker");
    for (const [i, row] of rows.entries()) {
      const turn = turns[i];
      const match = ENDED.find((r) => r.match.id === turn.match_id)!.match as MatchRecord;
      expect(row).toEqual({
        data_source: "kuhn-poker",
        prompt: (turn.messages && JSON.parse(turn.messages as string)) ??
          [{ role: "system", content: kuhn.rules(match.config) }, { role: "user", content: turn.prompt }],
        ability: "game",
        reward_model: { style: "rule", ground_truth: JSON.stringify((turn.action as Row)["kuhn-poker"]) },
        extra_info: {
          match_id: turn.match_id,
          game_version: turn.game_version,
          variant: turn.variant,
          turn: turn.turn,
          seq: turn.seq,
          seat: turn.seat,
          role: turn.role,
          ...Object.fromEntries(Object.entries(turn).filter(([k]) => k.startsWith("participant_"))),
          renderer: turn.renderer,
          logprobs: turn.logprobs,
          legal: turn.legal,
          response: turn.response,
          reward: turn.reward,
          return: turn.return,
          return_to_go: turn.return_to_go,
          cursor: turn.cursor === null ? null : expect.any(String), // a cursor of verl.jsonl's own
        },
      });
    }
  });

  it("writes the turns view as Parquet that reads back equal to turns.jsonl", async () => {
    const turns = await jsonl(t.store, "turns.jsonl", { discount: 0.95 });
    const { bytes } = await collect(t.store, "parquet", { discount: 0.95, pageSize: 4 });
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("PAR1");
    // The same rows; the cursors differ, as a cursor resumes only the format that issued it.
    const withoutCursor = (rows: Row[]) => rows.map(({ cursor, ...r }) => ({ ...r, cursor: cursor !== null }));
    expect(withoutCursor(parquetRows(bytes))).toEqual(withoutCursor(turns));
    const schema = parquet.readSchema(bytes);
    expect(arrow.tableFromIPC(schema.intoIPCStream()).schema.fields.map((f) => `${f.name}:${f.type}`)).toContain(
      "return_to_go:Float64",
    );
  });

  it("writes a valid, empty Parquet file when nothing matches", async () => {
    const { bytes } = await collect(t.store, "parquet", { filter: { game: "holdem" } });
    const table = arrow.tableFromIPC(parquet.readParquet(bytes).intoIPCStream());
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => f.name)).toContain("observation");
    expect((await collect(t.store, "turns.jsonl", { filter: { game: "holdem" } })).bytes).toHaveLength(0);
  });

  it("fails an export whose store fails midway, leaving no Parquet file a reader would accept", async () => {
    const sql = t.store.sql as { query: ReplayStore["sql"]["query"] };
    const query = sql.query;
    // The second page (pageSize 3) fails, whichever export asks for it.
    const second = ORDER[3].match.id;
    sql.query = (text, params) =>
      text.includes("string_agg") && (params?.[0] as string[]).includes(second)
        ? Promise.reject(new Error("connection lost"))
        : query(text, params);
    try {
      for (const format of ["turns.jsonl", "parquet"] as const) {
        const chunks: Uint8Array[] = [];
        const run = async () => {
          for await (const chunk of exportDataset(t.store, format, { filter: {}, pageSize: 3 })) chunks.push(chunk);
        };
        await expect(run(), format).rejects.toThrow("connection lost");
        const bytes = new Uint8Array(chunks.flatMap((c) => [...c]));
        if (format === "parquet") expect(() => parquet.readParquet(bytes)).toThrow();
        else {expect(new Set(lines(bytes).map((r) => r.match_id))).toEqual(
            new Set(ORDER.slice(0, 3).map((r) => r.match.id)),
          );}
      }
    } finally {
      sql.query = query;
    }
  });

  it("filters by game, variant, participant and creation time", async () => {
    const ids = async (filter: ExportOptions["filter"]) =>
      (await jsonl(t.store, "episodes.jsonl", { filter })).map((e) => e.match_id);
    expect(await ids({ game: "kuhn-poker" })).toEqual(["kuhn-5", "kuhn-6", "kuhn-7", "kuhn-8", "kuhn-9", "kuhn-llm"]);
    expect(await ids({ game: "ipd", variant: "lola" })).toEqual([]);
    expect(await ids({ participant: "llm-alice" })).toEqual(["kuhn-llm"]);
    expect(await ids({ participant: "grim-trigger" })).toEqual(["ipd-1", "ipd-2", "ipd-3", "ipd-4"]);
    expect(await ids({ from: at(11), to: at(14) })).toEqual(["leduc-11", "leduc-12", "ipd-forfeit"]);
    expect(await ids({ from: at(14) })).toEqual(["tie-b", "tie-a"]);
  });

  // tensors.parquet needs one game: its resume is tested with its own rows (tensors-export.test.ts).
  for (const format of FORMATS.filter((f) => f !== "tensors.parquet")) {
    it(`resumes ${format} from a progress cursor with exactly the remaining rows`, async () => {
      const whole = await collect(t.store, format, { pageSize: 3 });
      const pages = whole.progress;
      expect(pages.map((p) => p.matches)).toEqual([3, 6, 9, 12, 15, 16]);
      expect(pages.at(-1)!.rows).toBe(format === "episodes.jsonl" ? ENDED.length : DECISIONS);
      // Stop after two pages, as a consumer that went away would, and resume from what progress said.
      const seen: ExportProgress[] = [];
      const head: Uint8Array[] = [];
      for await (
        const chunk of exportDataset(t.store, format, { filter: {}, pageSize: 3, onProgress: (p) => seen.push(p) })
      ) {
        head.push(chunk);
        if (format !== "parquet" && head.length === 2) break;
      }
      if (format === "parquet") {
        // A Parquet file is whole or unreadable: its cursors are for exporting what was added since.
        const rest = await collect(t.store, format, { cursor: pages[3].cursor!, pageSize: 3 });
        const rows = parquetRows(rest.bytes);
        const all = parquetRows(whole.bytes);
        expect(rows).toEqual(all.slice(all.findIndex((r) => r.match_id === ORDER[12].match.id)));
        return;
      }
      const cursor = seen.at(-1)!.cursor!;
      expect(seen.at(-1)!.matches).toBe(6);
      const rest = await collect(t.store, format, { cursor, pageSize: 3 });
      const first = lines(new Uint8Array(head.flatMap((c) => [...c])));
      const second = lines(rest.bytes);
      expect([...first, ...second]).toEqual(lines(whole.bytes));
      expect(new Set([...first, ...second].map(key)).size).toBe(first.length + second.length);
      expect(rest.progress.at(-1)!.cursor).toBe(pages.at(-1)!.cursor);
    });
  }

  it("makes pages of long matches shorter, losing and repeating nothing", async () => {
    const whole = await jsonl(t.store, "turns.jsonl");
    // IPD matches estimate 20 decisions (10 steps × 2 seats): a budget of 25 takes one IPD match at a time.
    const { bytes, progress } = await collect(t.store, "turns.jsonl", { pageSize: 4, pageRows: 25 });
    expect(lines(bytes)).toEqual(whole);
    const perPage = progress.map((p, i) => p.matches - (progress[i - 1]?.matches ?? 0));
    expect(perPage.slice(0, 5)).toEqual([1, 1, 1, 1, 1]); // known-ipd (6) + ipd-1 (20) > 25
    expect(perPage.reduce((a, b) => a + b)).toBe(ENDED.length);
  });

  it("sizes pages by the text of the decisions read before them, losing and repeating nothing", async () => {
    const whole = await jsonl(t.store, "turns.jsonl");
    // Ample rows, but room for ~30 characters: every page past the first holds one match, whatever its length.
    const { bytes, progress } = await collect(t.store, "turns.jsonl", { pageSize: 50, pageRows: 1e6, pageChars: 30 });
    expect(lines(bytes)).toEqual(whole);
    const perPage = progress.map((p, i) => p.matches - (progress[i - 1]?.matches ?? 0));
    expect(perPage).toEqual(ENDED.map(() => 1));
    // With the default budget these short matches fit in one page.
    expect((await collect(t.store, "turns.jsonl", { pageSize: 50 })).progress).toHaveLength(1);
  });

  it("resumes from the cursor on a row: the last row that has one", async () => {
    const turns = await jsonl(t.store, "turns.jsonl");
    const cut = turns.findIndex((r) => r.match_id === "kuhn-llm");
    const partial = turns.slice(0, cut + 2); // as if the download stopped inside kuhn-llm
    const cursor = partial.findLast((r) => r.cursor !== null)!.cursor as string;
    const complete = turns.slice(0, turns.findLastIndex((r, i) => i < partial.length && r.cursor !== null) + 1);
    const rest = await jsonl(t.store, "turns.jsonl", { cursor });
    expect([...complete, ...rest].map(key)).toEqual(turns.map(key));
  });

  it("refuses a cursor of another format, filter or discount, and one it did not issue", async () => {
    const { progress } = await collect(t.store, "turns.jsonl", { filter: { game: "ipd" }, discount: 0.9 });
    const cursor = progress.at(-1)!.cursor!;
    const attempt = (format: ExportFormat, options: Partial<ExportOptions>) => () =>
      exportDataset(t.store, format, { filter: { game: "ipd" }, discount: 0.9, cursor, ...options });
    expect(attempt("turns.jsonl", {})).not.toThrow();
    expect(attempt("verl.jsonl", {})).toThrow(/belongs to a different query/);
    expect(attempt("episodes.jsonl", {})).toThrow(QueryError);
    expect(attempt("turns.jsonl", { filter: { game: "kuhn-poker" } })).toThrow(/different query/);
    expect(attempt("turns.jsonl", { discount: 1 })).toThrow(/different query/);
    expect(attempt("turns.jsonl", { cursor: "not-a-cursor" })).toThrow(/not a cursor this server issued/);
  });

  it("refuses unknown formats and discounts outside [0, 1], naming what is allowed", () => {
    expect(() => exportFormat("csv")).toThrow(
      new QueryError(
        "no export format `csv`; formats: episodes.jsonl, turns.jsonl, verl.jsonl, parquet, tensors.parquet",
      ),
    );
    expect(FORMATS.map(exportFormat)).toEqual([...FORMATS]);
    for (const bad of [-0.1, 1.5, Number.NaN]) {
      expect(() => exportDataset(t.store, "turns.jsonl", { filter: {}, discount: bad })).toThrow(
        /`discount` must be a number in \[0, 1\]/,
      );
    }
    expect(parseDiscount("0.99")).toBe(0.99);
    for (const bad of ["", "abc", "1.01", "-1", "0x1"]) expect(() => parseDiscount(bad)).toThrow(QueryError);
    for (const limits of [{ pageSize: 0 }, { pageSize: 1.5 }, { pageRows: 0 }, { pageChars: 0 }, { pageChars: NaN }]) {
      expect(() => exportDataset(t.store, "turns.jsonl", { filter: {}, ...limits })).toThrow(
        /pageSize, pageRows and pageChars must be ≥ 1, got/,
      );
    }
  });
});

describe.each(BACKENDS)("dataset export filtered by model, opponent and status (%s)", (backend) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(backend);
    await writeRecorded(t.store, SEAT_FILTER_MATCHES);
  });
  afterAll(() => t.close());

  it("selects the matches each filter names, and their rows say who played", async () => {
    for (const { filter, ids } of SEAT_FILTER_EXPECTED) {
      const parsed = parseFilter(Object.entries(filter));
      const episodes = await jsonl(t.store, "episodes.jsonl", { filter: parsed });
      expect(episodes.map((e) => e.match_id), JSON.stringify(filter)).toEqual(ids);
      const turns = await jsonl(t.store, "turns.jsonl", { filter: parsed });
      expect([...new Set(turns.map((r) => r.match_id))], JSON.stringify(filter)).toEqual(ids);
    }
    const rows = await jsonl(t.store, "turns.jsonl", { filter: { model: "model-b" } });
    expect(new Set(rows.map((r) => `${r.participant_kind}:${r.participant_model}:${r.participant_strategy}`)))
      .toEqual(new Set(["llm:model-b:null", "builtin:null:random"]));
  });

  it("binds a cursor to these filters too", async () => {
    const { progress } = await collect(t.store, "turns.jsonl", { filter: { model: "model-a", status: "DONE" } });
    const cursor = progress[0].cursor!;
    const again = (filter: ExportOptions["filter"]) => () => exportDataset(t.store, "turns.jsonl", { filter, cursor });
    expect(again({ model: "model-a", status: "DONE" })).not.toThrow();
    expect(again({ model: "model-b", status: "DONE" })).toThrow(/different query/);
    expect(again({ model: "model-a", status: "TIMEOUT" })).toThrow(/different query/);
    expect(again({ model: "model-a", status: "DONE", opponent: "builtin:random" })).toThrow(/different query/);
  });

  it("refuses a status or opponent that is not one, saying what is", () => {
    expect(() => parseFilter([["status", "done"]])).toThrow(
      new QueryError(
        "`status` is a seat status (ACTIVE, DONE, ERROR, INVALID, TIMEOUT, DISCONNECTED) or a match's end reason " +
          '(completed, forfeit, aborted, error), got "done"',
      ),
    );
    expect(() => parseFilter([["opponent", "robot:x"]])).toThrow(/`opponent` is a player id, kind:name with kind one/);
    expect(() => parseFilter([["model", ""]])).toThrow("`model` must not be empty");
  });
});

describe.each(BACKENDS)("dataset export of a long match (%s)", (backend) => {
  // 500 rounds: 1,000 decisions whose observations carry the history, ~9 MB of episode and ~27 MB of turns,
  // between two short matches.
  const long = playRecorded({
    id: "long-ipd",
    game: "ipd",
    config: { rounds: 500 },
    strategies: ["tit-for-tat", "random"],
    createdAt: at(1),
  });
  const short = [0, 2].map((i) =>
    playRecorded({ id: `short-${i}`, game: "kuhn-poker", strategies: ["random"], createdAt: at(i) })
  );
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(backend);
    await writeRecorded(t.store, [short[0], long, short[1]]);
  });
  afterAll(() => t.close());

  /** The chunks of an export, and for each whether progress was told just before it (it ends a whole match). */
  async function chunked(format: ExportFormat) {
    const chunks: { bytes: Uint8Array; told: boolean }[] = [];
    let told = false;
    const options = { filter: {}, onProgress: () => (told = true) };
    for await (const bytes of exportDataset(t.store, format, options)) {
      chunks.push({ bytes, told });
      told = false;
    }
    return chunks;
  }
  const joined = (chunks: { bytes: Uint8Array }[]) => new Uint8Array(chunks.flatMap((c) => [...c.bytes]));

  for (const format of ["episodes.jsonl", "turns.jsonl", "verl.jsonl"] as const) {
    it(`hands ${format} over in chunks of about a megabyte, progress told only where a match ends`, async () => {
      const chunks = await chunked(format);
      expect(Math.max(...chunks.map((c) => c.bytes.length))).toBeLessThan(1.5 * 2 ** 20);
      expect(chunks.filter((c) => !c.told).length).toBeGreaterThan(4); // the long match, in pieces
      let text = "";
      for (const { bytes, told } of chunks) {
        text += new TextDecoder().decode(bytes);
        if (!told) continue;
        // Everything handed over up to a told chunk is whole lines, the last one a match's last.
        expect(text.endsWith("\n")).toBe(true);
        const last = JSON.parse(text.slice(text.lastIndexOf("\n", text.length - 2) + 1)) as Row;
        expect((last.extra_info as Row | undefined)?.cursor ?? last.cursor).toEqual(expect.any(String));
      }
      const rows = lines(joined(chunks));
      const episodes = format === "episodes.jsonl";
      expect(rows).toHaveLength(episodes ? 3 : 2 * 500 + short.reduce((n, r) => n + r.steps.length, 0));
      if (episodes) expect(rows[1].steps).toEqual(long.steps.map(episodeStep("ipd")));
      else {
        const longRows = rows.filter((r) => key(r).startsWith("long-ipd#"));
        expect(longRows.map((r) => (r.extra_info as Row | undefined)?.seq ?? r.seq)).toEqual(
          long.steps.map((s) => s.seq),
        );
      }
    });
  }

  it("writes episodes.jsonl's long match, read from the database in slices, byte for byte as JSON.stringify would", async () => {
    // Beside it, matches just below and above the length from which a match is read in slices (512 decisions).
    const more = [[255, 3], [257, 4]].map(([rounds, minute]) =>
      playRecorded({
        id: `ipd-${rounds}`,
        game: "ipd",
        config: { rounds },
        strategies: ["random"],
        createdAt: at(minute),
      })
    );
    const all = [short[0], long, short[1], ...more];
    const mixed = await openTestStore(backend);
    try {
      await writeRecorded(mixed.store, all);
      const texts = await episodeStepTexts(mixed.store);
      expect([...texts.keys()]).toEqual(all.map((r) => r.match.id));
      for (const { match } of all) {
        const stored = await mixed.store.steps(match.id);
        expect(texts.get(match.id)).toBe(JSON.stringify(stored.map(episodeStep(match.game))));
      }
    } finally {
      await mixed.close();
    }
  });

  it("writes it to Parquet a record batch of about 4 million characters at a time, reading back equal to turns.jsonl", async () => {
    const turns = await jsonl(t.store, "turns.jsonl");
    const { bytes } = await collect(t.store, "parquet");
    const withoutCursor = (rows: Row[]) => rows.map(({ cursor, ...r }) => ({ ...r, cursor: cursor !== null }));
    expect(withoutCursor(parquetRows(bytes))).toEqual(withoutCursor(turns));
  });
});

describe.each(BACKENDS)("dataset export of matches the server's Match recorded (%s)", (backend) => {
  let t: TestStore;
  let ids: string[];
  beforeAll(async () => {
    t = await openTestStore(backend);
    ids = [
      ...await seedStore(t.store, { game: "ipd", matches: 3, strategies: ["tit-for-tat", "random"] }),
      ...await seedStore(t.store, { game: "kuhn-poker", matches: 4 }),
      ...await seedStore(t.store, { game: "leduc-poker", matches: 2 }),
    ];
  });
  afterAll(() => t.close());

  it("gives every stored decision one row, with its observation, action and rewards", async () => {
    const stored = await t.store.stepsOf(ids);
    const turns = await jsonl(t.store, "turns.jsonl");
    expect(new Set(turns.map((r) => r.match_id))).toEqual(new Set(ids));
    for (const id of ids) {
      const match = (await t.store.match(id))!;
      const steps = stored.get(id)!;
      const rows = turns.filter((r) => r.match_id === id);
      expect(rows.map((r) => [r.seq, r.turn, r.seat])).toEqual(steps.map((s) => [s.seq, s.turn, s.seat]));
      expect(rows.map((r) => r.observation)).toEqual(steps.map((s) => ({ [match.game]: s.observation })));
      expect(rows.map((r) => r.action)).toEqual(steps.map((s) => perGame(match.game, s.action)));
      expect(rows.map((r) => r.prompt)).toEqual(steps.map((s) => getGame(match.game).describe(s.observation)));
      // Undiscounted, the return-to-go of a seat's first step is its return (raw payoffs sum up).
      for (const row of rows.filter((r) => r.turn === 0)) expect(row.return_to_go).toBeCloseTo(row.return as number, 9);
      const completing = steps.filter((s) => s.rewards !== null);
      expect(new Set(completing.map((s) => s.turn)).size).toBe(match.steps);
    }
    expect(await jsonl(t.store, "verl.jsonl")).toHaveLength(turns.length);
    // episodes.jsonl's decisions, built by the database, are the bytes JSON.stringify writes.
    const texts = await episodeStepTexts(t.store);
    expect([...texts.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const game = (await t.store.match(id))!.game;
      expect(texts.get(id)).toBe(JSON.stringify(stored.get(id)!.map(episodeStep(game))));
    }
    const fromParquet = parquetRows((await collect(t.store, "parquet")).bytes);
    expect(fromParquet.map(({ cursor: _, ...r }) => r)).toEqual(turns.map(({ cursor: _, ...r }) => r));
  });
});

describe.each(BACKENDS)("episodes.jsonl's decisions, built by the database (%s)", (backend) => {
  it("are the bytes JSON.stringify writes, whatever the text, the latency or the nulls hold", async () => {
    const t = await openTestStore(backend);
    try {
      const played = playRecorded({
        id: "odd",
        game: "ipd",
        config: { rounds: 4 },
        strategies: ["random"],
        createdAt: at(0),
      });
      const odd = 'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f line-sep \u2028 é 🂡 </script>';
      // A float4 from 10⁶ up prints with an exponent in PostgreSQL, and JSON.stringify never does below 10²¹.
      const latencies = [0, 0.001, 12.345, 999999.875, 1234567.891, 2e7, 0.5, 3];
      const steps = played.steps.map((row, i): StepRecordRow => ({
        ...row,
        latencyMs: latencies[i],
        prompt: i % 2 ? odd : null,
        defaulted: i === 0 ? "timeout" : null,
        meta: i === 1 ? null : { response: odd, numbers: [1.5, -0, 1e-7, 1e20], nested: { empty: [] } },
        ...(i === 2 ? { input: { text: odd }, action: null, rewards: null } : {}),
      }));
      await writeRecorded(t.store, [{ match: played.match, steps }]);
      const stored = await t.store.steps("odd");
      // float4 keeps 1234567.875 of 1234567.891, which PostgreSQL prints as 1.2345679e+06.
      expect(stored.map((s) => s.latencyMs)).toContain(1234567.9);
      expect((await episodeStepTexts(t.store)).get("odd")).toBe(JSON.stringify(stored.map(episodeStep("ipd"))));
    } finally {
      await t.close();
    }
  });
});
