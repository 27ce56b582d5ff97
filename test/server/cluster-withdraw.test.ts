import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import { createTokens } from "../support/tokens.ts";
import { RawBot } from "../support/raw-bot.ts";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";
import { needs, serviceUrl } from "../support/services.ts";
import { freshDatabase } from "../support/stores.ts";
import { until } from "../support/until.ts";

/**
 * Two processes of one cluster (PostgreSQL and Redis). A bot connected to the second holds a seat of a match the first
 * plays, still waiting for its last player; the first is killed, and the bot withdraws while the second has not yet
 * taken the match over. The withdrawal is carried out once the match is found again there: the waiting match ends
 * at once (aborted), rather than waiting out its invite.
 */
const { ready, suite } = needs(["postgres", "redis"], "a withdraw while its match is taken over");

describe.skipIf(!ready)(suite, () => {
  const dirs = [1, 2].map((i) => mkdtempSync(join(tmpdir(), `ludus-withdraw-${i}-`)));
  const servers: ServerProcess[] = [];
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    await drop?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("is carried out where the match went", async () => {
    const db = await freshDatabase();
    drop = db.drop;
    const [hostToken, guestToken] = await createTokens({ dataDir: dirs[0], databaseUrl: db.url }, ["host", "guest"]);
    for (const [i, dir] of dirs.entries()) {
      servers.push(
        await startServerProcess(
          ["--data-dir", dir, "--database-url", db.url, "--node", `w${i + 1}`, "--lease", "2", "--hold", "300"],
          { REDIS_URL: serviceUrl("redis")! },
        ),
      );
    }
    const [first, second] = servers;
    const host = await RawBot.connect(first.wsUrl, hostToken);
    // Played by the first process: the host takes no seat, one seat for the guest, one left open.
    host.send({ type: "create", game: "ipd", seat: null, opponents: { "0": "open", "1": "open" } });
    const created = await host.next("created");
    const guest = await RawBot.connect(second.wsUrl, guestToken);
    guest.send({ type: "join", match: created.invite });
    // The guest's seat is durable (the match waits for its other seat, so nothing is sent yet).
    const store = await ReplayStore.open({ dataDir: dirs[1], databaseUrl: db.url });
    await until("the guest's seat", async () => (await store.match(created.match))?.seats[0]?.name === "guest");
    await store.close();

    first.child.kill("SIGKILL");
    await first.exited;
    guest.send({ type: "withdraw", match: created.match, reason: "the engine behind this bot crashed" });

    const end = await guest.next("match_end", (f) => f.match === created.match);
    expect(end).toMatchObject({ reason: "aborted", culprit: 0 });
    expect(end.statuses[0]).toBe("ERROR");
    expect(second.stderr()).toMatch(/took over 1 matches/);
    guest.close();
    host.close();
  }, 180_000);
});
