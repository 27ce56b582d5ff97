import { Buffer } from "node:buffer";
import { Packr } from "msgpackr";
import type { ClientFrame, ServerFrame } from "../../protocol/frames.ts";

/** How frames travel: JSON in text frames, or msgpack in binary frames (chosen by the `auth` frame's kind). */
export type FrameFormat = "json" | "msgpack";

// Plain msgpack maps, not msgpackr's record extension, so any msgpack library on the other side can read them.
const packr = new Packr({ useRecords: false });

export function encodeFrame(frame: ClientFrame, format: FrameFormat): string | Uint8Array {
  return format === "msgpack" ? packr.pack(frame) : JSON.stringify(frame);
}

/** A server frame from a websocket message, or undefined when it is not an object with a string `type`. */
export function decodeFrame(data: Buffer | ArrayBuffer | Buffer[], binary: boolean): ServerFrame | undefined {
  const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? Buffer.from(data) : data;
  let frame: unknown;
  try {
    frame = binary ? packr.unpack(bytes) : JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  const typed = typeof frame === "object" && frame !== null && typeof (frame as { type?: unknown }).type === "string";
  return typed ? frame as ServerFrame : undefined;
}
