import * as arrow from "apache-arrow";
import { NumericFaceError } from "../../games/core/game.ts";
import { registry } from "../../games/registry.ts";
import { QueryError } from "../query.ts";
import { replayMatch } from "../replay.ts";
import { ARROW_TYPES, type ParquetEncoder, PLAYED_BY_FIELDS, playedByColumns, wasmBatch } from "./parquet.ts";
import type { TensorSpec } from "./tensor-spec.ts";
import type { ExportMatch } from "./source.ts";

/**
 * `tensors.parquet`: one row per decision of one game version and variant, in fixed-size columns that
 * pyarrow and PyTorch read with no per-game code — the seat's information-state tensor (encoded from the
 * observation it was shown), its legal mask and the action id it took — beside the reward, done flag,
 * seat, match, group, seed and who sat there; and the state, every seat's tensor at that decision (for
 * centralised critics and baselines: no seat saw it whole). The shape is the game's for the variant (or for the
 * `config` given over it); matches whose config gives another shape, action count or seat count are left out, so
 * that what one player chose to play never breaks everyone else's export.
 */

const { utf8, int32, float64, bool } = ARROW_TYPES;

type Row = {
  match: ExportMatch["match"];
  seat: number;
  seq: number;
  turn: number;
  actionId: number;
  reward: number;
  done: boolean;
  legal: boolean;
  meta: Record<string, unknown> | null;
};

type Scalar = readonly [string, arrow.DataType, boolean, (r: Row) => unknown];

/** Per-row scalar columns before who played (played-by.ts) and after; the tensor, mask and cursor columns follow. */
const HEAD: readonly Scalar[] = [
  ["match_id", utf8, false, (r) => r.match.id],
  ["game", utf8, false, (r) => r.match.game],
  ["game_version", int32, false, (r) => r.match.gameVersion],
  ["variant", utf8, false, (r) => r.match.variant],
  ["group", utf8, true, (r) => r.match.group ?? null],
  ["seed", utf8, false, (r) => r.match.seed],
  ["seat", int32, false, (r) => r.seat],
  ["turn", int32, false, (r) => r.turn],
  ["seq", int32, false, (r) => r.seq],
];
const TAIL: readonly Scalar[] = [
  ["action_id", int32, false, (r) => r.actionId],
  ["legal", bool, false, (r) => r.legal],
  ["reward", float64, false, (r) => r.reward],
  ["done", bool, false, (r) => r.done],
  ["return", float64, true, (r) => r.match.returns?.[r.seat] ?? null],
];

/** The Parquet layout of a tensors export. */
export function tensorsEncoder(spec: TensorSpec): ParquetEncoder {
  const observationType = new arrow.FixedSizeList(spec.size, new arrow.Field("item", new arrow.Float32(), false));
  const maskType = new arrow.FixedSizeList(spec.actions, new arrow.Field("item", new arrow.Uint8(), false));
  const width = spec.seats * spec.size;
  const stateType = new arrow.FixedSizeList(width, new arrow.Field("item", new arrow.Float32(), false));
  const schema = new arrow.Schema(
    [
      ...HEAD.map(([name, type, nullable]) => new arrow.Field(name, type, nullable)),
      ...PLAYED_BY_FIELDS,
      ...TAIL.map(([name, type, nullable]) => new arrow.Field(name, type, nullable)),
      new arrow.Field("observation", observationType, false),
      new arrow.Field("legal_mask", maskType, false),
      new arrow.Field("state", stateType, false),
      new arrow.Field("cursor", utf8, true),
    ],
    new Map([
      ["ludus.game", spec.game.id],
      ["ludus.game_version", String(spec.game.version)],
      ["ludus.variant", spec.variant],
      ["ludus.observation_shape", JSON.stringify(spec.shape)],
      ["ludus.state_shape", JSON.stringify([spec.seats, ...spec.shape])],
      ["ludus.action_count", String(spec.actions)],
    ]),
  );

  const encode = (page: readonly ExportMatch[]) => {
    const rows: Row[] = [];
    const cursors: (string | null)[] = [];
    let tensors = new Float32Array(1024 * spec.size);
    let masks = new Uint8Array(1024 * spec.actions);
    let states = new Float32Array(1024 * width);
    for (const entry of page) {
      const { match } = entry;
      if (!fits(spec, match)) continue; // another shape: exported with the `config` that gives it
      const first = rows.length;
      for (const event of replayMatch(match, entry.steps, "all", { numeric: true })) {
        if (event.kind !== "turn") continue;
        if (event.problem) throw new QueryError(`match ${match.id} cannot be re-simulated: ${event.problem.message}`);
        event.rows.forEach((step, k) => {
          if (step.action === null) return; // the seat never moved: the match ended first
          const n = rows.length;
          if ((n + 1) * spec.size > tensors.length) {
            tensors = grow(tensors, 2 * tensors.length);
            masks = grow(masks, 2 * masks.length);
            states = grow(states, 2 * states.length);
          }
          spec.game.encode(event.observations[k], tensors.subarray(n * spec.size, (n + 1) * spec.size));
          const { seats: views } = event.view as { seats: unknown[] };
          views.forEach((view, seat) => {
            const at = n * width + seat * spec.size;
            spec.game.encode(view, states.subarray(at, at + spec.size));
          });
          for (const id of event.legalIds![k]) masks[n * spec.actions + id] = 1;
          rows.push({
            match,
            seat: step.seat,
            seq: step.seq,
            turn: step.turn,
            actionId: event.actionIds![k],
            reward: event.rewards?.[step.seat] ?? 0,
            done: false,
            legal: step.legal,
            meta: step.meta,
          });
          cursors.push(null);
        });
      }
      // Each seat's last decision of the match is its terminal one.
      const seen = new Set<number>();
      for (let i = rows.length - 1; i >= first && seen.size < match.seats.length; i--) {
        if (!seen.has(rows[i].seat)) rows[i].done = true;
        seen.add(rows[i].seat);
      }
      if (rows.length > first) cursors[rows.length - 1] = entry.cursor;
    }
    return {
      rows,
      cursors,
      tensors: tensors.subarray(0, rows.length * spec.size),
      masks,
      states: states.subarray(0, rows.length * width),
    };
  };

  const batch = (page: readonly ExportMatch[]) => {
    const { rows, cursors, tensors, masks, states } = encode(page);
    const n = rows.length;
    const children = [
      ...HEAD.map(([, type, , value]) => arrow.vectorFromArray(rows.map(value), type).data[0]),
      ...playedByColumns(rows, (r) => ({ seat: r.match.seats[r.seat] ?? null, meta: r.meta })),
      ...TAIL.map(([, type, , value]) => arrow.vectorFromArray(rows.map(value), type).data[0]),
      arrow.makeData({
        type: observationType,
        length: n,
        nullCount: 0,
        child: arrow.makeData({ type: new arrow.Float32(), length: n * spec.size, data: tensors }),
      }),
      arrow.makeData({
        type: maskType,
        length: n,
        nullCount: 0,
        child: arrow.makeData({
          type: new arrow.Uint8(),
          length: n * spec.actions,
          data: masks.subarray(0, n * spec.actions),
        }),
      }),
      arrow.makeData({
        type: stateType,
        length: n,
        nullCount: 0,
        child: arrow.makeData({ type: new arrow.Float32(), length: n * width, data: states }),
      }),
      arrow.vectorFromArray(cursors, utf8).data[0],
    ];
    return { batch: wasmBatch(schema, n, children), rows: n };
  };

  return {
    empty: () => batch([]).batch,
    page(page) {
      const made = batch(page);
      return { batches: made.rows > 0 ? [made.batch] : [], rows: made.rows };
    },
  };
}

/** Whether a match's config gives the export's shapes: its observation shape, action count and seat count. */
function fits(spec: TensorSpec, match: ExportMatch["match"]): boolean {
  const game = registry.get(match.game, match.gameVersion);
  try {
    return game.seatCount(match.config) === spec.seats && game.actionCount(match.config) === spec.actions &&
      game.observationShape(match.config).join() === spec.shape.join();
  } catch (error) {
    if (error instanceof NumericFaceError) return false; // no tensors for this config at all
    throw error;
  }
}

function grow<T extends Float32Array | Uint8Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (n: number) => T)(length);
  bigger.set(array);
  return bigger;
}
