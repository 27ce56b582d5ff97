import type { NodeLife } from "../nodes.ts";
import type { MatchRecord } from "../records.ts";
import { defineTable, storedDate } from "./table.ts";

const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : storedDate(v));

/**
 * `matches`: one row per match (db/migrations/0001_replay_store.sql and later), as MatchRecord holds it, with the
 * server process that owns it (`owner`, `owner_epoch`: see db/nodes.ts; only the write path sets them). The order is
 * the record's.
 */
export const MATCHES = defineTable<MatchRecord, NodeLife | undefined, "owner" | "ownerEpoch">("matches", {
  id: { name: "id", type: "text" },
  game: { name: "game", type: "text" },
  gameVersion: { name: "game_version", type: "integer" },
  variant: { name: "variant", type: "text" },
  config: { name: "config", type: "jsonb" },
  seed: { name: "seed", type: "text" },
  seats: { name: "seats", type: "jsonb" },
  conduct: { name: "conduct", type: "jsonb" },
  statuses: { name: "statuses", type: "jsonb" },
  returns: { name: "returns", type: "jsonb" },
  endReason: { name: "end_reason", type: "text" },
  culprit: { name: "culprit", type: "integer" },
  steps: { name: "steps", type: "integer" },
  createdAt: { name: "created_at", type: "timestamptz", read: storedDate },
  startedAt: { name: "started_at", type: "timestamptz", read: dateOrNull },
  endedAt: { name: "ended_at", type: "timestamptz", read: dateOrNull },
  error: { name: "error", type: "text" },
  group: { name: "group_id", type: "text" },
  rated: { name: "rated", type: "boolean", write: (m) => m.rated ?? false, read: (v) => v === true },
  // The order matches end in: the database's trigger numbers a match as it ends (0003, 0008).
  endSeq: {
    name: "end_seq",
    type: "bigint",
    write: false,
    read: (v) => (v === null || v === undefined ? null : Number(v)),
  },
  // Capabilities: read back only to restore a match, never for the API or exports.
  invite: { name: "invite", type: "text", restricted: true },
  seatKeys: { name: "seat_keys", type: "jsonb", restricted: true },
  owner: { name: "owner", type: "text", write: (_, owner) => owner?.node ?? null, read: false },
  ownerEpoch: { name: "owner_epoch", type: "integer", write: (_, owner) => owner?.epoch ?? null, read: false },
});
