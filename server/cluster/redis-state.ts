import { Redis } from "ioredis";
import { redactUrl } from "../../db/sql.ts";
import { ServeError } from "../http.ts";
import { type ClusterState, type HeldSlot, PENDING_SLOT_MS, type PooledTicket, type Slot } from "./state.ts";

/**
 * The cluster's shared state in Redis (see state.ts). Every key is under `ludus:<cluster id>:` (the store's, see
 * db/nodes.ts), so clusters of different stores never meet on one Redis. What must change in one step (taking a
 * paired group out of its pool, holding a slot under a limit, a lease) is a Lua script, atomic in Redis.
 */

const TAKE_TICKETS = `
for _, id in ipairs(ARGV) do if redis.call('HEXISTS', KEYS[1], id) == 0 then return 0 end end
redis.call('HDEL', KEYS[1], unpack(ARGV))
return 1`;

/**
 * A token's slots are a sorted set scored by when each lapses: a pending slot's time, or HELD + since (epoch ms) for
 * one held until released, which no lapse ever reaches. ARGV: slot, max, now, the new slot's score.
 */
const HELD = 1e15;
const RESERVE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], 'NX', ARGV[4], ARGV[1])
  return {}
end
return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')`;

/** Members and scores (as ZRANGE WITHSCORES gives them) as held slots. */
function heldSlots(flat: readonly string[]): HeldSlot[] {
  const held: HeldSlot[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const score = Number(flat[i + 1]);
    held.push({ slot: flat[i] as Slot, since: score >= HELD ? score - HELD : score - PENDING_SLOT_MS });
  }
  return held;
}

const LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`;

interface Scripts {
  takeTickets(key: string, ...ids: string[]): Promise<number>;
  reserveSlot(key: string, slot: string, max: number, now: number, score: string): Promise<string[]>;
  takeLease(key: string, holder: string, ms: number): Promise<number>;
  releaseLease(key: string, holder: string): Promise<number>;
}

/** How long a Redis command may wait for a connection before it fails (ioredis queues them meanwhile). */
const CONNECT_TIMEOUT_MS = 10_000;

/** A Redis client for the cluster `clusterId`, connected (or a clear error naming the address and the cause). */
export async function connectRedis(url: string, clusterId: string): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ServeError(
      `Redis URL ${JSON.stringify(redactUrl(url))}: expected redis://[user:password@]host[:port][/db]`,
    );
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new ServeError(`Redis URL ${redactUrl(url)}: expected redis:// or rediss://, not ${parsed.protocol}`);
  }
  const redis = new Redis(url, {
    keyPrefix: `ludus:${clusterId}:`,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: null, // a command waits out a Redis restart rather than failing after 20 tries
    enableOfflineQueue: true,
  });
  // ioredis reconnects by itself; its errors are said once each, not thrown at nobody.
  let said = "";
  redis.on("error", (error: Error) => {
    if (error.message === said) return;
    said = error.message;
    console.warn(`ludus: Redis at ${redactUrl(url)}: ${error.message}`);
  });
  redis.on("ready", () => (said = ""));
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new ServeError(`cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`);
  }
  return redis;
}

export class RedisState implements ClusterState {
  readonly shared = true;
  private readonly scripts: Scripts;

  constructor(private readonly redis: Redis) {
    redis.defineCommand("takeTickets", { numberOfKeys: 1, lua: TAKE_TICKETS });
    redis.defineCommand("reserveSlot", { numberOfKeys: 1, lua: RESERVE });
    redis.defineCommand("takeLease", { numberOfKeys: 1, lua: LEASE });
    redis.defineCommand("releaseLease", { numberOfKeys: 1, lua: RELEASE });
    this.scripts = redis as unknown as Scripts;
  }

  async addTicket(pool: string, ticket: PooledTicket): Promise<void> {
    await this.redis.hset(`pool:${pool}`, ticket.id, JSON.stringify(ticket));
  }

  async removeTicket(pool: string, id: string): Promise<boolean> {
    return await this.redis.hdel(`pool:${pool}`, id) === 1;
  }

  async tickets(pool: string): Promise<PooledTicket[]> {
    const all = await this.redis.hvals(`pool:${pool}`);
    return all.map((text) => JSON.parse(text) as PooledTicket);
  }

  async takeTickets(pool: string, ids: readonly string[]): Promise<boolean> {
    return await this.scripts.takeTickets(`pool:${pool}`, ...ids) === 1;
  }

  async groupSeed(pool: string, fresh: string): Promise<string> {
    const key = `seed:${pool}`;
    await this.redis.set(key, fresh, "EX", 86_400, "NX");
    return (await this.redis.get(key)) ?? fresh;
  }

  async lease(name: string, holder: string, ms: number): Promise<boolean> {
    return await this.scripts.takeLease(`lease:${name}`, holder, Math.max(1, Math.round(ms))) === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.scripts.releaseLease(`lease:${name}`, holder);
  }

  async reserve(token: string, slot: Slot, max: number): Promise<true | HeldSlot[]> {
    const now = Date.now();
    const score = slot.startsWith("p:") ? now + PENDING_SLOT_MS : HELD + now;
    const held = await this.scripts.reserveSlot(`slots:${token}`, slot, max, now, String(score));
    return held.length === 0 ? true : heldSlots(held);
  }

  async hold(token: string, slot: Slot): Promise<void> {
    // Held since it was first held: a match restored elsewhere keeps its age.
    await this.redis.zadd(`slots:${token}`, "NX", HELD + Date.now(), slot);
  }

  async releaseSlot(token: string, slot: Slot): Promise<void> {
    await this.redis.zrem(`slots:${token}`, slot);
  }

  async slots(token: string): Promise<HeldSlot[]> {
    return heldSlots(await this.redis.zrangebyscore(`slots:${token}`, Date.now(), "+inf", "WITHSCORES"));
  }

  async putSeat(ticket: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(`seat:${ticket}`, value, "PX", Math.max(1, Math.round(ttlMs)));
  }

  async takeSeat(ticket: string): Promise<string | null> {
    return await this.redis.getdel(`seat:${ticket}`);
  }

  async countFrames(window: number, counts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    const batch = this.redis.pipeline();
    for (const [token, n] of counts) {
      batch.incrby(`frames:${token}:${window}`, n);
      batch.pexpire(`frames:${token}:${window}`, 3000);
    }
    const results = (await batch.exec()) ?? [];
    const totals = new Map<string, number>();
    [...counts.keys()].forEach((token, i) => {
      const [error, total] = results[2 * i] ?? [];
      if (!error) totals.set(token, Number(total));
    });
    return totals;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
