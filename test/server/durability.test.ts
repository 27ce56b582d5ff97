import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import { verifyMatch } from "../../db/verify.ts";
import type { AckFrame, TurnFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

/** Cooperates on even decisions and defects on odd ones: deterministic, so a resent answer is the same. */
const alternate = (turn: TurnFrame) => ({ type: turn.seq % 4 < 2 ? "cooperate" : "defect" });

const acks = (bot: RawBot, match: string) =>
  bot.frames.filter((f): f is AckFrame => f.type === "ack" && f.match === match && !f.duplicate);

/** Two bots with tokens of a data directory start an IPD match of `rounds` rounds against each other. */
async function startMatch(wsUrl: string, tokens: readonly string[], rounds: number) {
  const [host, guest] = await Promise.all(tokens.map((token) => RawBot.connect(wsUrl, token)));
  host.play(alternate);
  guest.play(alternate);
  host.send({ type: "create", game: "ipd", config: { rounds }, opponents: { "1": "open" } });
  const created = await host.next("created");
  guest.send({ type: "join", match: created.invite });
  return { host, guest, match: created.match };
}

describe("a server killed with SIGKILL mid-match", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-kill-"));
  let tokens: string[];
  beforeAll(async () => {
    tokens = await createTokens({ dataDir }, ["host", "guest"]);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("loses no acknowledged action, restores the match, and its players finish it after a resume", async () => {
    const first = await startServerProcess(["--data-dir", dataDir]);
    const { host, guest, match } = await startMatch(first.wsUrl, tokens, 200);
    await until("30 acknowledged decisions", () => acks(host, match).length >= 30);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    const acknowledged = [...acks(host, match), ...acks(guest, match)];
    host.close();
    guest.close();

    const store = await ReplayStore.open({ dataDir });
    const stored = new Map((await store.steps(match)).map((s) => [s.seq, s]));
    for (const ack of acknowledged) expect(stored.get(ack.seq)?.action).toEqual(ack.action);
    expect((await store.match(match))?.endedAt).toBeNull();
    await store.close();

    const second = await startServerProcess(["--data-dir", dataDir]);
    expect(second.stderr()).toContain("restored 1 unfinished matches");
    const bots = await Promise.all(tokens.map((token) => RawBot.connect(second.wsUrl, token)));
    for (const bot of bots) {
      bot.play(alternate);
      bot.send({ type: "resume", match });
    }
    const starts = await Promise.all(bots.map((bot) => bot.next("match_start", (f) => f.match === match)));
    expect(starts.every((s) => s.resumed)).toBe(true);
    const ends = await Promise.all(bots.map((bot) => bot.next("match_end", (f) => f.match === match)));
    expect(ends[0]).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"], steps: 200 });
    bots.forEach((bot) => bot.close());
    second.child.kill("SIGTERM");
    await second.exited;
    // A clean stop wrote everything and released the store: it opens at once.
    expect(second.stderr()).toMatch(/ludus: stopped; 0 live matches are kept/);

    const after = await ReplayStore.open({ dataDir });
    const record = (await after.match(match))!;
    const steps = await after.steps(match);
    expect(record).toMatchObject({ endReason: "completed", returns: ends[0].returns });
    expect(steps.map((s) => s.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    expect(verifyMatch(record, steps).ok).toBe(true);
    await after.close();
  });

  it("a match nobody comes back to within the hold is aborted, not played out by default moves", async () => {
    // The hold is part of the match's recorded conduct: the restored match keeps the 1 s it began with.
    const first = await startServerProcess(["--data-dir", dataDir, "--hold", "1"]);
    const { host, guest, match } = await startMatch(first.wsUrl, tokens, 50);
    await until("10 acknowledged decisions", () => acks(guest, match).length >= 10);
    first.child.kill("SIGKILL");
    await first.exited;
    host.close();
    guest.close();

    const second = await startServerProcess(["--data-dir", dataDir]);
    const ended = async () => {
      const res = await fetch(`${second.url}/matches/${match}`);
      return res.ok && (await res.json()).match.endedAt !== null;
    };
    await until("the match to end by the timeout policy", ended);
    const { match: record, steps } = await (await fetch(`${second.url}/matches/${match}`)).json();
    expect(record).toMatchObject({ endReason: "aborted", statuses: ["DISCONNECTED", "DISCONNECTED"] });
    expect(record.steps).toBeLessThan(50);
    // Only what the first seat to go had to move before the second left too: its open decision, and, when the
    // other seat's move of that round was already in the log (the round then completes), the next round's one.
    expect(steps.filter((s: { defaulted: string | null }) => s.defaulted === "released").length).toBeLessThanOrEqual(2);
    second.child.kill("SIGTERM");
    await second.exited;
  });
});
