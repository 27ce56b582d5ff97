/**
 * The Donor Game's pairing schedule: the reference notebook's `bipartiteRoundRobin` followed by
 * `extendRounds`, generalised from 12 agents to any even N.
 *
 * Group A is the first N/2 agents of `order`, group B the rest. For i = 0..N/2−1,
 * rotated_B = B[−i:] + B[:−i]; on even i A_k donates to rotated_B_k, on odd i rotated_B_k
 * donates to A_k. The same N/2 rounds follow with donor and recipient swapped, so a game has N
 * rounds, every agent meets every agent of the other group twice (once each way) and gives in
 * exactly N/2 rounds. Game 2 plays every pair reversed.
 */
export interface Schedule {
  readonly agents: number;
  /** Game 1's donors per round (seats); game 2's donors are game 1's recipients. */
  readonly donors: readonly (readonly number[])[];
  /** Game 1's recipients per round, index-aligned with `donors`. */
  readonly recipients: readonly (readonly number[])[];
  /** partner[round · N + seat]: the seat's partner in that round (the same in both games). */
  readonly partner: Int32Array;
  /** giver[round · N + seat] = 1 when the seat donates in that round of game 1. */
  readonly giver: Uint8Array;
  /** group[seat]: 0 for group A, 1 for group B. */
  readonly group: Uint8Array;
}

/** The schedule for agents seated by `order` (a permutation of the seats). */
export function buildSchedule(order: readonly number[]): Schedule {
  const n = order.length;
  const half = n / 2;
  const donors: number[][] = [];
  const recipients: number[][] = [];
  const partner = new Int32Array(n * n);
  const giver = new Uint8Array(n * n);
  const group = new Uint8Array(n);
  for (let k = half; k < n; k++) group[order[k]] = 1;
  for (let i = 0; i < half; i++) {
    const give: number[] = [];
    const take: number[] = [];
    for (let k = 0; k < half; k++) {
      const a = order[k];
      // rotated_B[k] = B[(k − i) mod N/2]
      const b = order[half + ((k - i + half) % half)];
      give.push(i % 2 === 0 ? a : b);
      take.push(i % 2 === 0 ? b : a);
    }
    donors[i] = give;
    recipients[i] = take;
    donors[i + half] = take;
    recipients[i + half] = give;
  }
  for (let round = 0; round < n; round++) {
    for (let k = 0; k < half; k++) {
      const d = donors[round][k];
      const r = recipients[round][k];
      partner[round * n + d] = r;
      partner[round * n + r] = d;
      giver[round * n + d] = 1;
    }
  }
  return {
    agents: n,
    donors: Object.freeze(donors.map((seats) => Object.freeze(seats))),
    recipients: Object.freeze(recipients.map((seats) => Object.freeze(seats))),
    partner,
    giver,
    group,
  };
}

let unshuffled: Schedule | undefined;

/** The schedule with seat k as agent k; the last one built is kept, since unshuffled matches all share it. */
export function identitySchedule(n: number): Schedule {
  if (unshuffled?.agents !== n) unshuffled = buildSchedule(Array.from({ length: n }, (_, k) => k));
  return unshuffled;
}
