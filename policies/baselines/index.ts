import { type Strategy, type StrategyDef, StrategyError } from "../strategy.ts";
import { dealOrNoDealStrategies } from "./deal-or-no-deal.ts";
import { donorGameStrategies } from "./donor-game.ts";
import { holdemStrategies } from "./holdem.ts";
import { ipdStrategies } from "./ipd.ts";
import { kuhnPokerStrategies } from "./kuhn-poker.ts";
import { leducPokerStrategies } from "./leduc-poker.ts";
import { random } from "./random.ts";
import { simpleNegotiationStrategies } from "./simple-negotiation.ts";
import { ticTacToeStrategies } from "./tic-tac-toe.ts";
import { trustAndSplitStrategies } from "./trust-and-split.ts";

/** Every built-in strategy, for every game. */
export const strategies: readonly StrategyDef[] = [
  random,
  ...ipdStrategies,
  ...donorGameStrategies,
  ...trustAndSplitStrategies,
  ...kuhnPokerStrategies,
  ...leducPokerStrategies,
  ...holdemStrategies,
  ...dealOrNoDealStrategies,
  ...simpleNegotiationStrategies,
  ...ticTacToeStrategies,
];

/** The strategies that can sit at `gameId`'s table. */
export function strategiesFor(gameId: string): StrategyDef[] {
  return strategies.filter((s) => s.game === "*" || s.game === gameId);
}

/** `name` or `name:arg` → a strategy for `gameId`, or a StrategyError naming what exists. */
export function createStrategy(gameId: string, spec: string): Strategy {
  const colon = spec.indexOf(":");
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const arg = colon < 0 ? undefined : spec.slice(colon + 1);
  const available = strategiesFor(gameId);
  const def = available.find((s) => s.name === name);
  if (!def) {
    const names = available.map((s) => (s.arg ? `${s.name}[:${s.arg.name}]` : s.name)).join(", ");
    throw new StrategyError(`unknown strategy \`${name}\` for ${gameId} (strategies: ${names})`);
  }
  if (arg !== undefined && !def.arg) throw new StrategyError(`strategy \`${name}\` takes no argument`);
  return def.create(arg ?? def.arg?.default);
}
