/**
 * The Ludus bot SDK: connect to the bot gateway with a token, then `play` queued matches or
 * `create`/`join` private ones with a policy. It speaks only the protocol (protocol/frames.ts) and
 * runs under Deno and Node.
 *
 * ```ts
 * const bot = await Bot.connect({ url: "ws://127.0.0.1:2567/bot", token });
 * const ends = await bot.play({ game: "kuhn-poker", policy: (_obs, legal) => randomAction(legal), matches: 10 });
 * await bot.close();
 * ```
 */
export {
  Answer,
  Bot,
  type CreateOptions,
  type PlayOptions,
  type Policy,
  type PrivateMatch,
  Withdrawal,
} from "./bot.ts";
export type { FrameFormat } from "./codec.ts";
export { Connection, type ConnectionEvents, type ConnectOptions, type ReconnectOptions } from "./connection.ts";
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
