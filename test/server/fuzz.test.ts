import { Client } from "@colyseus/sdk";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Packr } from "msgpackr";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerFrame } from "../../protocol/frames.ts";
import { createTokens } from "../support/tokens.ts";
import { DocsBot } from "../support/docs-bot.ts";
import { type ServerProcess, startServerProcess } from "../support/server-process.ts";

/**
 * A fuzzer against a real `ludus serve`: structured frames of every type in every state (before auth,
 * after it, inside a match), inherited-property names as types and keys, NUL and unpaired surrogates in
 * every string, absurd numbers, raw bytes; the same against the browser rooms, the matchmaking route and
 * the HTTP API. The process stays up, nothing answers internal_error or 500, and a well-behaved match
 * beside it finishes untouched. Seeded: a failure names its seed (LUDUS_FUZZ_SEED) and replays.
 */

const SEED = Number(process.env.LUDUS_FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.LUDUS_FUZZ_RUNS ?? 300);

const INHERITED = [
  "constructor",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "__proto__",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "__defineGetter__",
  "__lookupGetter__",
];
const TYPES = ["auth", "queue", "cancel", "create", "join", "act", "withdraw", "resume", "ping"];
const KEYS = [
  "type",
  "game",
  "variant",
  "config",
  "seat",
  "opponents",
  "seed",
  "match",
  "seq",
  "action",
  "meta",
  "reason",
  "token",
  "text",
  "ticket",
  "id",
  "selfPlay",
  "names",
  "rounds",
  "1",
  "4294967296",
];
const NASTY = ["\u0000", "a\u0000b", "\ud800", "x\udc00", "\ud83d", "", "😀", "x".repeat(3000), "ipd", "kuhn-poker"];
const NUMBERS = [0, -1, 1, 2, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), 1e308, 0.5, Number.MAX_SAFE_INTEGER];

/** Values as a stranger would send them, built from what this server knows (`known`: real ids). */
function value(known: () => string[]): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.constantFrom(...NASTY, ...INHERITED, ...TYPES),
    fc.constantFrom(...NUMBERS),
    fc.string(),
    fc.string({ unit: "binary", maxLength: 8 }), // any code point, lone surrogates included
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.nat({ max: 50 }).map(() => known()[Math.floor(Math.random() * Math.max(1, known().length))] ?? "x"),
  );
  return fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.array(tie("v"), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom(...KEYS, ...INHERITED), tie("v"), { maxKeys: 4 }),
    ),
  })).v;
}

/** A frame: a type (real, inherited or anything), and fields from the protocol's names and others. */
function frame(known: () => string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({
    type: fc.oneof(fc.constantFrom(...TYPES), fc.constantFrom(...INHERITED), fc.string()),
    fields: fc.dictionary(fc.constantFrom(...KEYS, ...INHERITED), value(known), { maxKeys: 5 }),
  }).map(({ type, fields }) => {
    const built: Record<string, unknown> = {};
    // defineProperty: a `__proto__` key is an own field of the frame, as JSON.parse makes it.
    const all = { ...fields, type };
    for (const key of Object.keys(all)) {
      Object.defineProperty(built, key, { value: (all as Record<string, unknown>)[key], enumerable: true });
    }
    return built;
  });
}

const packr = new Packr({ useRecords: false, int64AsType: "number" });

/** A socket that records what it receives and can check it still answers. */
class Probe {
  readonly frames: ServerFrame[] = [];
  closed?: number;
  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer, binary: boolean) => {
      try {
        this.frames.push((binary ? packr.unpack(data) : JSON.parse(data.toString("utf8"))) as ServerFrame);
      } catch {
        // not ours to judge here
      }
    });
    socket.on("close", (code) => (this.closed = code));
    socket.on("error", () => {});
  }

  static open(url: string): Promise<Probe> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once("open", () => resolve(new Probe(socket)));
      socket.once("error", reject);
    });
  }

  send(frame: unknown, binary: boolean): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(binary ? packr.pack(frame) : JSON.stringify(frame));
  }

  /** Resolves once a `pong` with `id` arrives: everything sent before it has been answered. */
  async answered(id: number): Promise<boolean> {
    if (this.closed !== undefined) return false;
    this.socket.send(JSON.stringify({ type: "ping", id }));
    const deadline = Date.now() + 30_000;
    while (!this.frames.some((f) => f.type === "pong" && f.id === id)) {
      if (this.closed !== undefined) return false;
      if (Date.now() > deadline) throw new Error("the server stopped answering");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return true;
  }
}

describe("a fuzzer against the gateway, the rooms and the HTTP API", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ludus-fuzz-"));
  let fuzzer: string;
  let server: ServerProcess;
  let bystander: DocsBot;
  const known: string[] = [];
  beforeAll(async () => {
    const [bystanderToken] = await createTokens({ dataDir }, ["bystander"]);
    [fuzzer] = await createTokens({ dataDir }, ["fuzzer"], "bot", 100_000);
    server = await startServerProcess(["--data-dir", dataDir, "--hold", "60"]);
    // A well-behaved bot plays beside the fuzzing, from start to end.
    let planned = 0;
    bystander = new DocsBot(() => server.wsUrl, bystanderToken, {
      lanes: 2,
      plan: () =>
        planned++ < 12
          ? { type: "create", game: "ipd", config: { rounds: 20 }, opponents: { "1": "strategy:tit-for-tat" } }
          : undefined,
    });
    bystander.start();
  }, 120_000);
  afterAll(async () => {
    bystander?.stop();
    server?.child.kill("SIGKILL");
    await server?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const internalErrors = (frames: ServerFrame[]) =>
    frames.filter((f) => f.type === "error" && f.code === "internal_error");

  it("every frame type, in every state, inherited names and unstorable strings included", async () => {
    const token = fuzzer;
    // A live match of the fuzzer's own, so that real match ids, invites and sequence numbers are in play.
    const setup = await Probe.open(server.wsUrl);
    setup.send({ type: "auth", token }, false);
    setup.send({ type: "create", game: "kuhn-poker", opponents: { "1": "open" } }, false);
    await setup.answered(0);
    const created = setup.frames.find((f) => f.type === "created");
    if (created?.type === "created") known.push(created.match, created.invite);
    known.push("1", "2", "3");

    let pings = 1;
    for (const state of ["unauthenticated", "authenticated", "in a match"] as const) {
      const probe = await Probe.open(server.wsUrl);
      if (state !== "unauthenticated") probe.send({ type: "auth", token }, state === "in a match");
      if (state === "in a match") probe.send({ type: "resume", match: known[0] }, true);
      // Every type, real and inherited, at least once in this state, then random frames.
      for (const type of [...TYPES, ...INHERITED]) probe.send({ type }, false);
      for (const type of INHERITED) probe.send({ type }, true);
      fc.assert(
        fc.property(frame(() => known), fc.boolean(), (f, binary) => {
          if (f.type === "auth" && state === "unauthenticated") return; // the token would only be refused
          probe.send(f, binary);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      expect(await probe.answered(pings++), `${state}: closed with ${probe.closed}`).toBe(true);
      expect(internalErrors(probe.frames), state).toEqual([]);
      probe.socket.close();
    }
    expect(internalErrors(setup.frames)).toEqual([]);
    setup.socket.close();
  });

  it("raw bytes, broken msgpack and text that is not JSON", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.string({ maxLength: 200 }), async (bytes, text) => {
        const probe = await Probe.open(server.wsUrl);
        probe.socket.send(bytes, { binary: true });
        probe.socket.send(text);
        await probe.answered(1);
        expect(internalErrors(probe.frames)).toEqual([]);
        probe.socket.close();
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it("room messages of any type and shape, and the matchmaking route with any method, room and body", async () => {
    const client = new Client(server.url);
    const room = await client.create("ipd", { opponents: { "1": "strategy:random" }, name: "fuzzy" });
    const watcher = await client.joinById(room.roomId, { spectate: true });
    const received: ServerFrame[] = [];
    for (const r of [room, watcher]) r.onMessage("*", (_t: unknown, m: unknown) => received.push(m as ServerFrame));
    known.push(room.roomId);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom("act", ...INHERITED), fc.string({ minLength: 1, maxLength: 20 })),
        value(() => known),
        async (type, message) => {
          for (const r of [room, watcher]) if (r.connection.isOpen) r.send(type, message);
          await new Promise((resolve) => setTimeout(resolve, 60)); // below the rooms' message rate
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
    expect(internalErrors(received)).toEqual([]);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("create", "joinOrCreate", "join", "joinById", "reconnect", ...INHERITED, "x"),
        fc.constantFrom("ipd", "queue", "kuhn-poker", ...INHERITED, "%ff", room.roomId, "nope"),
        value(() => known),
        async (method, name, body) => {
          const res = await fetch(`${server.url}/matchmake/${method}/${name}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body) ?? "null",
          });
          const text = await res.text();
          expect(res.status, `${method} ${name}: ${text}`).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: 120 },
    );
    await room.leave().catch(() => {});
    await watcher.leave().catch(() => {});
  });

  it("the HTTP API answers every malformed path and query with 4xx, never 500", async () => {
    const paths = [
      "/games/%ff",
      "/invites/%ff",
      "/matches/%ff",
      "/matches/%ff/view?seat=0",
      "/datasets/%ff",
      "/styles/nope.css",
      "/games/constructor",
      "/invites/constructor",
      "/matches?order=constructor",
      "/matches?constructor=1",
      "/live?game=%ff",
      "/matches?limit=%ff",
    ];
    for (const path of paths) {
      const res = await fetch(`${server.url}${path}`);
      await res.body?.cancel();
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
    }
    expect((await fetch(`${server.url}/styles/nope.css`)).status).toBe(404);
  });

  it("leaves the server up and the match beside it untouched", async () => {
    await bystander.until(() => bystander.done, "the bystander's matches", 180_000);
    expect(bystander.errors).toEqual([]);
    for (const ends of bystander.ends.values()) {
      for (const end of ends.values()) expect(end.reason).toBe("completed");
    }
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health.status).toBe("ok");
    expect(server.stderr()).not.toMatch(/Uncaught|panicked|request failed/);
    // Malformed room frames are logged in one line each, not with Colyseus's stack traces.
    expect(server.stderr()).not.toMatch(/^\s+at .*node_modules/m);
  }, 240_000);
});
