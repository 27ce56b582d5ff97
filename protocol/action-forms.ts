/**
 * The legal-action forms a `turn` frame lists (docs/protocol.md, "Actions"), as the wire carries them:
 * the games' own definitions (games/core/action.ts, pure and import-free), so the server, every client
 * and the wire share one shape, and the action a seat plays when nobody chooses.
 */
export {
  type ActionForm,
  type AmountForm,
  defaultAction,
  type ExchangeForm,
  type FixedForm,
  type SplitForm,
  type TextForm,
} from "../games/core/action.ts";
