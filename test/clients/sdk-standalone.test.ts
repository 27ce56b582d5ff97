import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";

/** The real Deno binary (not npm's Node wrapper), as a bot author would run their script. */
const DENO = new URL("../../node_modules/@deno/linux-x64-glibc/deno", import.meta.url).pathname;
const SDK = new URL("../../clients/sdk/index.ts", import.meta.url).href;
/** A msgpack implementation from outside the SDK, as a bot brings its own (here the repository's copy). */
const MSGPACKR = new URL("../../node_modules/msgpackr/index.js", import.meta.url).href;

/**
 * A bot script as a new user writes one, in a folder of its own with no configuration: it imports the SDK
 * by URL and plays two Kuhn matches against itself, then prints every seat's end as JSON.
 */
const SCRIPT = `
import { Bot, randomAction } from "${SDK}";

const [url, token, format] = Deno.args;
const msgpack = format === "msgpack" ? new (await import("${MSGPACKR}")).Packr({ useRecords: false }) : undefined;
const bot = await Bot.connect({ url, token, format, msgpack });
const ends = await bot.play({
  game: "kuhn-poker",
  opponent: "self",
  matches: 2,
  policy: (_observation, legal) => randomAction(legal),
});
await bot.close();
console.log(JSON.stringify(ends.map(({ match, seat, reason }) => ({ match, seat, reason }))));
`;

describe("the bot SDK in a script outside the repository", () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "ludus-outside-"));
    writeFileSync(join(dir, "bot.ts"), SCRIPT);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `deno run` in that folder, with no --config: nothing of the repository's deno.json or node_modules applies. */
  async function runScript(format: string) {
    const child = spawn(DENO, [
      "run",
      "--allow-net",
      "--allow-read",
      "bot.ts",
      server.wsUrl,
      await server.token(),
      format,
    ], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    const [code] = await once(child, "exit");
    return { code: code as number | null, out, err };
  }

  for (const format of ["json", "msgpack"]) {
    it(`imports the SDK by URL and plays, with ${format} frames`, async () => {
      const { code, out, err } = await runScript(format);
      expect(code, err).toBe(0);
      const ends = JSON.parse(out) as { match: string; seat: number; reason: string }[];
      expect(ends).toHaveLength(4); // two matches, a seat each of its own
      expect(new Set(ends.map((end) => end.match)).size).toBe(2);
      expect(ends.map((end) => end.seat).sort()).toEqual([0, 0, 1, 1]);
      expect(ends.every((end) => end.reason === "completed")).toBe(true);
    });
  }
});
