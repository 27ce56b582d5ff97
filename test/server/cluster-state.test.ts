import { randomBytes } from "node:crypto";
import { RedisPresence } from "@colyseus/redis-presence";
import { afterAll, describe, expect, it } from "vitest";
import { Bus, NoAnswerError } from "../../server/cluster/bus.ts";
import { connectRedis, RedisState } from "../../server/cluster/redis-state.ts";
import {
  type ClusterState,
  LocalState,
  matchSlot,
  pendingSlot,
  type PooledTicket,
  ticketSlot,
} from "../../server/cluster/state.ts";
import { needs, serviceUrl } from "../support/services.ts";
import { until } from "../support/until.ts";

/**
 * The cluster's shared state has one contract, kept in memory by a process alone and in Redis by a cluster: the same
 * cases run against both. And the bus between processes: messages keep their order, requests get their answers, a
 * request to a node nobody runs fails in time.
 */

const REDIS = serviceUrl("redis");
const bus = needs(["redis"], "the cluster's bus");

const ticket = (id: string, since: number): PooledTicket => ({
  id,
  game: "ipd",
  variant: "classic",
  participant: { kind: "bot", name: id, tokenId: id },
  selfPlay: false,
  since,
  node: "n1",
  epoch: 1,
});

const opened: ClusterState[] = [];
afterAll(async () => {
  for (const state of opened) await state.close();
});

const backends: [string, () => Promise<ClusterState>][] = [["memory", () => Promise.resolve(new LocalState())]];
if (REDIS) {
  // A cluster of its own on the shared Redis: nothing of another run is seen.
  backends.push(["redis", async () => new RedisState(await connectRedis(REDIS, randomBytes(6).toString("hex")))]);
}

describe.each(backends)("the cluster's shared state (%s)", (_, open) => {
  const fresh = async () => {
    const state = await open();
    opened.push(state);
    return state;
  };

  it("keeps a pool's tickets, and takes a paired group out all at once or not at all", async () => {
    const state = await fresh();
    await state.addTicket("ipd/classic", ticket("a", 1));
    await state.addTicket("ipd/classic", ticket("b", 2));
    await state.addTicket("ipd/classic", ticket("c", 3));
    expect((await state.tickets("ipd/classic")).map((t) => t.id).sort()).toEqual(["a", "b", "c"]);
    expect(await state.tickets("kuhn-poker/standard")).toEqual([]);
    // A group one of whose tickets left (cancelled meanwhile) is not taken: the others stay for the next pairing.
    expect(await state.removeTicket("ipd/classic", "c")).toBe(true);
    expect(await state.removeTicket("ipd/classic", "c")).toBe(false);
    expect(await state.takeTickets("ipd/classic", ["a", "c"])).toBe(false);
    expect((await state.tickets("ipd/classic")).map((t) => t.id).sort()).toEqual(["a", "b"]);
    expect(await state.takeTickets("ipd/classic", ["a", "b"])).toBe(true);
    expect(await state.tickets("ipd/classic")).toEqual([]);
  });

  it("draws a seed group's seed once", async () => {
    const state = await fresh();
    expect(await state.groupSeed("ipd/classic#g", "11")).toBe("11");
    expect(await state.groupSeed("ipd/classic#g", "22")).toBe("11");
    expect(await state.groupSeed("ipd/classic#h", "33")).toBe("33");
  });

  it("leases to one holder at a time, renewed by it, free once released or lapsed", async () => {
    const state = await fresh();
    expect(await state.lease("pair:x", "p1", 60_000)).toBe(true);
    expect(await state.lease("pair:x", "p2", 60_000)).toBe(false);
    expect(await state.lease("pair:x", "p1", 60_000)).toBe(true);
    await state.release("pair:x", "p2"); // not its to give up
    expect(await state.lease("pair:x", "p2", 60_000)).toBe(false);
    await state.release("pair:x", "p1");
    expect(await state.lease("pair:x", "p2", 50)).toBe(true);
    await until("the lease to lapse", async () => await state.lease("pair:x", "p3", 60_000));
  });

  it("holds a token's slots up to its limit; a match it is seated in counts whatever the limit", async () => {
    const state = await fresh();
    const pending = pendingSlot();
    expect(await state.reserve("t", ticketSlot("q1", "ipd/classic"), 2)).toBe(true);
    expect(await state.reserve("t", pending, 2)).toBe(true);
    const full = await state.reserve("t", pendingSlot(), 2);
    expect(full).not.toBe(true);
    expect((full as string[]).sort()).toEqual([pending, ticketSlot("q1", "ipd/classic")].sort());
    // Reserving a slot it already holds is not a second one.
    expect(await state.reserve("t", pending, 2)).toBe(true);
    await state.hold("t", matchSlot("m1"));
    expect((await state.slots("t")).length).toBe(3);
    await state.releaseSlot("t", pending);
    await state.releaseSlot("t", matchSlot("m1"));
    expect(await state.slots("t")).toEqual([ticketSlot("q1", "ipd/classic")]);
    expect(await state.reserve("t", matchSlot("m2"), 2)).toBe(true);
    expect(await state.slots("other")).toEqual([]);
  });

  it("redeems a seat ticket once, and never after it lapsed", async () => {
    const state = await fresh();
    await state.putSeat("s1", "seat", 60_000);
    expect(await state.takeSeat("s1")).toBe("seat");
    expect(await state.takeSeat("s1")).toBeNull();
    await state.putSeat("s2", "seat", 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await state.takeSeat("s2")).toBeNull();
  });

  it("adds up each token's frames per second, from zero each second", async () => {
    const state = await fresh();
    expect(await state.countFrames(100, new Map([["a", 5], ["b", 1]]))).toEqual(new Map([["a", 5], ["b", 1]]));
    expect(await state.countFrames(100, new Map([["a", 7]]))).toEqual(new Map([["a", 12]]));
    expect(await state.countFrames(101, new Map([["a", 1]]))).toEqual(new Map([["a", 1]]));
  });
});

describe.skipIf(!bus.ready)(bus.suite, () => {
  const presences: RedisPresence[] = [];
  const buses: Bus[] = [];
  afterAll(async () => {
    for (const bus of buses) await bus.close();
    for (const presence of presences) presence.shutdown();
  });

  const node = async (prefix: string, id: string) => {
    const presence = new RedisPresence(await connectRedis(REDIS!, prefix));
    presences.push(presence);
    const bus = await Bus.open(presence, `ludus:${prefix}:`, id);
    buses.push(bus);
    return bus;
  };

  it("delivers one node's messages to another in order, answers requests, and fails one nobody answers", async () => {
    const prefix = randomBytes(6).toString("hex");
    const [a, b] = await Promise.all([node(prefix, "a"), node(prefix, "b")]);
    const got: number[] = [];
    b.on<number>("n", (n, from) => from === "a" && got.push(n));
    for (let i = 0; i < 2000; i++) a.send("b", "n", i);
    await until("2000 messages", () => got.length === 2000);
    expect(got).toEqual(Array.from({ length: 2000 }, (_, i) => i));

    b.on<number>("double", (n) => Promise.resolve(2 * n));
    b.on("fail", () => {
      throw new Error("refused here");
    });
    expect(await a.ask("b", "double", 21)).toBe(42);
    await expect(a.ask("b", "fail")).rejects.toThrow(/refused here/);
    await expect(a.ask("b", "unknown")).rejects.toThrow(/does not handle `unknown`/);
    await expect(a.ask("nobody", "double", 1, 200)).rejects.toThrow(NoAnswerError);

    // A broadcast reaches every node, the sender too; another cluster on the same Redis hears nothing.
    const other = await node(randomBytes(6).toString("hex"), "a");
    const heard: string[] = [];
    for (const [bus, name] of [[a, "a"], [b, "b"], [other, "other"]] as const) {
      bus.on("hello", () => heard.push(name));
    }
    a.broadcast("hello");
    await until("both nodes to hear the broadcast", () => heard.length >= 2);
    // A round trip of the other cluster's own, published after the broadcast: had the broadcast leaked there, its
    // node would have heard it by then.
    other.on("ping", () => "pong");
    expect(await other.ask("a", "ping")).toBe("pong");
    expect(heard.sort()).toEqual(["a", "b"]);
  });
});
