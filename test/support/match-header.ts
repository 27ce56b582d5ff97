import type { MatchRecord, StepRecordRow } from "../../db/records.ts";

/**
 * A match row as the server writes it when the match is created (nothing played, nothing ended): an IPD match of a
 * bot against a built-in unless `fields` says otherwise. Store tests write it without running a server.
 */
export const matchHeader = (id: string, fields: Partial<MatchRecord> = {}): MatchRecord => {
  const seats = fields.seats ?? [
    { kind: "bot", name: "a", tokenId: "t1" },
    { kind: "builtin", name: "random", strategy: "random" },
  ];
  return {
    id,
    game: "ipd",
    gameVersion: 1,
    variant: "classic",
    config: {},
    seed: "1",
    conduct: {},
    statuses: seats.map(() => "ACTIVE"),
    returns: null,
    endReason: null,
    culprit: null,
    steps: 0,
    createdAt: new Date(),
    startedAt: null,
    endedAt: null,
    ...fields,
    seats,
  };
};

/** An IPD decision's row (seats alternating) as group commit takes it, for store tests. */
export const stepRow = (matchId: string, seq: number, action: unknown = { type: "cooperate" }): StepRecordRow => ({
  matchId,
  seq,
  turn: Math.floor((seq - 1) / 2),
  seat: (seq - 1) % 2,
  observation: { round: seq },
  action,
  legal: true,
  error: null,
  attempts: [],
  defaulted: null,
  latencyMs: 1,
  meta: null,
  rewards: null,
  at: new Date(),
});
