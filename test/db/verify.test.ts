import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryError } from "../../db/query.ts";
import type { MatchRecord, StepRecordRow } from "../../db/records.ts";
import { verifyMatch, verifyStore } from "../../db/verify.ts";
import { seedStore } from "../support/seed-store.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

describe.each(BACKENDS)("replay verification on %s", (backend) => {
  let t: TestStore;
  let kuhn: string[];
  let all: MatchRecord[];
  beforeAll(async () => {
    t = await openTestStore(backend);
    await seedStore(t.store, { game: "kuhn-poker", matches: 8, seed: "verify-kuhn" });
    await seedStore(t.store, { game: "leduc-poker", matches: 3, seed: "verify-leduc" });
    // Simultaneous moves: two decisions share each turn.
    await seedStore(t.store, { game: "ipd", matches: 2, seed: "verify-ipd" });
    all = await t.store.matches({}, 1000);
    kuhn = all.filter((m) => m.game === "kuhn-poker").map((m) => m.id);
  });
  afterAll(() => t.close());

  const sql = (text: string, params: unknown[]) => t.store.sql.query(text, params);
  const check = async (id: string) => verifyMatch((await t.store.match(id))!, await t.store.steps(id));

  it("finds every recorded match replaying exactly, decision by decision", async () => {
    const reports = [];
    for await (const report of verifyStore(t.store, { pageSize: 3 })) reports.push(report);
    expect(reports.map((r) => r.matchId)).toEqual(all.map((m) => m.id));
    for (const report of reports) {
      expect(report, report.matchId).toMatchObject({ ok: true, verifiable: true, differences: [] });
    }
    const rows = await sql("SELECT count(*)::int AS n FROM steps", []);
    expect(reports.reduce((sum, r) => sum + r.stepsChecked, 0)).toBe((rows[0] as { n: number }).n);
    const ipd = await t.store.steps(all.find((m) => m.game === "ipd")!.id);
    expect(ipd.filter((row) => row.turn === 0)).toHaveLength(2);
  });

  it("reports a changed observation at its decision", async () => {
    await sql(
      `UPDATE steps SET observation = jsonb_set(observation::jsonb, '{pot}', '77')::json WHERE match_id = $1 AND seq = 2`,
      [
        kuhn[0],
      ],
    );
    const report = await check(kuhn[0]);
    expect(report).toMatchObject({ ok: false, verifiable: true, differenceCount: 1 });
    expect(report.differences[0]).toMatchObject({ seq: 2, what: "observation", stored: { pot: 77 } });
    expect((report.differences[0].expected as { pot: number }).pot).not.toBe(77);
  });

  it("reports changed rewards at the decision that carries them", async () => {
    const [last] = await sql(`SELECT max(seq) AS seq FROM steps WHERE match_id = $1`, [kuhn[1]]) as { seq: number }[];
    await sql(`UPDATE steps SET rewards = '[5, -5]' WHERE match_id = $1 AND seq = $2`, [kuhn[1], last.seq]);
    const report = await check(kuhn[1]);
    expect(report.differenceCount).toBe(1);
    expect(report.differences[0]).toMatchObject({ seq: last.seq, what: "rewards", stored: [5, -5] });
  });

  it("reports a changed (still legal) action where its consequences first show", async () => {
    await sql(
      `UPDATE steps SET action = CASE WHEN action->>'type' = 'check' THEN '{"type":"bet"}'::json
         ELSE '{"type":"check"}'::json END WHERE match_id = $1 AND seq = 1`,
      [kuhn[2]],
    );
    const report = await check(kuhn[2]);
    expect(report.ok).toBe(false);
    // The second decision was asked after the first action: its observation shows the first one.
    expect(report.differences[0]).toMatchObject({ seq: 2, what: "observation" });
  });

  it("reports an action the game refuses at its decision", async () => {
    await sql(`UPDATE steps SET action = '{"type":"raise"}' WHERE match_id = $1 AND seq = 1`, [kuhn[3]]);
    const report = await check(kuhn[3]);
    expect(report.differences).toEqual([
      expect.objectContaining({ seq: 1, what: "action", stored: { type: "raise" } }),
    ]);
    expect(report.differences[0].message).toMatch(/^decision 1: .*Legal now: check \| bet/);
  });

  it("says a match recorded with another game version cannot be verified, rather than that it differs", async () => {
    await sql(`UPDATE matches SET game_version = 99 WHERE id = $1`, [kuhn[4]]);
    const report = await check(kuhn[4]);
    expect(report).toMatchObject({ ok: false, verifiable: false, stepsChecked: 0 });
    expect(report.differences).toEqual([
      expect.objectContaining({ what: "version", expected: [1], stored: 99 }),
    ]);
    expect(report.differences[0].message).toBe("recorded with kuhn-poker version 99; this build has version 1");
  });

  it("reports a gap in the sequence numbers", async () => {
    await sql(`DELETE FROM steps WHERE match_id = $1 AND seq = 1`, [kuhn[5]]);
    const report = await check(kuhn[5]);
    expect(report.differences[0]).toMatchObject({ seq: 2, what: "sequence", expected: 1, stored: 2 });
  });

  it("reports returns that are not the game's", async () => {
    await sql(`UPDATE matches SET returns = '[9, -9]' WHERE id = $1`, [kuhn[6]]);
    const report = await check(kuhn[6]);
    expect(report.differences).toEqual([expect.objectContaining({ what: "returns", stored: [9, -9] })]);
  });

  it("verifies the whole store a page at a time, and refuses an unknown match id", async () => {
    const failing = new Map<string, boolean>();
    for await (const report of verifyStore(t.store, { pageSize: 2 })) {
      expect(failing.has(report.matchId)).toBe(false);
      failing.set(report.matchId, !report.ok);
    }
    expect([...failing.keys()]).toEqual(all.map((m) => m.id));
    expect([...failing].filter(([, bad]) => bad).map(([id]) => id).sort()).toEqual(kuhn.slice(0, 7).sort());
    const one = [];
    for await (const report of verifyStore(t.store, { matchId: kuhn[7] })) one.push(report);
    expect(one).toEqual([expect.objectContaining({ matchId: kuhn[7], ok: true })]);
    const missing = verifyStore(t.store, { matchId: "no-such-match" }).next();
    await expect(missing).rejects.toThrow(QueryError);
    await expect(verifyStore(t.store, { matchId: "no-such-match" }).next()).rejects.toThrow(
      /no match `no-such-match` in the replay store at /,
    );
  });
});

describe("replay verification of logs that end early", () => {
  let t: TestStore;
  let match: MatchRecord;
  let steps: StepRecordRow[];
  beforeAll(async () => {
    t = await openTestStore("pglite");
    await seedStore(t.store, { game: "leduc-poker", matches: 1, seed: "early" });
    match = (await t.store.matches({}, 1))[0];
    steps = await t.store.steps(match.id);
  });
  afterAll(() => t.close());

  /** The log as the server writes it when the last decision's seat forfeits instead of moving. */
  const forfeited = (): [MatchRecord, StepRecordRow[]] => {
    const last = steps.at(-1)!;
    return [
      { ...match, endReason: "forfeit", culprit: last.seat, steps: match.steps - 1 },
      [...steps.slice(0, -1), { ...last, action: null, rewards: null, legal: false }],
    ];
  };

  it("accepts a forfeit whose last decision never moved", () => {
    expect(verifyMatch(...forfeited())).toMatchObject({ ok: true, stepsChecked: steps.length });
  });

  it("reports a completed match whose log stops before the game ends", () => {
    const [record, rows] = forfeited();
    const report = verifyMatch({ ...record, endReason: "completed" }, rows);
    expect(report.differences).toEqual([expect.objectContaining({ what: "sequence", turn: match.steps - 1 })]);
    expect(report.differences[0].message).toMatch(/stored as completed, but its log stops at turn \d+/);
  });

  it("reports rewards on a turn that never completed, and a step count that is not the log's", () => {
    const [record, rows] = forfeited();
    rows[rows.length - 1] = { ...rows.at(-1)!, rewards: [1, -1] };
    const report = verifyMatch({ ...record, steps: 40 }, rows);
    expect(report.differences).toEqual([
      expect.objectContaining({ seq: rows.length, what: "rewards", expected: null, stored: [1, -1] }),
      expect.objectContaining({ what: "steps", expected: match.steps - 1, stored: 40 }),
    ]);
  });

  it("reports decisions past the end of the game", () => {
    const extra = { ...steps.at(-1)!, seq: steps.length + 1, turn: match.steps, rewards: null };
    const report = verifyMatch(match, [...steps, extra]);
    expect(report.differences).toEqual([
      expect.objectContaining({ seq: steps.length + 1, what: "sequence" }),
    ]);
    expect(report.differences[0].message).toMatch(/the game ended after turn \d+, but the log goes on/);
  });
});
