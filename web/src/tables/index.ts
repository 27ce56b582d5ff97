import { dealOrNoDealTable } from "./deal-or-no-deal.tsx";
import { donorGameTable } from "./donor-game.tsx";
import { holdemTable } from "./holdem.tsx";
import { ipdTable } from "./ipd.tsx";
import { kuhnPokerTable } from "./kuhn-poker.tsx";
import { leducPokerTable } from "./leduc-poker.tsx";
import { simpleNegotiationTable } from "./simple-negotiation.tsx";
import { ticTacToeTable } from "./tic-tac-toe.tsx";
import { trustAndSplitTable } from "./trust-and-split.tsx";
import type { GameTable } from "./types.ts";

/** Each registered game's table, by game id (test/web checks that every game in games/registry.ts has one). */
export const TABLES: Readonly<Record<string, GameTable>> = {
  ipd: ipdTable,
  "donor-game": donorGameTable,
  "trust-and-split": trustAndSplitTable,
  "kuhn-poker": kuhnPokerTable,
  "leduc-poker": leducPokerTable,
  holdem: holdemTable,
  "deal-or-no-deal": dealOrNoDealTable,
  "simple-negotiation": simpleNegotiationTable,
  "tic-tac-toe": ticTacToeTable,
};
