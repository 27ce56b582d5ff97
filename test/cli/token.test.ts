import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TokenStore } from "../../server/auth/tokens.ts";
import { ludus } from "../support/cli.ts";

describe("ludus token", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "ludus-tokens-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("creates a token that verifies, stores only its hash, lists and revokes it", async () => {
    const created = await ludus("token", "create", "--name", "alpha", "--kind", "llm", "--data-dir", dir);
    expect(created.code).toBe(0);
    const token = created.out.trim();
    expect(token).toMatch(/^ludus_[0-9a-f]{12}_[A-Za-z0-9_-]{32}$/);
    expect(created.err).toMatch(/token for alpha \(llm\) stored in/);
    const file = readFileSync(join(dir, "tokens.json"), "utf8");
    // The secret is everything after `ludus_<id>_`: it may itself hold underscores (base64url), even first.
    expect(file).not.toContain(token.slice("ludus_".length + 12 + 1));
    expect(new TokenStore(dir).verify(token)).toMatchObject({ name: "alpha", kind: "llm", maxMatches: 64 });

    const listed = await ludus("token", "list", "--data-dir", dir, "--json");
    const records = JSON.parse(listed.out);
    expect(records).toEqual([expect.objectContaining({ name: "alpha", kind: "llm" })]);
    expect(records[0]).not.toHaveProperty("hash");

    expect((await ludus("token", "revoke", "alpha", "--data-dir", dir)).code).toBe(0);
    expect(new TokenStore(dir).verify(token)).toBeUndefined();
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
});
