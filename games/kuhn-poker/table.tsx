/// <reference lib="dom" />
import type { KuhnActionType, KuhnHandSummary, KuhnObservation } from "./game.ts";
import { cardText, does, foldedHand, matchOver, OneCardTable, Pot, sentence } from "../../web/src/table/cards.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * Kuhn poker: one card each from J, Q, K, an ante of one, and at most one bet of one chip. A hand ends the
 * moment its betting does, so the felt shows the hand in play (or, once the match is over, the last hand as
 * it was revealed) and the list below shows every finished hand.
 */

const VERBS: Readonly<Record<KuhnActionType, [string, string]>> = {
  check: ["check", "checks"],
  bet: ["bet 1", "bets 1"],
  call: ["call 1", "calls 1"],
  fold: ["fold", "folds"],
};

function actionWords(
  actions: readonly KuhnActionType[],
  first: number,
  viewer: number | null,
  names: readonly string[],
) {
  return actions.map((a, k) => does(first ^ (k & 1), viewer, names, ...VERBS[a]));
}

/** The seat that folded in a hand without a showdown: the last to act. */
function folder(h: KuhnHandSummary): number {
  return h.first ^ ((h.actions.length - 1) & 1);
}

/** How a finished hand ended, with what its winner took: "Bob wins 2 at showdown (K beats J)". */
function outcome(h: KuhnHandSummary, viewer: number | null, names: readonly string[]): string {
  const gain = h.rewards[h.winner];
  if (!h.showdown) {
    return foldedHand(folder(h), h.winner, gain, viewer, names);
  }
  const [a, b] = [h.cards[h.winner], h.cards[1 - h.winner]];
  return `${does(h.winner, viewer, names, "win", "wins")} ${gain} at showdown${
    a && b ? ` (${cardText(a)} beats ${cardText(b)})` : ""
  }`;
}

function Board({ obs, seat, names }: TableProps<KuhnObservation>) {
  const over = obs.phase === "over";
  const last = obs.history.at(-1);
  const status = over
    ? matchOver(obs.hands)
    : `${obs.hands > 1 ? `Hand ${obs.hand} of ${obs.hands} · ` : ""}${
      obs.toAct === null ? "" : obs.toAct === seat ? "Your move" : `${names[obs.toAct]} to act`
    }`;
  const rounds = over && last
    ? [{ title: `Hand ${obs.history.length}`, words: actionWords(last.actions, last.first, seat, names) }]
    : [{ words: actionWords(obs.actions, obs.first ?? 0, seat, names) }];
  return (
    <OneCardTable
      kind="kuhn"
      obs={obs}
      seat={seat}
      names={names}
      game={{
        folder,
        firstTitle: "acts first this hand",
        outcome: (h) => outcome(h, seat, names),
        betting: (h) => sentence(actionWords(h.actions, h.first, seat, names)),
      }}
      status={status}
      rounds={rounds}
      pot={<Pot amount={obs.pot} note={obs.fixedPot ? "fixed at the two antes" : undefined} />}
      hint={<TurnHint obs={obs} seat={seat} names={names} />}
    />
  );
}

/** What the seat to act may do, in words (the action bar has the buttons). */
function TurnHint({ obs, seat, names }: { obs: KuhnObservation; seat: number | null; names: readonly string[] }) {
  if (obs.toAct === null) return null;
  const facing = obs.actions.at(-1) === "bet";
  const options = facing ? "call 1 or fold" : "check or bet 1";
  return (
    <p class="turn-hint">
      {obs.toAct === seat ? `Your move: ${options}.` : `${names[obs.toAct]} may ${options}.`}
    </p>
  );
}

export const table: GameTable = {
  Board,
  labels: { check: "Check", bet: "Bet 1", call: "Call 1", fold: "Fold" },
};
