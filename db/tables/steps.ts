import type { StepRecordRow } from "../records.ts";
import { defineTable, storedDate } from "./table.ts";

/**
 * `steps`: one row per decision (db/migrations/0001_replay_store.sql and later), as StepRecordRow holds it; `writer`
 * is the process that wrote the row (a retry after a lost reply recognises its own rows by it). The order is the
 * write path's and the record's.
 */
export const STEPS = defineTable<StepRecordRow, string, "writer">("steps", {
  matchId: { name: "match_id", type: "text" },
  seq: { name: "seq", type: "integer" },
  turn: { name: "turn", type: "integer" },
  seat: { name: "seat", type: "integer" },
  observation: { name: "observation", type: "json" },
  action: { name: "action", type: "json" },
  input: { name: "input", type: "json" },
  legal: { name: "legal", type: "boolean" },
  error: { name: "error", type: "json" },
  attempts: { name: "attempts", type: "json", read: (v) => (v ?? []) as StepRecordRow["attempts"] },
  defaulted: { name: "defaulted", type: "text" },
  // `real`: PostgreSQL's float4 reads back as a number on both backends, but say so.
  latencyMs: { name: "latency_ms", type: "real", read: Number },
  meta: { name: "meta", type: "json" },
  rewards: { name: "rewards", type: "json" },
  writer: { name: "writer", type: "text", write: (_, writer) => writer, read: false },
  at: { name: "at", type: "timestamptz", read: storedDate },
  offered: { name: "offered", type: "json" },
  legalIds: { name: "legal_ids", type: "json" },
  prompt: { name: "prompt", type: "text" },
});
