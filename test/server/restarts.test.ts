import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import type { TurnFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { runLudus, type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

/**
 * What players were told must hold across a crash or a restart: the match they hold, its invite, the
 * end they saw, and the store a running server holds. Each case is played as a user would, against a
 * real `ludus serve` process.
 */

const first = (turn: TurnFrame) => turn.legal[0].kind === "fixed" ? turn.legal[0].action : "cooperate";

describe("restarts keep what players were told", () => {
  let dataDir: string;
  /** Every test's players, their tokens made before its server starts (the server then holds the store). */
  const NAMES = ["verifier-victim", "ipd-bot", "host", "finisher", "guest", "left", "right", "watcher", "invitee"];
  let tokens: Map<string, string>;
  const tokenOf = (name: string) => tokens.get(name)!;
  let server: ServerProcess | undefined;
  const bots: RawBot[] = [];
  const start = async (...extra: string[]) => (server = await startServerProcess(["--data-dir", dataDir, ...extra]));
  const kill = async () => {
    server!.child.kill("SIGKILL");
    await server!.exited;
  };
  const connect = async (name: string) => {
    const bot = await RawBot.connect(server!.wsUrl, tokenOf(name));
    bots.push(bot);
    return bot;
  };
  const reconnect = async (token: string) => {
    const again = await RawBot.connect(server!.wsUrl, token);
    bots.push(again);
    return again;
  };
  afterEach(async () => {
    bots.splice(0).forEach((bot) => bot.close());
    server?.child.kill("SIGKILL");
    await server?.exited;
    server = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });
  const fresh = async () => {
    dataDir = mkdtempSync(join(tmpdir(), "ludus-restart-"));
    const made = await createTokens({ dataDir }, NAMES);
    tokens = new Map(NAMES.map((name, i) => [name, made[i]]));
  };

  it("refuses a second process on the embedded store while the server runs (it used to take it over)", async () => {
    await fresh();
    await start();
    const bot = await connect("verifier-victim");
    bot.play(first);
    bot.send({ type: "create", game: "kuhn-poker", opponents: { "1": "strategy:random" } });
    const end = await bot.next("match_end");
    const verify = await runLudus(["replay", "verify", "--all", "--data-dir", dataDir]);
    expect(verify.err).toMatch(new RegExp(`is in use by process ${server!.child.pid}; stop that server`));
    expect(verify.code).toBe(1);
    await kill();
    const store = await ReplayStore.open({ dataDir });
    expect((await store.match(end.match))?.endReason).toBe("completed");
    await store.close();
  });

  it("restores a simultaneous step whose built-in moved while the bot's decision was open, and lists it in welcome", async () => {
    await fresh();
    await start();
    const token = tokenOf("ipd-bot");
    const bot = await RawBot.connect(server!.wsUrl, token);
    bots.push(bot);
    bot.send({ type: "create", game: "ipd", config: { rounds: 5 }, opponents: { "1": "strategy:tit-for-tat" } });
    const created = await bot.next("created");
    // Decision 1 is the bot's, open; decision 2, the built-in's, is durable before the turn is sent.
    const open = await bot.next("turn");
    expect(open.seq).toBe(1);
    await kill();
    await start();
    expect(server!.stderr()).toContain("restored 1 unfinished matches");
    expect(server!.stderr()).not.toMatch(/could not be restored/);
    const again = await reconnect(token);
    const welcome = again.frames.find((f) => f.type === "welcome")!;
    expect(welcome).toMatchObject({ matches: [created.match] });
    again.send({ type: "resume", match: created.match });
    expect(await again.next("match_start")).toMatchObject({ match: created.match, resumed: true, seat: 0 });
    expect(await again.next("turn")).toMatchObject({ seq: 1 });
    again.play(first);
    expect(await again.next("match_end")).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"], steps: 5 });
  });

  it("keeps an invite working across a crash, answers the creator's resume, and ends a match seen to end", async () => {
    await fresh();
    await start();
    const hostToken = tokenOf("host");
    const host = await RawBot.connect(server!.wsUrl, hostToken);
    bots.push(host);
    host.send({ type: "create", game: "tic-tac-toe", opponents: { "1": "open" } });
    const created = await host.next("created");
    const finisherToken = tokenOf("finisher");
    const done = await RawBot.connect(server!.wsUrl, finisherToken);
    bots.push(done);
    done.play(first);
    done.send({ type: "create", game: "kuhn-poker", opponents: { "1": "strategy:random" } });
    const ended = await done.next("match_end");
    await kill();
    await start();

    const info = await fetch(`${server!.url}/invites/${created.invite}`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ id: created.match, phase: "waiting" });
    const back = await reconnect(hostToken);
    back.send({ type: "resume", match: created.match });
    expect(await back.next("created")).toMatchObject({ match: created.match, invite: created.invite, seats: [0] });
    const guest = await connect("guest");
    guest.send({ type: "join", match: created.invite });
    expect(await guest.next("match_start")).toMatchObject({ match: created.match, seat: 1 });
    expect(await back.next("match_start")).toMatchObject({ match: created.match, seat: 0 });
    back.play(first);
    guest.play((turn) => turn.legal.at(-1)!.kind === "fixed" ? (turn.legal.at(-1) as { action: unknown }).action : "");
    expect((await back.next("match_end")).reason).toBe("completed");

    // The match that had ended before the crash: its end, not unknown_match.
    const finisher = await reconnect(finisherToken);
    finisher.send({ type: "resume", match: ended.match });
    expect(await finisher.next("match_end")).toEqual(ended);
  });

  it("never keeps a built-in's decision without the join that started the match, across a crash", async () => {
    await fresh();
    // The store takes decisions but fails (as a passing fault) the write of the join that starts a match: every
    // retry fails too, so the process is killed while it retries. The join and the decisions after it are one write.
    const writeFails = async (fail: boolean) => {
      const store = await ReplayStore.open({ dataDir });
      await store.sql.exec(
        fail
          ? `CREATE FUNCTION fail_start() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
               RAISE EXCEPTION 'the disk is busy' USING ERRCODE = '57P03';
             END $$;
             CREATE TRIGGER fail_start BEFORE UPDATE ON matches FOR EACH ROW
               WHEN (OLD.started_at IS NULL AND NEW.started_at IS NOT NULL) EXECUTE FUNCTION fail_start();`
          : "DROP TRIGGER fail_start ON matches; DROP FUNCTION fail_start();",
      );
      await store.close();
    };
    await writeFails(true);
    await start();
    const watcher = await connect("watcher");
    // Seat 0 for the invite, seat 1 a built-in that moves the moment the match starts (IPD moves are simultaneous).
    watcher.send({ type: "create", game: "ipd", seat: null, opponents: { "0": "open", "1": "strategy:tit-for-tat" } });
    const created = await watcher.next("created");
    const invitee = await connect("invitee");
    invitee.send({ type: "join", match: created.invite });
    await until(
      "the join's write to fail",
      () => /replay store write failed \(the disk is busy\)/.test(server!.stderr()),
    );
    await kill();
    await writeFails(false);

    await start();
    expect(server!.stderr()).not.toMatch(/could not be restored/);
    expect(server!.stderr()).toContain("restored 1 unfinished matches");
    server!.child.kill("SIGTERM");
    await server!.exited;
    const store = await ReplayStore.open({ dataDir });
    const record = await store.match(created.match);
    // The match as it was durable: still waiting for its invite, with nothing played.
    expect(record).toMatchObject({ startedAt: null, endedAt: null });
    expect(await store.steps(created.match)).toEqual([]);
    await store.close();
    const verify = await runLudus(["replay", "verify", "--all", "--data-dir", dataDir]);
    expect(verify.out + verify.err).toMatch(/: 0 differences in \d+ matches/);
    expect(verify.code).toBe(0);
  });

  it("on SIGTERM keeps live matches for the next start: bots are told to come back (1012) and finish them", async () => {
    await fresh();
    await start();
    const names = ["left", "right"];
    const tokenList = names.map((name) => tokenOf(name));
    const [a, b] = await Promise.all(tokenList.map((token) => RawBot.connect(server!.wsUrl, token)));
    bots.push(a, b);
    a.send({ type: "create", game: "ipd", config: { rounds: 40 }, opponents: { "1": "open" } });
    const created = await a.next("created");
    b.send({ type: "join", match: created.invite });
    a.play(first);
    b.play(first);
    await a.next("ack", (f) => f.seq > 20);
    server!.child.kill("SIGTERM");
    const [closeA, closeB] = await Promise.all([a.whenClosed(), b.whenClosed()]);
    expect([closeA.code, closeB.code]).toEqual([1012, 1012]);
    await server!.exited;
    expect(server!.stderr()).toMatch(/ludus: stopped; 1 live match is kept in the store/);
    expect(a.frames.some((f) => f.type === "match_end")).toBe(false);

    await start();
    expect(server!.stderr()).toContain("restored 1 unfinished matches");
    const again = await Promise.all(tokenList.map((token) => RawBot.connect(server!.wsUrl, token)));
    bots.push(...again);
    for (const bot of again) {
      bot.play(first);
      bot.send({ type: "resume", match: created.match });
    }
    const ends = await Promise.all(again.map((bot) => bot.next("match_end")));
    expect(ends[0]).toMatchObject({ reason: "completed", statuses: ["DONE", "DONE"], steps: 40 });
  });
});
