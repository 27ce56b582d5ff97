import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ludus } from "../support/cli.ts";
import { linearModel } from "../support/onnx-models.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * `ludus bot --policy`: a policy network played as a remote bot over the numeric face, from an ONNX file or
 * registered on the server it plays on (fetched by name over `GET /policies/<ref>`).
 */

interface Result {
  match: string;
  seat: number;
  returns: number[];
  reason: string;
}

describe("ludus bot --policy", () => {
  let server: TestServer;
  let dir: string;
  /** Kuhn poker's tensor has 11 entries and 2 action ids (0 pass: check or fold; 1 bet: bet or call). */
  const model = (name: string, weights: number[], bias: number[]) => {
    const path = join(dir, name);
    writeFileSync(path, linearModel(11, 2, weights, bias));
    return path;
  };
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "ludus-bot-policy-"));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const flags = async (...extra: string[]) => ["bot", "--url", server.wsUrl, "--token", await server.token(), ...extra];
  const summaryOf = (out: string) => JSON.parse(out.trim().split("\n").at(-1)!);

  /** The recorded decisions of the bot's seat in each match: the action it played, and the input it came as. */
  async function botDecisions(results: readonly Result[]) {
    await server.server.store.writer.drain();
    const decisions = [];
    for (const { match, seat } of results) {
      const record = await server.server.store.match(match);
      expect(record).toMatchObject({ endReason: "completed", statuses: ["DONE", "DONE"] });
      expect(record!.seats[seat]).toMatchObject({ kind: "bot" });
      const steps = await server.server.store.steps(match);
      decisions.push(...steps.filter((step) => step.seat === seat));
    }
    return decisions;
  }

  it("plays Kuhn matches against a built-in to the end, sampling action ids, and the store records them", async () => {
    const weights = Array.from({ length: 22 }, (_, i) => ((i * 3) % 7) / 7 - 0.4);
    const path = model("sampled.onnx", weights, [0.2, -0.1]);
    const { code, out, err } = await ludus(
      ...(await flags(
        "--game",
        "kuhn-poker",
        "--policy",
        path,
        "--opponent",
        "nash",
        "--matches",
        "6",
        "--seed",
        "5",
        "--match-seed",
        "kuhn-7",
      )),
      "--json",
    );
    expect(code, err).toBe(0);
    expect(err).toMatch(/playing kuhn-poker \(standard\) with policy .*sampled\.onnx\n/);
    const summary = summaryOf(out);
    expect(summary).toMatchObject({
      game: "kuhn-poker",
      variant: "standard",
      policy: { file: path },
      greedy: false,
      seed: "5",
      matches: 6,
      opponent: "nash",
    });
    expect(summary).not.toHaveProperty("strategy");
    expect(summary.results.map((r: Result) => r.seat)).toEqual([0, 1, 0, 1, 0, 1]);
    expect(summary.results.every((r: Result) => r.reason === "completed")).toBe(true);
    const decisions = await botDecisions(summary.results);
    expect(decisions.length).toBeGreaterThanOrEqual(6);
    for (const step of decisions) {
      // Answered by id, recorded as the action it stands for: never defaulted, never refused.
      expect(step).toMatchObject({
        legal: true,
        defaulted: null,
        attempts: [],
        input: { actionId: expect.any(Number) },
      });
      const id = (step.input as { actionId: number }).actionId;
      expect(step.legalIds).toContain(id);
      expect(id === 1 ? ["bet", "call"] : ["check", "fold"]).toContain((step.action as { type: string }).type);
    }
    // Sampled, not greedy: both ids were played.
    expect(new Set(decisions.map((s) => (s.input as { actionId: number }).actionId))).toEqual(new Set([0, 1]));
  });

  it("--greedy always plays the id the network prefers", async () => {
    const path = model("bets.onnx", new Array(22).fill(0), [0, 8]);
    const { code, out, err } = await ludus(
      ...(await flags("--game", "kuhn-poker", "--policy", path, "--greedy", "--opponent", "random", "--matches", "4")),
      "--json",
    );
    expect(code, err).toBe(0);
    const summary = summaryOf(out);
    expect(summary).toMatchObject({ policy: { file: path }, greedy: true, matches: 4 });
    const decisions = await botDecisions(summary.results);
    expect(decisions.length).toBeGreaterThanOrEqual(4);
    for (const step of decisions) {
      expect(step.input).toEqual({ actionId: 1 });
      expect(["bet", "call"]).toContain((step.action as { type: string }).type);
    }
  });

  it("plays a policy registered on the server, by name, recorded as the bot that ran it", async () => {
    const record = await server.server.policies.register(
      { name: "remote-net", game: "kuhn-poker" },
      linearModel(11, 2, new Array(22).fill(0), [0, 8]),
    );
    const { code, out, err } = await ludus(
      ...(await flags(
        "--game",
        "kuhn-poker",
        "--policy",
        "remote-net",
        "--greedy",
        "--opponent",
        "nash",
        "--matches",
        "3",
      )),
      "--json",
    );
    expect(code, err).toBe(0);
    const summary = summaryOf(out);
    expect(summary.policy).toMatchObject({ id: record.id, name: "remote-net", version: 1 });
    for (const step of await botDecisions(summary.results)) expect(step.input).toEqual({ actionId: 1 });
    const leduc = await ludus(...(await flags("--game", "leduc-poker", "--policy", "remote-net")));
    expect(leduc.code).toBe(2);
    expect(leduc.err).toContain("plays kuhn-poker, not leduc-poker");
  });

  it("refuses what cannot be played with exit code 2 and says why", async () => {
    const good = model("good.onnx", new Array(22).fill(0), [0, 0]);
    const both = await ludus(...(await flags("--game", "kuhn-poker", "--policy", good, "--strategy", "random")));
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/--policy and --strategy are exclusive/);

    const neither = await ludus(...(await flags("--game", "kuhn-poker")));
    expect(neither.code).toBe(2);
    expect(neither.err).toMatch(/--strategy <name> \(a built-in strategy\) or --policy <name\|file\.onnx>/);

    const greedyAlone = await ludus(...(await flags("--game", "kuhn-poker", "--strategy", "random", "--greedy")));
    expect(greedyAlone.code).toBe(2);
    expect(greedyAlone.err).toMatch(/--greedy is for --policy/);

    const missing = await ludus(...(await flags("--game", "kuhn-poker", "--policy", join(dir, "absent.onnx"))));
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read .*absent\.onnx: /);

    // A Kuhn network for Leduc poker: the shapes do not fit, and the error says which.
    const wrongGame = await ludus(...(await flags("--game", "leduc-poker", "--policy", good)));
    expect(wrongGame.code).toBe(2);
    expect(wrongGame.err).toMatch(
      /policy .*good\.onnx cannot play leduc-poker \(standard\): this model does not fit leduc-poker: its input must be float32 \[batch, 30\]/,
    );

    // Three hands a match make a longer tensor than one hand's.
    const otherVariant = await ludus(
      ...(await flags("--game", "kuhn-poker", "--variant", "textarena", "--policy", good)),
    );
    expect(otherVariant.code).toBe(2);
    expect(otherVariant.err).toMatch(
      /cannot play kuhn-poker \(textarena\): this model does not fit kuhn-poker: its input/,
    );

    const unknown = await ludus(...(await flags("--game", "kuhn-poker", "--policy", "no-such-policy")));
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /no policy named `no-such-policy` on http:\/\/127\.0\.0\.1:\d+; `ludus policy list` shows the policies/,
    );
  });
});
