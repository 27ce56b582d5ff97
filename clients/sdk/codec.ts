import type { ClientFrame, ServerFrame } from "../../protocol/frames.ts";

/** How frames travel: JSON in text frames, or msgpack in binary frames (chosen by the `auth` frame's kind). */
export type FrameFormat = "json" | "msgpack";

/**
 * A msgpack implementation: msgpackr's `Packr` fits as it is (`new Packr({ useRecords: false })`, plain maps so
 * the server can read them). The SDK brings none of its own, so that it imports nothing outside this repository's
 * `clients/sdk` and `protocol/` and runs anywhere without an import map; a bot that wants msgpack frames passes one.
 */
export interface MsgpackCodec {
  pack(value: unknown): Uint8Array;
  unpack(bytes: Uint8Array): unknown;
}

export function encodeFrame(frame: ClientFrame, msgpack?: MsgpackCodec): string | Uint8Array {
  return msgpack ? msgpack.pack(frame) : JSON.stringify(frame);
}

/**
 * A server frame from a websocket message (a string, or the bytes of a binary one), or undefined when it is not
 * an object with a string `type`.
 */
export function decodeFrame(data: unknown, msgpack?: MsgpackCodec): ServerFrame | undefined {
  let frame: unknown;
  try {
    if (typeof data === "string") frame = JSON.parse(data);
    else if (msgpack && data instanceof ArrayBuffer) frame = msgpack.unpack(new Uint8Array(data));
    else if (msgpack && ArrayBuffer.isView(data)) {
      frame = msgpack.unpack(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    } else return undefined;
  } catch {
    return undefined;
  }
  if (typeof frame !== "object" || frame === null || typeof (frame as { type?: unknown }).type !== "string") {
    return undefined;
  }
  // The epoch-millisecond fields (`deadline`, `fillAt`, `time`) travel as msgpack int64, which many decoders
  // (msgpackr by default) read as BigInt: a frame's numbers are numbers, whatever the decoder.
  const fields = frame as Record<string, unknown>;
  for (const key in fields) if (typeof fields[key] === "bigint") fields[key] = Number(fields[key]);
  return frame as ServerFrame;
}
