/// <reference lib="dom" />
import type { HoldemActionRecord, HoldemHandSummary, HoldemObservation } from "./game.ts";
import {
  BettingWords,
  CardRow,
  chips,
  does,
  Felt,
  foldedHand,
  HandHistory,
  type HandRow,
  LastHand,
  Marker,
  matchOver,
  Pot,
  runningTotals,
  Seat,
  seatOrder,
  signed,
  who,
} from "../../web/src/table/cards.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * Heads-up hold'em (ACPC rules, any structure: no-limit, limit, the small test game): hole cards, a board
 * dealt over the rounds, blinds, stacks, and raises written as raise-to totals for the hand. A finished hand
 * gives way to the next at once, so the felt shows the hand in play (the last hand, complete, once the
 * match is over) and the list below the finished hands the observation keeps.
 */

type Names = readonly string[];

/** A round's name as the game gives it: preflop, flop, turn, river for hold'em's 0-3-1-1 board, else "round N". */
function roundName(boardCards: readonly number[], round: number): string {
  return boardCards.join(" ") === "0 3 1 1" ? ["Preflop", "Flop", "Turn", "River"][round] : `Round ${round + 1}`;
}

/** The round a board of `shown` cards belongs to (the first round whose deal brings it to that size). */
function roundOfBoard(boardCards: readonly number[], shown: number): number {
  let dealt = 0;
  for (let r = 0; r < boardCards.length; r++) {
    dealt += boardCards[r];
    if (dealt >= shown) return r;
  }
  return boardCards.length - 1;
}

/** What `s` has put in once all its chips are in: its stack this hand (null: no stack limit). */
function allInTo(obs: HoldemObservation, s: number): number | null {
  const stack = obs.stacks[s];
  return stack === null ? null : stack + obs.committed[s];
}

/** This hand's actions in words, round by round, with the blinds first and each call's and bet's chips. */
function bettingRounds(obs: HoldemObservation, viewer: number | null, names: Names) {
  const put = [...obs.blinds];
  const allIn = (s: number, to: number) => (allInTo(obs, s) === to ? " (all-in)" : "");
  const rounds: { title: string; words: string[] }[] = [];
  const blinds = [0, 1].filter((s) => obs.blinds[s] > 0).sort((a, b) => obs.blinds[a] - obs.blinds[b]);
  for (let r = 0; r <= obs.round; r++) {
    const here: HoldemActionRecord[] = obs.actions.filter((a) => a.round === r);
    // Preflop the blinds are the bet to raise; later rounds open with a bet.
    let raised = r === 0 && blinds.length > 0;
    const words = r === 0
      ? blinds.map((s) => does(s, viewer, names, `post ${chips(obs.blinds[s])}`, `posts ${chips(obs.blinds[s])}`))
      : [];
    for (const a of here) {
      const s = a.seat;
      if (a.type === "fold") words.push(does(s, viewer, names, "fold", "folds"));
      else if (a.type === "check") words.push(does(s, viewer, names, "check", "checks"));
      else if (a.type === "call") {
        const n = chips(a.to - put[s]);
        words.push(does(s, viewer, names, `call ${n}`, `calls ${n}`) + allIn(s, a.to));
      } else if (raised) {
        words.push(does(s, viewer, names, `raise to ${chips(a.to)}`, `raises to ${chips(a.to)}`) + allIn(s, a.to));
      } else {
        const n = chips(a.to - put[s]);
        words.push(does(s, viewer, names, `bet ${n}`, `bets ${n}`) + allIn(s, a.to));
      }
      if (a.type === "raise") raised = true;
      put[s] = a.to;
    }
    rounds.push({ title: roundName(obs.structure.boardCards, r), words });
  }
  return rounds;
}

/** The seat that won a finished hand, or null for a split pot. */
function winnerOf(h: HoldemHandSummary): number | null {
  return h.winnings[0] > h.winnings[1] ? 0 : h.winnings[1] > h.winnings[0] ? 1 : null;
}

/** How a finished hand ended: who folded where, or who won the showdown (with both hands, when `full`). */
function outcome(
  h: HoldemHandSummary,
  boardCards: readonly number[],
  viewer: number | null,
  names: Names,
  full = true,
): string {
  const w = winnerOf(h);
  if (h.folded !== null) {
    const taker = 1 - h.folded;
    const round = roundOfBoard(boardCards, h.board.length);
    const name = roundName(boardCards, round).toLowerCase();
    const where = name === "preflop" ? name : name.startsWith("round") ? `in ${name}` : `on the ${name}`;
    return foldedHand(h.folded, taker, chips(h.winnings[taker]), viewer, names, where);
  }
  const hands = full ? h.bestHands : null;
  if (w === null) return `Split pot at showdown${hands ? `: both ${hands[0]}` : ""}`;
  return `${does(w, viewer, names, "win", "wins")} ${chips(h.winnings[w])} at showdown${
    hands ? `: ${hands[w]} beats ${hands[1 - w]}` : ""
  }`;
}

/** The dealer button and the blinds: in heads-up play the button posts the small blind. */
function markers(obs: HoldemObservation, s: number) {
  const [b0, b1] = obs.blinds;
  const mine = obs.blinds[s];
  if (mine === 0) return null;
  if (b0 === b1) return <Marker kind="blind" title={`posts a blind of ${chips(mine)}`}>Blind {chips(mine)}</Marker>;
  const small = mine < Math.max(b0, b1);
  return (
    <>
      {small && <Marker kind="dealer" title="dealer button (posts the small blind)">D</Marker>}
      <Marker kind="blind" title={`${small ? "small" : "big"} blind of ${chips(mine)}`}>
        {small ? "SB" : "BB"} {chips(mine)}
      </Marker>
    </>
  );
}

function Board({ obs, seat, names }: TableProps<HoldemObservation>) {
  const over = obs.phase === "over";
  const { structure } = obs;
  const [bottom, top] = seatOrder(seat);
  const multi = obs.hands > 1;
  const boardSize = structure.boardCards.reduce((a, b) => a + b, 0);
  // Once the match is over the hand on the felt is its last, and the newest summary is that hand's.
  const ended = over ? obs.recentHands.at(-1) : undefined;
  const foldedSeat = obs.actions.find((a) => a.type === "fold")?.seat;

  const cardsOf = (s: number): (string | null)[] =>
    obs.shownCards[s] ?? (s === seat && obs.holeCards ? obs.holeCards : Array(structure.holeCards).fill(null));

  const seatView = (s: number, place: "top" | "bottom") => (
    <Seat
      seat={s}
      names={names}
      viewer={seat}
      place={place}
      cards={<CardRow cards={cardsOf(s)} size="lg" label={`${who(s, seat, names)}'s hole cards`} />}
      toAct={obs.toAct === s}
      committed={obs.committed[s]}
      stack={obs.stacks[s]}
      total={multi || over ? obs.totals[s] : undefined}
      markers={markers(obs, s)}
      note={foldedSeat === s
        ? "folded"
        : ended
        ? [ended.winnings[s] > 0 ? `won ${signed(ended.winnings[s])}` : "", ended.bestHands?.[s] ?? ""]
          .filter(Boolean).join(" · ") || undefined
        : undefined}
      state={foldedSeat === s ? "folded" : ended && winnerOf(ended) === s ? "winner" : undefined}
    />
  );

  const round = roundName(structure.boardCards, obs.round);
  const status = over
    ? matchOver(obs.hand)
    : `${multi ? `Hand ${obs.hand} of ${obs.hands} · ` : ""}${round}${
      obs.toAct === null ? "" : obs.toAct === seat ? " · Your move" : ` · ${names[obs.toAct]} to act`
    }`;
  const kind = obs.betting === "no-limit" ? "No-limit" : "Limit";
  const blinds = obs.blinds.some((b) => b > 0)
    ? ` · blinds ${[...obs.blinds].sort((a, b) => a - b).map(chips).join("/")}`
    : "";
  const raiseSize = obs.betting === "limit" ? structure.raiseSizes[obs.round] : undefined;

  const recent = obs.recentHands;
  const earlier = (over ? obs.hand : obs.hand - 1) - recent.length;
  const running = runningTotals(recent.map((h) => h.winnings), obs.totals);
  const hidden = Array(structure.holeCards).fill(null);
  const rows: HandRow[] = recent.map((h, i) => ({
    hand: h.hand,
    cards: [h.shownCards[0] ?? hidden, h.shownCards[1] ?? hidden],
    board: h.board,
    outcome: outcome(h, structure.boardCards, seat, names),
    won: h.winnings,
    totals: running[i],
  }));
  const previous = !over ? recent.at(-1) : undefined;

  return (
    <div class="poker holdem">
      <div class="status-line">{status}</div>
      {previous && <LastHand hand={previous.hand}>{outcome(previous, structure.boardCards, seat, names)}</LastHand>}
      <Felt
        top={seatView(top, "top")}
        center={
          <>
            {boardSize > 0 && (!over || obs.board.length > 0) && (
              <div class="board">
                <CardRow cards={obs.board} slots={over ? 0 : boardSize} label="Board" />
              </div>
            )}
            {ended ? <div class="felt-result">{outcome(ended, structure.boardCards, seat, names, false)}</div> : (
              <Pot
                amount={obs.pot}
                note={`${kind}${blinds}${raiseSize ? ` · bets of ${chips(raiseSize)} this round` : ""}`}
              />
            )}
            <BettingWords rounds={bettingRounds(obs, seat, names)} />
            {!over && <TurnHint obs={obs} seat={seat} names={names} />}
          </>
        }
        bottom={seatView(bottom, "bottom")}
      />
      <HandHistory rows={rows} names={names} viewer={seat} earlier={earlier} />
    </div>
  );
}

/** What the seat to act may do, in words (the action bar has the buttons and the raise slider). */
function TurnHint({ obs, seat, names }: { obs: HoldemObservation; seat: number | null; names: Names }) {
  if (obs.toAct === null || obs.toCall === null) return null;
  const options = [obs.toCall > 0 ? `fold, call ${chips(obs.toCall)}` : "check"];
  if (obs.minRaiseTo !== null && obs.maxRaiseTo !== null) {
    options.push(
      obs.minRaiseTo === obs.maxRaiseTo
        ? `raise to ${chips(obs.maxRaiseTo)}${obs.maxRaiseTo === allInTo(obs, obs.toAct) ? " (all-in)" : ""}`
        : `raise to ${chips(obs.minRaiseTo)}–${chips(obs.maxRaiseTo)}`,
    );
  }
  const text = `${obs.toCall > 0 ? `${chips(obs.toCall)} to call` : "nothing to call"}: ${options.join(" or ")}.`;
  return <p class="turn-hint">{obs.toAct === seat ? `Your move — ${text}` : `${names[obs.toAct]} to act — ${text}`}</p>;
}

export const table: GameTable = {
  Board,
  // Raises are totals for the hand, so the bar's button reads "Raise to 600" (and limit's fixed raise the same).
  labels: { fold: "Fold", check: "Check", call: "Call", raise: "Raise to" },
  presets: (form, obs: HoldemObservation) => {
    // A short stack's only raise is all-in: the slider has one value and needs no shortcuts.
    if (form.type !== "raise" || obs.toAct === null || form.max <= form.min) return [];
    // Pot-sized: call, then raise by the pot as it would stand after the call.
    const bet = Math.max(obs.committed[0], obs.committed[1]);
    const afterCall = obs.pot + (obs.toCall ?? 0);
    const between = [
      { label: "½ pot", amount: Math.round(bet + afterCall / 2) },
      { label: "Pot", amount: bet + afterCall },
    ].filter((p) => p.amount > form.min && p.amount < form.max);
    return [{ label: "Min", amount: form.min }, ...between, { label: "All-in", amount: form.max }];
  },
};
