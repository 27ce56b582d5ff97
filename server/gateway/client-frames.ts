import { Packr } from "msgpackr";
import { z } from "zod";
import { unstorable } from "../../db/storable.ts";
import type { ClientFrame, ErrorCode, ServerFrame } from "../../protocol/frames.ts";

/** Reading and writing gateway frames: JSON text or msgpack binary, checked against the protocol's shapes. */

export type Format = "json" | "msgpack";

// Plain msgpack maps and arrays (no msgpackr records), so every language's msgpack reads them.
const packr = new Packr({ useRecords: false, variableMapSize: true });

/**
 * Epoch-millisecond fields: past 2^32, msgpackr would write these whole numbers as float64. As BigInt they go
 * out as msgpack integers (int64), as JSON has them (decode them with msgpackr's `int64AsType: "number"`).
 */
const EPOCH_FIELDS = ["deadline", "fillAt", "time"] as const;

export function encode(frame: ServerFrame, format: Format): string | Uint8Array {
  if (format === "json") return JSON.stringify(frame);
  const fields = frame as unknown as Record<string, unknown>;
  const epochs = EPOCH_FIELDS.filter((key) => typeof fields[key] === "number");
  if (epochs.length === 0) return packr.pack(frame);
  const copy: Record<string, unknown> = { ...fields };
  for (const key of epochs) copy[key] = BigInt(copy[key] as number);
  return packr.pack(copy);
}

const id = z.string().min(1).max(128);
/** A seat number: games have at most a few dozen seats; the match checks it against its own count. */
const seat = z.number().int().min(0).max(1023);

/** Who plays behind a token (`auth.agent`) or one seat (`create.agents`), as the record keeps it: bounded. */
const agent = z.strictObject({
  model: z.string().min(1).max(256).optional(),
  endpoint: z.string().min(1).max(1024).optional(),
  sampling: z.record(
    z.string().max(64),
    z.union([z.string().max(256), z.number(), z.boolean(), z.null()], {
      error: "a sampling value is a string, a number, a boolean or null",
    }),
  ).refine((o) => Object.keys(o).length <= 32, "at most 32 sampling parameters").optional(),
}, {
  error: (issue) =>
    issue.code === "unrecognized_keys" || issue.code === "invalid_type"
      ? 'an agent is an object of `model`, `endpoint` and `sampling`, e.g. {"model": "m", "sampling": {"temperature": 0.7}}'
      : undefined,
});
/** A record keyed by seat number (`create.opponents`, `create.agents`). */
const bySeat = <T extends z.ZodType>(what: string, value: T, example: string) =>
  z.record(z.string().regex(/^\d{1,4}$/), value, {
    error: (issue) =>
      issue.code === "invalid_type" || issue.code === "invalid_key"
        ? `${what} are an object keyed by seat number, e.g. ${example}`
        : undefined,
  });

/** What an `act` carries, at the bot door (with its `type` and `match`) and in a match room (the room is the match). */
const ACT_FIELDS = z.strictObject({
  seq: z.number().int().min(1),
  action: z.unknown().optional(),
  // Whether an id is in range and legal is the game's to say (an illegal action, with the legal ids named).
  actionId: z.number().int("`actionId` must be an integer action id, one of the turn's `legalIds`").optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});

/** An act gives exactly one of `action` and `actionId`. */
const oneAction = <T extends z.ZodType<{ action?: unknown; actionId?: number }>>(schema: T) =>
  schema.superRefine((act, context) => {
    const given = [act.action, act.actionId].filter((field) => field !== undefined).length;
    if (given === 1) return;
    context.addIssue({
      code: "custom",
      path: given === 0 ? ["action"] : [],
      message: given === 0
        ? "`action` is required: a JSON action or its text (or `actionId`, an action id of the turn's `legalIds`)"
        : "give `action` or `actionId`, not both",
    });
  });

// A Map, not an object: a client's `type` must never find an inherited property (`constructor`, `toString`).
const schemas = new Map<string, z.ZodType>([
  [
    "auth",
    z.strictObject({
      type: z.literal("auth"),
      token: z.string().max(256),
      text: z.boolean().optional(),
      numeric: z.boolean().optional(),
      agent: agent.optional(),
    }),
  ],
  [
    "queue",
    z.strictObject({
      type: z.literal("queue"),
      game: id,
      variant: id.optional(),
      selfPlay: z.boolean().optional(),
      group: id.optional(),
    }),
  ],
  ["cancel", z.strictObject({ type: z.literal("cancel"), ticket: id })],
  [
    "create",
    z.strictObject({
      type: z.literal("create"),
      game: id,
      variant: id.optional(),
      config: z.record(z.string(), z.unknown()).optional(),
      seat: seat.nullable().optional(),
      opponents: bySeat("opponents", z.string().max(128), '{"1": "strategy:random"}').optional(),
      agents: bySeat("agents", agent, '{"1": {"model": "m"}}').optional(),
      seed: z.string().min(1).max(128).optional(),
      group: id.optional(),
    }),
  ],
  ["join", z.strictObject({ type: z.literal("join"), match: id })],
  ["act", oneAction(ACT_FIELDS.extend({ type: z.literal("act"), match: id }))],
  [
    "withdraw",
    z.strictObject({
      type: z.literal("withdraw"),
      match: id,
      reason: z.string().min(1).max(2000),
      seat: seat.optional(),
    }),
  ],
  ["resume", z.strictObject({ type: z.literal("resume"), match: id })],
  ["ping", z.strictObject({ type: z.literal("ping"), id: z.union([z.string().max(128), z.number()]).optional() })],
]);

export const FRAME_TYPES: readonly string[] = [...schemas.keys()];

/** Each client frame type's fields, and whether each may be absent: what docs/protocol.md's table must say. */
export function clientFrameFields(): Record<string, Record<string, "required" | "optional">> {
  return Object.fromEntries(
    [...schemas].map(([type, schema]) => [
      type,
      Object.fromEntries(
        Object.entries((schema as z.ZodObject).shape).map((
          [field, value],
        ) => [field, (value as z.ZodType).safeParse(undefined).success ? "optional" : "required"]),
      ),
    ]),
  );
}

export class FrameError extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
    this.name = "FrameError";
  }
}

/** Decodes one websocket message into a checked client frame, or throws a FrameError that says what was wrong. */
export function decode(data: Uint8Array | string, binary: boolean): ClientFrame {
  let raw: unknown;
  if (binary) {
    try {
      raw = packr.unpack(data as Uint8Array);
    } catch {
      throw new FrameError("bad_frame", "a binary frame must be one msgpack map, e.g. {type: 'ping'}");
    }
  } else {
    try {
      raw = JSON.parse(String(data));
    } catch {
      throw new FrameError("bad_frame", 'a text frame must be one JSON object, e.g. {"type":"ping"}; this is not JSON');
    }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new FrameError("bad_frame", 'a frame is one object with a string field `type`, e.g. {"type":"ping"}');
  }
  const type = Object.hasOwn(raw, "type") ? (raw as { type?: unknown }).type : undefined;
  if (typeof type !== "string") {
    throw new FrameError("bad_frame", `a frame needs a string field \`type\`, one of ${FRAME_TYPES.join(", ")}`);
  }
  const schema = schemas.get(type);
  if (!schema) {
    throw new FrameError(
      "unknown_type",
      `no frame type \`${type.slice(0, 64)}\`; types: ${FRAME_TYPES.join(", ")}`,
    );
  }
  return check(schema, raw, `\`${type}\` frame`) as ClientFrame;
}

/** `raw` as `schema` reads it, or a FrameError that names `what` and says what was wrong. */
function check<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  // What the replay store could not keep exactly (a NUL, an unpaired surrogate, NaN from msgpack) is refused here.
  const unfit = unstorable(raw);
  if (unfit) throw new FrameError("bad_frame", `bad ${what}: ${unfit}; strings must be valid Unicode text without NUL`);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? `\`${issue.path.join(".")}\`: ` : "";
    throw new FrameError("bad_frame", `bad ${what}: ${where}${issue.message}`);
  }
  return parsed.data;
}

const ROOM_ACT = oneAction(ACT_FIELDS);
export type RoomAct = z.infer<typeof ACT_FIELDS>;

/** A match room's `act` message, checked as the bot door checks an `act` frame (less `type` and `match`). */
export function decodeRoomAct(raw: unknown): RoomAct {
  return check(ROOM_ACT, raw, "`act` message");
}
