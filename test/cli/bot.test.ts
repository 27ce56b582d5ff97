import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ludus } from "../support/cli.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

describe("ludus bot", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ fillAfterMs: 20, fillStrategy: "random" });
  });
  afterAll(() => server.close());

  const flags = async (...extra: string[]) => ["bot", "--url", server.wsUrl, "--token", await server.token(), ...extra];

  it("plays matches against the server's fill strategy and prints one line per match", async () => {
    const { code, out, err } = await ludus(
      ...(await flags("--game", "kuhn-poker", "--strategy", "nash", "--matches", "3")),
    );
    expect(err).toMatch(/connected to ws:\/\/127\.0\.0\.1:\d+\/bot as bot-\d+; playing kuhn-poker \(standard\)/);
    expect(code).toBe(0);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^match \S+ {2}seat [01] {2}returns -?\d+ -?\d+$/);
  });

  it("speaks msgpack and ends with a JSON summary under --json", async () => {
    const { code, out } = await ludus(
      ...(await flags(
        "--game",
        "ipd",
        "--strategy",
        "tit-for-tat",
        "--matches",
        "2",
        "--format",
        "msgpack",
        "--seed",
        "7",
      )),
      "--json",
    );
    expect(code).toBe(0);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(3);
    const summary = JSON.parse(lines[2]);
    expect(summary).toMatchObject({ game: "ipd", variant: "classic", strategy: "tit-for-tat", seed: "7", matches: 2 });
    expect(summary.results).toHaveLength(2);
    const own = summary.results.map((r: { seat: number; returns: number[] }) => r.returns[r.seat]);
    expect(summary.meanReturn).toBeCloseTo((own[0] + own[1]) / 2);
  });

  it("plays private matches against a strategy, alternating seats, or every seat itself", async () => {
    const versus = await ludus(
      ...(await flags("--game", "kuhn-poker", "--strategy", "nash", "--opponent", "random", "--matches", "2")),
      "--json",
    );
    expect(versus.code, versus.err).toBe(0);
    const summary = JSON.parse(versus.out.trim().split("\n")[2]);
    expect(summary).toMatchObject({ matches: 2, opponent: "random", seat: "alternate", selfPlay: false });
    expect(summary.results.map((r: { seat: number }) => r.seat)).toEqual([0, 1]);

    const alone = await ludus(
      ...(await flags("--game", "donor-game", "--strategy", "donate:0.5", "--opponent", "self")),
      "--json",
    );
    expect(alone.code, alone.err).toBe(0);
    const lines = alone.out.trim().split("\n");
    expect(lines).toHaveLength(13); // a line per seat, then the summary
    const own = JSON.parse(lines[12]);
    expect(own).toMatchObject({ matches: 1, opponent: "self", seat: null });
    expect(own.results.map((r: { seat: number }) => r.seat)).toEqual([...Array(12).keys()]);
    expect(own.results.every((r: { statuses: string[] }) => r.statuses.every((s) => s === "DONE"))).toBe(true);
  });

  it("refuses bad flags with exit code 2 and a clear message", async () => {
    const missingToken = await ludus("bot", "--url", server.wsUrl, "--game", "kuhn-poker", "--strategy", "random");
    expect(missingToken.code).toBe(2);
    expect(missingToken.err).toMatch(/required option '--token <token>' not specified/);

    const unknownGame = await ludus(...(await flags("--game", "chess", "--strategy", "random")));
    expect(unknownGame.code).toBe(2);
    expect(unknownGame.err).toMatch(/'chess' is invalid\. Allowed choices are ipd, .*kuhn-poker/);

    const badMatches = await ludus(...(await flags("--game", "kuhn-poker", "--strategy", "random", "--matches", "0")));
    expect(badMatches.code).toBe(2);
    expect(badMatches.err).toMatch(/--matches <n>' argument '0' is invalid\. expected a whole number in \[1, /);

    const badStrategy = await ludus(...(await flags("--game", "kuhn-poker", "--strategy", "tit-for-tat")));
    expect(badStrategy.code).toBe(2);
    expect(badStrategy.err).toMatch(/unknown strategy `tit-for-tat` for kuhn-poker \(strategies: .*nash/);

    const badVariant = await ludus(
      ...(await flags("--game", "kuhn-poker", "--variant", "huge", "--strategy", "random")),
    );
    expect(badVariant.code).toBe(2);
    expect(badVariant.err).toMatch(/huge/);

    const seatAlone = await ludus(...(await flags("--game", "kuhn-poker", "--strategy", "random", "--seat", "1")));
    expect(seatAlone.code).toBe(2);
    expect(seatAlone.err).toMatch(/--seat needs --opponent <strategy>: queued matches draw seats at random/);

    const selfTwice = await ludus(
      ...(await flags("--game", "kuhn-poker", "--strategy", "random", "--opponent", "self", "--self-play")),
    );
    expect(selfTwice.code).toBe(2);
    expect(selfTwice.err).toMatch(
      /--self-play is for queued matches; for a private self-play match use --opponent self/,
    );

    const badUrl = await ludus("bot", "--url", "http://x", "--token", "t", "--game", "ipd", "--strategy", "random");
    expect(badUrl.code).toBe(2);
    expect(badUrl.err).toMatch(/expected a ws:\/\/ or wss:\/\/ URL/);

    const badToken = await ludus(
      "bot",
      "--url",
      server.wsUrl,
      "--token",
      "nope",
      "--game",
      "ipd",
      "--strategy",
      "random",
    );
    expect(badToken.code).toBe(2);
    expect(badToken.err).toMatch(/refused the token: the token is not valid/);
  });

  it("names the URL and exits 1 when it cannot connect", async () => {
    const url = "ws://127.0.0.1:1/bot";
    const { code, err } = await ludus("bot", "--url", url, "--token", "t", "--game", "ipd", "--strategy", "random");
    expect(code).toBe(1);
    expect(err).toMatch(new RegExp(`^ludus: error: cannot connect to ${url.replaceAll("/", "\\/")}: `));
  });
});
