/**
 * The instances of Deal or No Deal under Lewis et al.'s constraints: three item types, 5 to 7
 * items with at least one of each type, each player's values summing to 10 over the pool, every
 * type worth something to someone and some type worth something to both. There are few enough
 * (5,793) to list them all, so a uniform draw is one index, and a seat that knows the pool and its
 * own values can enumerate exactly what the other's values may be.
 */

export const ITEMS = ["books", "hats", "balls"] as const;
export const ITEM_TYPES = ITEMS.length;
/** Each player's value of the whole pool. */
export const TOTAL_VALUE = 10;
export const MIN_ITEMS = 5;
export const MAX_ITEMS = 7;

export type Counts = readonly [number, number, number];

export interface Instance {
  /** How many books, hats and balls there are. */
  readonly pool: Counts;
  /** Each player's value per unit of each item type, player 0 first. */
  readonly values: readonly [Counts, Counts];
}

/** Every pool: three positive counts with a total of 5 to 7. */
export function pools(): Counts[] {
  const out: Counts[] = [];
  for (let b = 1; b <= MAX_ITEMS; b++) {
    for (let h = 1; b + h < MAX_ITEMS; h++) {
      for (let l = 1; b + h + l <= MAX_ITEMS; l++) if (b + h + l >= MIN_ITEMS) out.push([b, h, l]);
    }
  }
  return out;
}

/** Every per-unit valuation of `pool` worth TOTAL_VALUE in all. */
export function valuations(pool: Counts): Counts[] {
  const out: Counts[] = [];
  for (let b = 0; b * pool[0] <= TOTAL_VALUE; b++) {
    for (let h = 0; b * pool[0] + h * pool[1] <= TOTAL_VALUE; h++) {
      const rest = TOTAL_VALUE - b * pool[0] - h * pool[1];
      if (rest % pool[2] === 0) out.push([b, h, rest / pool[2]]);
    }
  }
  return out;
}

/** True when every type is worth something to someone and some type is worth something to both. */
export function valuesFit(v0: Counts, v1: Counts): boolean {
  let shared = false;
  for (let i = 0; i < ITEM_TYPES; i++) {
    if (v0[i] === 0 && v1[i] === 0) return false;
    if (v0[i] > 0 && v1[i] > 0) shared = true;
  }
  return shared;
}

let all: readonly Instance[] | undefined;

/** Every valid instance, in a fixed order (pools, then player 0's values, then player 1's). */
export function allInstances(): readonly Instance[] {
  if (all === undefined) {
    const list: Instance[] = [];
    for (const pool of pools()) {
      const options = valuations(pool);
      for (const v0 of options) {
        for (const v1 of options) {
          if (valuesFit(v0, v1)) {
            list.push(Object.freeze({ pool, values: Object.freeze([v0, v1]) as [Counts, Counts] }));
          }
        }
      }
    }
    all = Object.freeze(list);
  }
  return all;
}

/** What is wrong with an instance, in one sentence, or undefined when it obeys every constraint. */
export function instanceProblem(instance: Instance): string | undefined {
  const { pool, values } = instance;
  const total = pool[0] + pool[1] + pool[2];
  if (pool.some((n) => n < 1) || total < MIN_ITEMS || total > MAX_ITEMS) {
    return `the pool needs at least one of each item and ${MIN_ITEMS} to ${MAX_ITEMS} items in all, got ${
      pool.join(",")
    }`;
  }
  for (const seat of [0, 1]) {
    const worth = worthOf(values[seat], pool);
    if (worth !== TOTAL_VALUE) {
      return `player ${seat}'s values must make the pool worth ${TOTAL_VALUE}, but ${values[seat].join(",")} ` +
        `makes it worth ${worth}`;
    }
  }
  if (!valuesFit(values[0], values[1])) {
    return "every item type must be worth something to at least one player, and some type to both";
  }
  return undefined;
}

/** Σ counts·values. */
export function worthOf(values: ArrayLike<number>, counts: ArrayLike<number>): number {
  return values[0] * counts[0] + values[1] * counts[1] + values[2] * counts[2];
}
