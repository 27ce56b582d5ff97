/**
 * The process one policy network runs in (policies/onnx/hosted.ts starts it): onnxruntime-node runs a session
 * synchronously on its caller's thread and cannot be interrupted, so a model that never ends, or allocates
 * without bound, must run where the server can kill it (SIGKILL) and the kernel can bound it (RLIMIT_DATA).
 *
 * Frames both ways are a u32 (little-endian) length, then a type byte, then the payload. In: LOAD (JSON: the
 * game, config, device and threads), MODEL (the ONNX bytes), RUN (a u32 count, then the float32 rows). Out: OK
 * (JSON), LOGITS (float32), FAILED (JSON: a message).
 */
import { getGame } from "../../games/registry.ts";
import { refuseExternalData } from "./inspect.ts";
import { onnxruntime, PolicyNetwork } from "./network.ts";

export const FRAME = { load: 1, model: 2, run: 3, ok: 10, logits: 11, failed: 12 } as const;

/** One frame as bytes: its length, type and payload. */
export function frame(type: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.byteLength);
  new DataView(out.buffer).setUint32(0, payload.byteLength + 1, true);
  out[4] = type;
  out.set(payload, 5);
  return out;
}

/** Splits a byte stream into frames: push chunks in, get whole frames back. */
export class FrameReader {
  private buffer = new Uint8Array(64 * 1024);
  private length = 0;

  push(chunk: Uint8Array): { type: number; payload: Uint8Array }[] {
    if (this.length + chunk.byteLength > this.buffer.byteLength) {
      // Grown to the frame's own size once its length is known, so a 100 MB model is not held twice over.
      const want = this.length >= 4 ? 4 + new DataView(this.buffer.buffer).getUint32(0, true) : 0;
      const grown = new Uint8Array(Math.max(want, this.buffer.byteLength * 2, this.length + chunk.byteLength));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(chunk, this.length);
    this.length += chunk.byteLength;
    const frames: { type: number; payload: Uint8Array }[] = [];
    let at = 0;
    while (this.length - at >= 4) {
      const size = new DataView(this.buffer.buffer, at).getUint32(0, true);
      if (this.length - at < 4 + size) break;
      // A frame that is the whole buffer is handed out as it is (no copy), and the reader starts a new buffer.
      const whole = at === 0 && 4 + size === this.length && size > 1 << 20;
      const payload = whole ? this.buffer.subarray(5, 4 + size) : this.buffer.slice(at + 5, at + 4 + size);
      frames.push({ type: this.buffer[at + 4], payload });
      if (whole) {
        this.buffer = new Uint8Array(64 * 1024);
        this.length = 0;
        return frames;
      }
      at += 4 + size;
    }
    this.buffer.copyWithin(0, at, this.length);
    this.length -= at;
    return frames;
  }
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

async function main(): Promise<void> {
  // Loaded while the process waits as a spare, so its model does not wait for onnxruntime too.
  onnxruntime().catch(() => {}); // a failure is reported by the load that needs it
  const writer = Deno.stdout.writable.getWriter();
  const reader = new FrameReader();
  let header:
    | { game: string; gameVersion?: number; config: unknown; device?: "cpu" | "cuda"; threads?: number }
    | undefined;
  let network: PolicyNetwork | undefined;
  const send = (type: number, payload: Uint8Array) => writer.write(frame(type, payload));
  for await (const chunk of Deno.stdin.readable) {
    for (const { type, payload } of reader.push(chunk)) {
      try {
        if (type === FRAME.load) header = JSON.parse(new TextDecoder().decode(payload));
        else if (type === FRAME.model) {
          refuseExternalData(payload);
          const game = getGame(header!.game, header!.gameVersion);
          network = await PolicyNetwork.load(payload, game, header!.config, header!);
          await send(FRAME.ok, json({ size: network.size, actions: network.actions }));
        } else if (type === FRAME.run) {
          const count = new DataView(payload.buffer, payload.byteOffset).getUint32(0, true);
          const rows = new Float32Array(payload.slice(4).buffer);
          const logits = await network!.logits(rows, count);
          await send(FRAME.logits, new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength));
        }
      } catch (error) {
        await send(FRAME.failed, json({ message: (error as Error).message ?? String(error) }));
      }
    }
  }
  // The server closed its end: it is done with this network.
  await network?.release();
}

if (import.meta.main) await main();
