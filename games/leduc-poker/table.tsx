/// <reference lib="dom" />
import type { LeducHandSummary, LeducObservation } from "./game.ts";
import {
  CardRow,
  cardText,
  does,
  foldedHand,
  matchOver,
  OneCardTable,
  Pot,
  readCard,
  sentence,
} from "../../web/src/table/cards.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * Leduc hold'em: one private card each from two suits of J, Q, K, a betting round, a public card, a second
 * round; raises are fixed (2, then 4) with at most two a round. A hand ends the moment its betting does, so
 * the felt shows the hand in play (or, once the match is over, the last hand as revealed).
 */

/** Leduc's fixed raise in each round; finished hands do not carry it, and the rules never change it. */
const RAISE_SIZES = [2, 4];
const RANK_WORDS: Readonly<Record<string, [string, string]>> = {
  J: ["jack", "jacks"],
  Q: ["queen", "queens"],
  K: ["king", "kings"],
};

/** Each round's betting letters (c check or call, r bet or raise, f fold) in words, with the chips each puts in. */
function bettingRounds(
  betting: string,
  first: number,
  viewer: number | null,
  names: readonly string[],
): { title: string; words: string[] }[] {
  const put = [1, 1]; // the antes
  return betting.split("/").map((letters, round) => {
    let stake = Math.max(put[0], put[1]);
    let raised = false;
    const words = [...letters].map((letter, k) => {
      const s = first ^ (k & 1);
      if (letter === "f") return does(s, viewer, names, "fold", "folds");
      if (letter === "c") {
        const owed = stake - put[s];
        put[s] = stake;
        return owed > 0
          ? does(s, viewer, names, `call ${owed}`, `calls ${owed}`)
          : does(s, viewer, names, "check", "checks");
      }
      const size = RAISE_SIZES[round];
      stake += size;
      put[s] = stake;
      const verb = raised ? ["raise", "raises"] : ["bet", "bets"];
      raised = true;
      return does(s, viewer, names, `${verb[0]} ${size}`, `${verb[1]} ${size}`);
    });
    return { title: `Round ${round + 1}`, words };
  });
}

/** The seat that folded: the last to act in the last round. */
function folder(h: LeducHandSummary): number {
  const rounds = h.betting.split("/");
  return h.first ^ ((rounds[rounds.length - 1].length - 1) & 1);
}

/** A two-card Leduc hand in words: a pair with the public card, else the rank. */
function handWords(card: string, board: string | null): string {
  const rank = readCard(card).rank;
  const [one, many] = RANK_WORDS[rank] ?? [rank, rank];
  return board && readCard(board).rank === rank ? `a pair of ${many}` : `${one} high`;
}

/** How a finished hand ended, with what its winner took. */
function outcome(h: LeducHandSummary, viewer: number | null, names: readonly string[]): string {
  if (!h.showdown) {
    const w = h.winner ?? 1 - folder(h);
    return foldedHand(folder(h), w, h.rewards[w], viewer, names);
  }
  if (h.winner === null) {
    const card = h.cards[0];
    return `Split pot at showdown${card ? ` (both ${handWords(card, h.publicCard)})` : ""}`;
  }
  const [a, b] = [h.cards[h.winner], h.cards[1 - h.winner]];
  return `${does(h.winner, viewer, names, "win", "wins")} ${h.rewards[h.winner]} at showdown${
    a && b ? ` with ${handWords(a, h.publicCard)} (${cardText(a)} vs ${cardText(b)})` : ""
  }`;
}

function Board({ obs, seat, names }: TableProps<LeducObservation>) {
  const over = obs.phase === "over";
  const last = obs.history.at(-1);
  const publicCard = over ? last?.publicCard ?? null : obs.publicCard;
  const status = over
    ? matchOver(obs.hands)
    : `${obs.hands > 1 ? `Hand ${obs.hand} of ${obs.hands} · ` : ""}Round ${obs.round} of 2${
      obs.toAct === null ? "" : obs.toAct === seat ? " · Your move" : ` · ${names[obs.toAct]} to act`
    }`;
  const rounds = over && last
    ? bettingRounds(last.betting, last.first, seat, names)
    : bettingRounds(obs.betting, obs.first ?? 0, seat, names);
  return (
    <OneCardTable
      kind="leduc"
      obs={obs}
      seat={seat}
      names={names}
      game={{
        folder,
        firstTitle: "acts first in both rounds of this hand",
        outcome: (h) => outcome(h, seat, names),
        betting: (h) =>
          bettingRounds(h.betting, h.first, seat, names)
            .filter((r) => r.words.length > 0)
            .map((r) => `${r.title}: ${sentence(r.words)}`)
            .join(" · "),
        board: (h) => (h.publicCard ? [h.publicCard] : []),
      }}
      status={status}
      rounds={rounds}
      board={
        <div class="board">
          <CardRow cards={publicCard ? [publicCard] : []} slots={1} label="Public card" />
          <span class="board-caption">
            {publicCard
              ? "Public card"
              : over
              ? "No public card: the hand ended in round 1"
              : "Public card comes after round 1"}
          </span>
        </div>
      }
      pot={
        <Pot
          amount={obs.pot}
          note={`${obs.raises} of ${obs.maxRaises} raises this round · raises are ${obs.raiseSize}`}
        />
      }
      hint={<TurnHint obs={obs} seat={seat} names={names} />}
    />
  );
}

/** What the seat to act may do, in words: the buttons say "Check / call" and "Bet / raise", this says which. */
function TurnHint({ obs, seat, names }: { obs: LeducObservation; seat: number | null; names: readonly string[] }) {
  if (obs.toAct === null) return null;
  const canRaise = obs.raises < obs.maxRaises;
  const options = obs.owed > 0
    ? `${obs.owed} to call: fold, call ${obs.owed}${
      canRaise ? ` or raise ${obs.raiseSize}` : " (no raises left this round)"
    }`
    : `check${canRaise ? ` or bet ${obs.raiseSize}` : ""}`;
  return (
    <p class="turn-hint">
      {obs.toAct === seat ? `Your move — ${options}.` : `${names[obs.toAct]} to act — ${options}.`}
    </p>
  );
}

export const table: GameTable = {
  Board,
  // Leduc's `call` is also the check when nothing is owed, and `raise` also the opening bet (OpenSpiel's actions).
  labels: { fold: "Fold", call: "Check / call", raise: "Bet / raise" },
};
