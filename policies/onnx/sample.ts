import type { Rng } from "../../games/core/rng.ts";

/**
 * An action id from `logits[at, at + mask.length)` restricted to the ids the mask allows: the most likely
 * (greedy), or drawn from their softmax with one `rng.float()`, so a match seeded alike samples alike.
 * -1 when the mask allows nothing.
 */
export function sampleMasked(
  logits: Float32Array,
  at: number,
  mask: Uint8Array,
  rng: Rng | undefined,
): number {
  let best = -1;
  for (let id = 0; id < mask.length; id++) {
    if (mask[id] && (best < 0 || logits[at + id] > logits[at + best])) best = id;
  }
  if (best < 0 || rng === undefined) return best;
  const top = logits[at + best];
  let total = 0;
  for (let id = 0; id < mask.length; id++) if (mask[id]) total += Math.exp(logits[at + id] - top);
  let u = rng.float() * total;
  let last = best;
  for (let id = 0; id < mask.length; id++) {
    if (!mask[id]) continue;
    last = id;
    u -= Math.exp(logits[at + id] - top);
    if (u < 0) return id;
  }
  return last;
}
