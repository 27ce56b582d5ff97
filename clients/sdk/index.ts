/**
 * The Ludus bot SDK: connect to the bot gateway with a token, then `play` queued matches (self-play
 * included) or private ones against built-ins or itself, or `create`/`join` private matches, with a
 * policy. It speaks only the protocol (protocol/frames.ts) and imports nothing outside this repository's
 * `clients/sdk` and `protocol/`, so a script anywhere can import it by path or URL (see README.md).
 *
 * ```ts
 * const bot = await Bot.connect({ url: "ws://127.0.0.1:2567/bot", token });
 * const ends = await bot.play({ game: "kuhn-poker", policy: (_obs, legal) => randomAction(legal), matches: 10 });
 * await bot.close();
 * ```
 */
export {
  ActionId,
  Answer,
  Bot,
  checkPlayOptions,
  chooseSeat,
  type CreateOptions,
  type PlayOptions,
  type Policy,
  type PrivateMatch,
  type SeatChoice,
  Withdrawal,
} from "./bot.ts";
export { gameTable, type Table } from "./catalog.ts";
export type { FrameFormat, MsgpackCodec } from "./codec.ts";
export {
  CLOSE_RESTART,
  Connection,
  type ConnectionEvents,
  type ConnectOptions,
  type ReconnectOptions,
  type WebSocketClass,
} from "./connection.ts";
export { type ClientErrorCode, LudusError } from "./errors.ts";
export type {
  ActionForm,
  AmountForm,
  ExchangeForm,
  FixedForm,
  SplitForm,
  TextForm,
} from "../../protocol/action-forms.ts";
export { randomAction, type RandomSource } from "./random.ts";
export type * from "../../protocol/frames.ts";
