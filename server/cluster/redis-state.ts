import { Redis } from "ioredis";
import { redactUrl } from "../../db/sql.ts";
import { ServeError } from "../http.ts";
import { StoreUnavailableError } from "../match/live-matches.ts";
import { type ClusterState, PENDING_SLOT_MS, type PooledTicket, type Slot } from "./state.ts";

/**
 * The cluster's shared state in Redis (see state.ts). Every key is under `ludus:<cluster id>:` (the store's, see
 * db/nodes.ts), so clusters of different stores never meet on one Redis. What must change in one step (taking a
 * paired group out of its pool, holding a slot under a limit, a lease) is a Lua script, atomic in Redis.
 */

const TAKE_TICKETS = `
for _, id in ipairs(ARGV) do if redis.call('HEXISTS', KEYS[1], id) == 0 then return 0 end end
redis.call('HDEL', KEYS[1], unpack(ARGV))
return 1`;

// A token's slots: a sorted set scored by when each lapses (+inf: held until released). ARGV: slot, max, now, score.
const RESERVE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
  return {}
end
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

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

/** How long connecting to Redis may take at start. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long a command may wait for its answer (queued while Redis is unreachable, meanwhile) before it fails: a request
 * that needs Redis is refused in that time rather than left hanging while it is away.
 */
const COMMAND_TIMEOUT_MS = 2_000;

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * What to warn of when the cluster's Redis is open to its network: whoever reaches it can publish on the bus between
 * processes and so act for any player, read tokens' frames and take leases (docs/cluster.md, "Redis must be private").
 */
export function redisExposure(url: URL): string | undefined {
  if (url.password || LOOPBACK.test(url.hostname)) return undefined;
  return `Redis at ${
    redactUrl(url.href)
  } is asked without a password: anyone who can reach it can act for any player ` +
    `of this cluster. Keep it on a private network and give it a password (requirepass or an ACL user, then ` +
    `redis://[user]:password@host; rediss:// for TLS)`;
}

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
  const exposure = redisExposure(parsed);
  if (exposure) console.warn(`ludus: ${exposure}.`);
  const redis = new Redis(url, {
    keyPrefix: `ludus:${clusterId}:`,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: null, // a command waits (up to its timeout) for Redis to be back rather than fail at once
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
    // What Redis said (a refused password, say) comes as an error event; the rejection only says the connection closed.
    throw new ServeError(`cannot reach Redis at ${redactUrl(url)}: ${said || (error as Error).message}`);
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

  addTicket(pool: string, ticket: PooledTicket): Promise<void> {
    return this.run(async () => void await this.redis.hset(`pool:${pool}`, ticket.id, JSON.stringify(ticket)));
  }

  removeTicket(pool: string, id: string): Promise<boolean> {
    return this.run(async () => await this.redis.hdel(`pool:${pool}`, id) === 1);
  }

  tickets(pool: string): Promise<PooledTicket[]> {
    return this.run(async () => (await this.redis.hvals(`pool:${pool}`)).map((text) => JSON.parse(text)));
  }

  takeTickets(pool: string, ids: readonly string[]): Promise<boolean> {
    return this.run(async () => await this.scripts.takeTickets(`pool:${pool}`, ...ids) === 1);
  }

  groupSeed(pool: string, fresh: string): Promise<string> {
    return this.run(async () => {
      const key = `seed:${pool}`;
      await this.redis.set(key, fresh, "EX", 86_400, "NX");
      return (await this.redis.get(key)) ?? fresh;
    });
  }

  lease(name: string, holder: string, ms: number): Promise<boolean> {
    return this.run(async () =>
      await this.scripts.takeLease(`lease:${name}`, holder, Math.max(1, Math.round(ms))) === 1
    );
  }

  release(name: string, holder: string): Promise<void> {
    return this.run(async () => void await this.scripts.releaseLease(`lease:${name}`, holder));
  }

  reserve(token: string, slot: Slot, max: number): Promise<true | Slot[]> {
    return this.run(async () => {
      const now = Date.now();
      const score = slot.startsWith("p:") ? String(now + PENDING_SLOT_MS) : "+inf";
      const held = await this.scripts.reserveSlot(`slots:${token}`, slot, max, now, score);
      return held.length === 0 ? true : held as Slot[];
    });
  }

  hold(token: string, slot: Slot): Promise<void> {
    return this.run(async () => void await this.redis.zadd(`slots:${token}`, "+inf", slot));
  }

  releaseSlot(token: string, slot: Slot): Promise<void> {
    return this.run(async () => void await this.redis.zrem(`slots:${token}`, slot));
  }

  slots(token: string): Promise<Slot[]> {
    return this.run(async () => await this.redis.zrangebyscore(`slots:${token}`, Date.now(), "+inf") as Slot[]);
  }

  putSeat(ticket: string, value: string, ttlMs: number): Promise<void> {
    return this.run(async () =>
      void await this.redis.set(`seat:${ticket}`, value, "PX", Math.max(1, Math.round(ttlMs)))
    );
  }

  takeSeat(ticket: string): Promise<string | null> {
    return this.run(() => this.redis.getdel(`seat:${ticket}`));
  }

  countFrames(window: number, counts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    return this.run(async () => {
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
    });
  }

  /** Runs a command: a failure (Redis unreachable, a timeout) is StoreUnavailableError, as the store's are. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw new StoreUnavailableError(
        "store_unavailable",
        `the cluster's Redis cannot be used just now (${(error as Error).message}); try again shortly`,
      );
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
