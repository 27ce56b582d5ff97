import type { ErrorCode, ErrorFrame } from "../../protocol/frames.ts";

/** Failures the SDK itself detects, beside the server's error codes. */
export type ClientErrorCode =
  /** The socket could not be opened, or closed before the server said `welcome`. */
  | "connection_failed"
  /** The socket dropped and could not be reopened (or the connection was closed by its owner). */
  | "connection_closed"
  /** The server did not answer in time. */
  | "timeout";

/** An error from the server (its frame's code and sentence) or from the SDK. */
export class LudusError extends Error {
  readonly code: ErrorCode | ClientErrorCode;
  /** The match and turn the error is about, when it is about one. */
  readonly match?: string;
  readonly seq?: number;
  /** For illegal actions: how many more are forgiven this decision. */
  readonly retriesLeft?: number;

  constructor(code: ErrorCode | ClientErrorCode, message: string, match?: string, seq?: number, retriesLeft?: number) {
    super(message);
    this.name = "LudusError";
    this.code = code;
    this.match = match;
    this.seq = seq;
    this.retriesLeft = retriesLeft;
  }

  static fromFrame(frame: ErrorFrame): LudusError {
    return new LudusError(frame.code, frame.message, frame.match, frame.seq, frame.retriesLeft);
  }
}
