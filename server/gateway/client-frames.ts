import { Packr } from "msgpackr";
import { z } from "zod";
import type { ClientFrame, ErrorCode, ServerFrame } from "../../protocol/frames.ts";

/** Reading and writing gateway frames: JSON text or msgpack binary, checked against the protocol's shapes. */

export type Format = "json" | "msgpack";

// Plain msgpack maps and arrays (no msgpackr records), so every language's msgpack reads them.
const packr = new Packr({ useRecords: false, variableMapSize: true });

export function encode(frame: ServerFrame, format: Format): string | Uint8Array {
  return format === "json" ? JSON.stringify(frame) : packr.pack(frame);
}

const id = z.string().min(1).max(128);

const schemas = {
  auth: z.strictObject({ type: z.literal("auth"), token: z.string().max(256), text: z.boolean().optional() }),
  queue: z.strictObject({ type: z.literal("queue"), game: id, variant: id.optional() }),
  cancel: z.strictObject({ type: z.literal("cancel"), ticket: id }),
  create: z.strictObject({
    type: z.literal("create"),
    game: id,
    variant: id.optional(),
    config: z.record(z.string(), z.unknown()).optional(),
    seat: z.number().int().min(0).optional(),
    opponents: z.record(z.string().regex(/^\d+$/, "opponents are keyed by seat number"), z.string().max(128))
      .optional(),
    seed: z.string().min(1).max(128).optional(),
  }),
  join: z.strictObject({ type: z.literal("join"), match: id }),
  act: z.strictObject({
    type: z.literal("act"),
    match: id,
    seq: z.number().int().min(1),
    action: z.unknown().refine((a) => a !== undefined, "`action` is required: a JSON action or its text"),
    meta: z.record(z.string(), z.unknown()).optional(),
  }),
  withdraw: z.strictObject({ type: z.literal("withdraw"), match: id, reason: z.string().min(1).max(2000) }),
  resume: z.strictObject({ type: z.literal("resume"), match: id }),
  ping: z.strictObject({ type: z.literal("ping"), id: z.union([z.string().max(128), z.number()]).optional() }),
} as const;

export const FRAME_TYPES = Object.keys(schemas) as (keyof typeof schemas)[];

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
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== "string") {
    throw new FrameError("bad_frame", `a frame needs a string field \`type\`, one of ${FRAME_TYPES.join(", ")}`);
  }
  const schema = schemas[type as keyof typeof schemas];
  if (!schema) {
    throw new FrameError("unknown_type", `no frame type \`${type.slice(0, 64)}\`; types: ${FRAME_TYPES.join(", ")}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? `\`${issue.path.join(".")}\`: ` : "";
    throw new FrameError("bad_frame", `bad \`${type}\` frame: ${where}${issue.message}`);
  }
  return parsed.data as ClientFrame;
}
