import process from "node:process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedStore } from "../support/seed-store.ts";
import { ludus } from "../support/cli.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

describe.each(BACKENDS)("ludus replay verify on %s", (backend) => {
  let t: TestStore;
  let ids: string[];
  /** The flags that point the CLI at this store; the embedded store needs DATABASE_URL out of the way. */
  let where: string[];
  const url = process.env.DATABASE_URL;
  beforeAll(async () => {
    t = await openTestStore(backend);
    await seedStore(t.store, { game: "kuhn-poker", matches: 5, seed: "cli" });
    ids = (await t.store.matches({}, 100)).map((m) => m.id);
    await t.store.sql.query(`UPDATE steps SET rewards = '[3, -3]' WHERE match_id = $1 AND rewards IS NOT NULL`, [
      ids[1],
    ]);
    await t.store.sql.query(`UPDATE matches SET game_version = 7 WHERE id = $1`, [ids[2]]);
    // The embedded store allows one process at a time: the CLI opens it itself.
    if (backend === "pglite") await t.store.close();
    where = ["--data-dir", t.dataDir, ...(t.databaseUrl ? ["--database-url", t.databaseUrl] : [])];
    if (backend === "pglite") delete process.env.DATABASE_URL;
  });
  afterAll(async () => {
    if (url !== undefined) process.env.DATABASE_URL = url;
    await t.close();
  });

  it("passes a match that replays and exits 0", async () => {
    const { code, out } = await ludus("replay", "verify", "--match", ids[0], ...where);
    expect(out).toBe("checked 1 match, " + out.match(/(\d+) steps/)![1] + " steps: 0 differences in 0 matches\n");
    expect(code).toBe(0);
  });

  it("lists every match that does not replay with its first differences, and exits 1", async () => {
    const { code, out, err } = await ludus("replay", "verify", "--all", ...where);
    expect(out).toMatch(new RegExp(`^match ${ids[1]} \\(kuhn-poker\\): \\d+ differences?\\n  seq \\d+ rewards: `, "m"));
    expect(out).toContain("(expected [");
    expect(out).toContain(", stored [3,-3])");
    expect(out).toContain(
      `match ${ids[2]} (kuhn-poker): not verifiable: recorded with kuhn-poker version 7; this build has version 1\n`,
    );
    expect(out).toMatch(
      /checked 5 matches, \d+ steps: \d+ differences? in 1 match; 1 not verifiable \(their game or game version is not in this build\)\n$/,
    );
    expect(err).toBe(
      "ludus: error: 1 of 5 matches do not replay as stored (" + out.match(/: (\d+) difference/)![1] +
        " differences)\n",
    );
    expect(code).toBe(1);
  });

  it("prints one JSON object with --json", async () => {
    const { code, out } = await ludus("replay", "verify", "--all", "--json", ...where);
    expect(code).toBe(1);
    const result = JSON.parse(out);
    expect(result).toMatchObject({ matches: 5, differing: 1, unverifiable: 1 });
    expect(result.failures.map((r: { matchId: string }) => r.matchId)).toEqual([ids[1], ids[2]]);
    expect(result.failures[0].differences[0]).toMatchObject({ what: "rewards", stored: [3, -3] });
  });

  it("explains usage errors (exit 2)", async () => {
    const cases: [string[], RegExp][] = [
      [["replay", "verify", ...where], /give either --match <id> or --all/],
      [["replay", "verify", "--all", "--match", ids[0], ...where], /give either --match <id> or --all/],
      [["replay", "verify", "--match", "nope", ...where], /no match `nope` in the replay store at /],
      [["replay", "verify", "--everything"], /unknown option '--everything'/],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await ludus(...argv);
      expect(err, argv.join(" ")).toMatch(message);
      expect(code, argv.join(" ")).toBe(2);
    }
  });
});

describe("ludus replay verify --help", () => {
  it("says when it exits 1", async () => {
    const { code, out } = await ludus("replay", "verify", "--help");
    expect(code).toBe(0);
    expect(out).toMatch(/exits 1 when\s+any does/);
    expect(out).toMatch(/--database-url <url>/);
  });
});
