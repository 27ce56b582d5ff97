import { type Sql, textArray } from "./sql.ts";
import { MATCHES } from "./tables/matches.ts";

/**
 * The match directory: the server processes sharing a store (nodes) and which of them plays each live match
 * (`matches.owner`). A node holds a lease it renews; once the lease lapsed, a peer that sees it may take the node's
 * matches, marking that life taken over. A life taken over can never renew: the node, if it was only stalled, must
 * join again. A life nobody took over renews a lapsed lease and plays on (a store outage lapses every lease at once,
 * and a process alone on its store has nobody to hand over to).
 */

/** One life of a node: its id and the epoch it joined as. Records are written for this owner only. */
export interface NodeLife {
  readonly node: string;
  readonly epoch: number;
}

export interface NodeRecord extends NodeLife {
  readonly url: string;
  /** Whether it shares the cluster's Redis. */
  readonly shared: boolean;
  /** Its browser rooms' process id in Colyseus's matchmaker, once it listens. */
  readonly rooms: string | null;
  readonly leaseUntil: Date;
  readonly startedAt: Date;
  /** Whether its lease still runs (by the database's clock). */
  readonly live: boolean;
}

/** A node as `GET /cluster` lists it: with the unfinished matches it owns. */
export interface NodeListing extends NodeRecord {
  readonly matches: number;
}

/** Who plays an unfinished match: its owner's life, where that is reached, and whether its lease runs. */
export interface MatchOwner extends NodeLife {
  readonly match: string;
  readonly url: string;
  readonly rooms: string | null;
  readonly live: boolean;
}

/** A node id: what `--node` takes. Short and printable, for logs and URLs. */
export const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** A process that may not join the store's processes as it is (one alone beside peers, or the other way round). */
export class NodeConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NodeConflictError";
  }
}

const M = MATCHES.column;

const OWNER_SELECT = `SELECT m.${M.id} AS match, n.id AS node, m.${M.ownerEpoch} AS epoch, n.url, n.rooms,
  n.lease_until > clock_timestamp() AND n.epoch = m.${M.ownerEpoch} AS live
  FROM matches m JOIN nodes n ON n.id = m.${M.owner}`;

type OwnerRow = { match: string; node: string; epoch: number; url: string; rooms: string | null; live: boolean };

export class NodeDirectory {
  constructor(private readonly sql: Sql) {}

  /** The name this store's processes share Redis under (made with the store). */
  async clusterId(): Promise<string> {
    const [row] = await this.sql.query<{ id: string }>("SELECT id FROM cluster LIMIT 1");
    return row.id;
  }

  /**
   * Joins as a new life of `node` (the epoch after its last), reachable at `url`, its lease running `leaseMs`.
   * `shared`: whether it shares the cluster's Redis. A process without it may not join while another process's
   * lease runs on this store, nor one with it while a process without it runs: they could not reach each other,
   * and each would take matches the other plays.
   */
  async join(node: string, options: { url: string; shared: boolean; leaseMs: number }): Promise<NodeLife> {
    return await this.sql.transaction(async (tx) => {
      // One join at a time, so two processes starting together both see each other.
      await tx.query("LOCK TABLE nodes IN SHARE ROW EXCLUSIVE MODE");
      const peers = await tx.query<{ id: string; shared: boolean }>(
        "SELECT id, shared FROM nodes WHERE id <> $1 AND lease_until > clock_timestamp() ORDER BY id",
        [node],
      );
      const alone = peers.filter((p) => !p.shared);
      if (!options.shared && peers.length > 0) {
        throw new NodeConflictError(
          `server process ${peers.map((p) => p.id).join(", ")} already plays on this store: processes that share a ` +
            "store must share a Redis too (`ludus serve --redis-url`, or REDIS_URL), or each use a store of its own",
        );
      }
      if (options.shared && alone.length > 0) {
        throw new NodeConflictError(
          `server process ${
            alone.map((p) => p.id).join(", ")
          } plays on this store without Redis: stop it, or start it with the same --redis-url, before others join it`,
        );
      }
      const [{ epoch }] = await tx.query<{ epoch: number }>(
        `INSERT INTO nodes (id, epoch, url, shared, lease_until, started_at)
         VALUES ($1, 1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond', clock_timestamp())
         ON CONFLICT (id) DO UPDATE SET epoch = nodes.epoch + 1, url = EXCLUDED.url, shared = EXCLUDED.shared,
           rooms = NULL, lease_until = EXCLUDED.lease_until, started_at = EXCLUDED.started_at, taken_at = NULL
         RETURNING epoch`,
        [node, options.url, options.shared, options.leaseMs],
      );
      return { node, epoch };
    });
  }

  /**
   * Extends the lease by `leaseMs` from now: "renewed"; "revived" when it had lapsed but no peer took the life
   * over (it plays on, its matches still its own); "taken-over" when a peer took its matches (the node must join
   * again before it writes anything more); or "superseded" when a newer life of the node joined meanwhile (another
   * process runs with this node id).
   */
  async renew(life: NodeLife, leaseMs: number): Promise<"renewed" | "revived" | "taken-over" | "superseded"> {
    // `was` is the row as it stood before this update: whether the lease still ran.
    const rows = await this.sql.query<{ ran: boolean }>(
      `UPDATE nodes SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
       FROM nodes was
       WHERE nodes.id = $1 AND nodes.epoch = $2 AND nodes.taken_at IS NULL AND was.id = nodes.id
       RETURNING was.lease_until > clock_timestamp() AS ran`,
      [life.node, life.epoch, leaseMs],
    );
    if (rows.length === 1) return rows[0].ran ? "renewed" : "revived";
    const [now] = await this.sql.query<{ epoch: number }>("SELECT epoch FROM nodes WHERE id = $1", [life.node]);
    return now && now.epoch > life.epoch ? "superseded" : "taken-over";
  }

  /** Records where the node is reached (known once it listens) and its browser rooms' process id. */
  async advertise(life: NodeLife, url: string, rooms: string | null): Promise<void> {
    await this.sql.query("UPDATE nodes SET url = $3, rooms = $4 WHERE id = $1 AND epoch = $2", [
      life.node,
      life.epoch,
      url,
      rooms,
    ]);
  }

  /** Lets the lease lapse now: a stopping node's matches go to its peers at their next look. */
  async leave(life: NodeLife): Promise<void> {
    await this.sql.query(
      "UPDATE nodes SET lease_until = clock_timestamp() WHERE id = $1 AND epoch = $2",
      [life.node, life.epoch],
    );
  }

  /**
   * Takes the unfinished matches of nodes whose lease lapsed, and with `start` also those of this node's
   * earlier lives and those nobody owns (written before there were owners, or by a process that is not a
   * server); `alone` (a store only this process can open): every unfinished match. Returns their
   * ids, oldest first. The lapsed nodes' rows are locked and their lives marked taken over first, so a renewal
   * racing this waits and then finds its life taken over; group commit's batches hold their life's row and write
   * only while it is not taken over, so a lapsed owner's batch lands before its matches change hands or not at all.
   * A life taken over owns no unfinished match (all moved here, and it writes no more), so it is never looked at
   * again: run every tick, this reads only the few rows of `nodes` unless a peer has just lapsed.
   */
  async claim(life: NodeLife, { start = false, alone = false } = {}): Promise<string[]> {
    return await this.sql.transaction(async (tx) => {
      const lapsed = await tx.query<{ id: string }>(
        `SELECT id FROM nodes WHERE id <> $1 AND lease_until < clock_timestamp() AND taken_at IS NULL
         ORDER BY id FOR UPDATE`,
        [life.node],
      );
      const from = lapsed.map((n) => n.id);
      if (from.length === 0 && !start && !alone) return [];
      await tx.query(
        "UPDATE nodes SET taken_at = clock_timestamp() WHERE id = ANY($1::text[]) AND taken_at IS NULL",
        [textArray(from)],
      );
      if (start) from.push(life.node);
      const rows = await tx.query<{ id: string }>(
        `UPDATE matches SET ${M.owner} = $1, ${M.ownerEpoch} = $2
         WHERE ${M.id} IN (
           SELECT ${M.id} FROM matches
           WHERE ${M.endedAt} IS NULL AND ($5 OR ${M.owner} = ANY($3::text[]) OR ($4 AND ${M.owner} IS NULL))
             AND (${M.owner} IS DISTINCT FROM $1 OR ${M.ownerEpoch} < $2)
           ORDER BY ${M.createdAt}, ${M.id}
         )
         RETURNING ${M.id} AS id`,
        [life.node, life.epoch, textArray(from), start, alone],
      );
      return rows.map((r) => r.id);
    });
  }

  /** Every node the store has seen, with its lease: what each process looks at every tick (a few rows). */
  async nodes(): Promise<NodeRecord[]> {
    const rows = await this.sql.query<NodeRow>(
      `SELECT id, epoch, url, shared, rooms, lease_until, started_at, lease_until > clock_timestamp() AS live
       FROM nodes ORDER BY id`,
    );
    return rows.map(nodeRecord);
  }

  /** Every node the store has seen, with how many unfinished matches it owns (`GET /cluster`; it reads them all). */
  async listing(): Promise<NodeListing[]> {
    const rows = await this.sql.query<NodeRow & { matches: number }>(
      `SELECT n.id, n.epoch, n.url, n.shared, n.rooms, n.lease_until, n.started_at,
         n.lease_until > clock_timestamp() AS live,
         (SELECT count(*) FROM matches m WHERE m.${M.owner} = n.id AND m.${M.endedAt} IS NULL)::integer AS matches
       FROM nodes n ORDER BY n.id`,
    );
    return rows.map((r) => ({ ...nodeRecord(r), matches: r.matches }));
  }

  /** The owners of those of `ids` that are unfinished and owned (others are left out). */
  async owners(ids: readonly string[]): Promise<MatchOwner[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql.query<OwnerRow>(
      `${OWNER_SELECT} WHERE m.${M.id} = ANY($1::text[]) AND m.${M.endedAt} IS NULL`,
      [textArray(ids)],
    );
    return rows.map(ownerOf);
  }

  /** Who plays an unfinished match, or undefined when none does (unknown, ended, never owned). */
  async ownerOf(matchId: string): Promise<MatchOwner | undefined> {
    return (await this.owners([matchId]))[0];
  }

  /** Who plays the unfinished match an invite is for, if any. */
  async ownerOfInvite(invite: string): Promise<MatchOwner | undefined> {
    const [row] = await this.sql.query<OwnerRow>(
      `${OWNER_SELECT} WHERE m.${M.invite} = $1 AND m.${M.endedAt} IS NULL`,
      [invite],
    );
    return row && ownerOf(row);
  }
}

type NodeRow = {
  id: string;
  epoch: number;
  url: string;
  shared: boolean;
  rooms: string | null;
  lease_until: Date;
  started_at: Date;
  live: boolean;
};

const nodeRecord = (r: NodeRow): NodeRecord => ({
  node: r.id,
  epoch: r.epoch,
  url: r.url,
  shared: r.shared,
  rooms: r.rooms,
  leaseUntil: new Date(r.lease_until),
  startedAt: new Date(r.started_at),
  live: r.live,
});

const ownerOf = (r: OwnerRow): MatchOwner => ({
  match: r.match,
  node: r.node,
  epoch: r.epoch,
  url: r.url,
  rooms: r.rooms,
  live: r.live,
});
