import type { ReplayStore } from "../../db/store.ts";

/**
 * A match an interrupted run (a tournament, an evolution) left unfinished, closed as aborted when the run resumes
 * and plays its place again: no later server start restores it, and nothing counts it.
 */
export async function closeCutOff(store: ReplayStore, matchId: string, why: string): Promise<void> {
  const record = await store.match(matchId);
  if (!record || record.endedAt) return;
  await store.closeUnplayed(record, "aborted", why);
}
