import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReplayStore } from "../../db/store.ts";
import { ludus } from "../support/cli.ts";
import { RawBot } from "../support/raw-bot.ts";
import { startTestServer } from "../support/server.ts";

describe("ludus token", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "ludus-tokens-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("creates a token in the store that verifies, keeps only its hash, lists and revokes it", async () => {
    const created = await ludus("token", "create", "--name", "alpha", "--kind", "llm", "--data-dir", dir);
    expect(created.code).toBe(0);
    const token = created.out.trim();
    expect(token).toMatch(/^ludus_[0-9a-f]{12}_[A-Za-z0-9_-]{32}$/);
    expect(created.err).toMatch(/token [0-9a-f]{12} for alpha \(llm\) stored/);
    const store = await ReplayStore.open({ dataDir: dir });
    try {
      // The secret is everything after `ludus_<id>_`: it may itself hold underscores (base64url), even first.
      expect(JSON.stringify(await store.sql.query("SELECT * FROM tokens"))).not.toContain(
        token.slice("ludus_".length + 12 + 1),
      );
      expect(await store.tokens.verify(token)).toMatchObject({ name: "alpha", kind: "llm", maxMatches: 64 });
    } finally {
      await store.close();
    }

    const listed = await ludus("token", "list", "--data-dir", dir, "--json");
    const records = JSON.parse(listed.out);
    expect(records).toEqual([expect.objectContaining({ name: "alpha", kind: "llm" })]);
    expect(records[0]).not.toHaveProperty("hash");

    expect((await ludus("token", "revoke", "alpha", "--data-dir", dir)).code).toBe(0);
    const after = await ReplayStore.open({ dataDir: dir });
    try {
      expect(await after.tokens.verify(token)).toBeUndefined();
    } finally {
      await after.close();
    }
    expect((await ludus("token", "list", "--data-dir", dir)).out).toMatch(/alpha {2}llm .* revoked/);
  });

  it("explains bad names, kinds, limits, duplicates and unknown tokens (exit 2)", async () => {
    await ludus("token", "create", "--name", "taken", "--data-dir", dir);
    const cases: [string[], RegExp][] = [
      [["token", "create", "--name", "two words", "--data-dir", dir], /a bot name is 1-64 letters/],
      [["token", "create", "--name", "taken", "--data-dir", dir], /a bot named taken already has a token/],
      [["token", "create", "--name", "x", "--kind", "human", "--data-dir", dir], /expected one of: bot, llm/],
      [["token", "create", "--name", "x", "--max-matches", "0", "--data-dir", dir], /whole number in \[1, 100000\]/],
      [["token", "create", "--data-dir", dir], /required option '--name <bot>' not specified/],
      [["token", "revoke", "nobody", "--data-dir", dir], /no live token named or with id nobody/],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await ludus(...argv);
      expect(err, argv.join(" ")).toMatch(message);
      expect(code, argv.join(" ")).toBe(2);
    }
  });

  it("reaches a running server's embedded store with --server and an admin token; bots use the token at once", async () => {
    const table = await startTestServer();
    try {
      const admin = await table.token("root", "admin");
      const server = ["--server", table.url];
      // The server holds its embedded store: the command finds the server through its data directory and goes
      // through it, as a person starting a server and then making a token expects.
      const beside = await ludus("token", "create", "--name", "beside", "--data-dir", table.dataDir);
      expect(beside.code, beside.err).toBe(0);
      (await RawBot.connect(table.wsUrl, beside.out.trim())).close();
      expect((await ludus("policy", "list", "--data-dir", table.dataDir)).code).toBe(0);

      const made = await ludus("token", "create", "--name", "late", "--max-matches", "2", ...server, "--token", admin);
      expect(made.code, made.err).toBe(0);
      const bot = await RawBot.connect(table.wsUrl, made.out.trim());
      expect(bot.frames.find((f) => f.type === "welcome")).toMatchObject({
        bot: { name: "late", kind: "bot" },
        limits: { maxMatches: 2 },
      });
      bot.close();

      const listed = await ludus("token", "list", "--json", ...server, "--token", admin);
      expect(JSON.parse(listed.out).map((t: { name: string }) => t.name)).toEqual(["root", "beside", "late"]);
      const again = await ludus("token", "create", "--name", "late", ...server, "--token", admin);
      expect([again.code, again.err]).toEqual([2, expect.stringMatching(/a bot named late already has a token/)]);

      // A player's token is no admin's; none at all is refused as well.
      const player = await ludus("token", "list", ...server, "--token", made.out.trim());
      expect([player.code, player.err]).toEqual([1, expect.stringMatching(/403 \(forbidden\).*takes an admin token/)]);
      const anonymous = await ludus("token", "revoke", "late", ...server, "--token", "");
      expect(anonymous.err).toMatch(/401 \(unauthorized\): managing tokens takes an admin token/);

      expect((await ludus("token", "revoke", "late", ...server, "--token", admin)).code).toBe(0);
      const refused = await RawBot.open(table.wsUrl);
      refused.send({ type: "auth", token: made.out.trim() });
      expect(await refused.next("error")).toMatchObject({ code: "bad_token" });
      const gone = await ludus("token", "revoke", "late", ...server, "--token", admin);
      expect([gone.code, gone.err]).toEqual([2, expect.stringMatching(/no live token named or with id late/)]);
    } finally {
      await table.server.close();
    }
    // A stopped server leaves no address behind: the store opens directly again.
    expect(existsSync(join(table.dataDir, "server.json"))).toBe(false);
    rmSync(table.dataDir, { recursive: true, force: true });
  });
});
