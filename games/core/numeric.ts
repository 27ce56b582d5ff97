import { ActionError } from "./action.ts";

/** Helpers every game's numeric face shares: sizes, and the errors an action id gets. */

/** The number of entries in a tensor of `shape`. */
export function shapeSize(shape: readonly number[]): number {
  let size = 1;
  for (const n of shape) size *= n;
  return size;
}

/** The ids a mask allows, in order. */
export function maskIds(mask: Uint8Array): number[] {
  const ids: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) ids.push(i);
  return ids;
}

/**
 * Why `id` is not a legal action id under `mask` (the seat's legal mask now), or undefined when it is:
 * `not_your_turn` when nothing is legal, otherwise `illegal_action` naming the legal ids.
 */
export function idProblem(id: number, mask: Uint8Array): ActionError | undefined {
  if (Number.isInteger(id) && id >= 0 && id < mask.length && mask[id]) return undefined;
  const legal = maskIds(mask);
  if (legal.length === 0) return new ActionError("not_your_turn", "nothing is legal for this seat now", "");
  const what = Number.isInteger(id) && id >= 0 && id < mask.length
    ? `action id ${id} is not legal now`
    : `action id ${JSON.stringify(id)} is out of range: ids are integers in [0, ${mask.length - 1}]`;
  return new ActionError("illegal_action", what, `ids ${legal.join(", ")}`);
}

/** Sets `out` to a one-hot of `index` over `[at, at + width)` (nothing set when index is outside). */
export function oneHot(out: Float32Array, at: number, width: number, index: number): void {
  if (index >= 0 && index < width) out[at + index] = 1;
}
