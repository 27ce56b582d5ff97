/// <reference lib="dom" />
import type { ComponentChildren } from "preact";

/**
 * The furniture of the poker tables: playing cards (face up, face down, an empty board slot), chip stacks
 * and the pot, a seat on the felt, and the list of finished hands. Everything is drawn with CSS and the
 * Unicode suit symbols (web/styles/poker.css), so the tables need no images.
 */

type SuitKey = "s" | "h" | "d" | "c";

const SUITS: Readonly<Record<SuitKey, { symbol: string; name: string; red: boolean }>> = {
  s: { symbol: "♠", name: "spades", red: false },
  h: { symbol: "♥", name: "hearts", red: true },
  d: { symbol: "♦", name: "diamonds", red: true },
  c: { symbol: "♣", name: "clubs", red: false },
};

const RANK_NAMES: Readonly<Record<string, string>> = {
  A: "ace",
  K: "king",
  Q: "queen",
  J: "jack",
  T: "ten",
  "9": "nine",
  "8": "eight",
  "7": "seven",
  "6": "six",
  "5": "five",
  "4": "four",
  "3": "three",
  "2": "two",
};

/**
 * A card code read for drawing: hold'em's rank and suit letter ("Kc", "Th"), Leduc's rank and copy ("J1",
 * "K2": the two copies of a rank are drawn as spades and hearts, so they look like the two cards they are),
 * or Kuhn's bare rank ("J"), which has no suit.
 */
export function readCard(code: string): { rank: string; suit: SuitKey | null } {
  const rank = code.charAt(0).toUpperCase();
  const rest = code.slice(1).toLowerCase();
  const suit = rest === "1" ? "s" : rest === "2" ? "h" : rest in SUITS ? rest as SuitKey : null;
  return { rank, suit };
}

/** The rank as printed on a card: a ten shows as 10. */
function rankText(rank: string): string {
  return rank === "T" ? "10" : rank;
}

/** A card in words, for screen readers and tooltips: "king of hearts", or "queen" for a suitless card. */
export function cardName(code: string): string {
  const { rank, suit } = readCard(code);
  const name = RANK_NAMES[rank] ?? rank;
  return suit ? `${name} of ${SUITS[suit].name}` : name;
}

/** A card as short text with its suit symbol, e.g. K♥ (for sentences). */
export function cardText(code: string): string {
  const { rank, suit } = readCard(code);
  return rankText(rank) + (suit ? SUITS[suit].symbol : "");
}

export type CardSize = "sm" | "md" | "lg";

/** A face-up card. */
export function Card(props: { code: string; size?: CardSize }) {
  const { rank, suit } = readCard(props.code);
  const s = suit ? SUITS[suit] : null;
  const size = props.size ?? "md";
  const name = cardName(props.code);
  const symbol = s?.symbol ?? "";
  return (
    <span
      class={`pcard face ${size}${s?.red ? " red" : ""}${s ? "" : " plain"}`}
      role="img"
      aria-label={name}
      title={name}
    >
      {size === "sm" ? <span class="mini">{rankText(rank)}{symbol}</span> : (
        <>
          <span class="corner top" aria-hidden="true">
            <span class="rank">{rankText(rank)}</span>
            <span class="suit">{symbol}</span>
          </span>
          <span class="pip" aria-hidden="true">{s ? symbol : rankText(rank)}</span>
          <span class="corner bottom" aria-hidden="true">
            <span class="rank">{rankText(rank)}</span>
            <span class="suit">{symbol}</span>
          </span>
        </>
      )}
    </span>
  );
}

/** A face-down card. */
export function CardBack(props: { size?: CardSize }) {
  return <span class={`pcard back ${props.size ?? "md"}`} role="img" aria-label="face-down card" title="face down" />;
}

/** Where a board card will be dealt. */
export function CardSlot(props: { size?: CardSize }) {
  return <span class={`pcard slot ${props.size ?? "md"}`} aria-hidden="true" />;
}

/** Cards side by side: a code is face up, null face down. */
export function CardRow(props: { cards: readonly (string | null)[]; size?: CardSize; label?: string; slots?: number }) {
  const empty = Math.max(0, (props.slots ?? 0) - props.cards.length);
  return (
    <span class={`card-row ${props.size ?? "md"}`} role="group" aria-label={props.label}>
      {props.cards.map((code, i) =>
        code === null ? <CardBack key={`b${i}`} size={props.size} /> : <Card key={code} code={code} size={props.size} />
      )}
      {Array.from({ length: empty }, (_, i) => <CardSlot key={`s${i}`} size={props.size} />)}
    </span>
  );
}

/** A chip count in the app's style: 20,000. */
export function chips(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString("en") : n.toFixed(2);
}

/** A result with its sign: +2, −1, 0. */
export function signed(n: number): string {
  return n > 0 ? `+${chips(n)}` : n < 0 ? `−${chips(-n)}` : "0";
}

/** The colour classes the chips of a stack cycle through, bottom to top. */
const CHIP_COLOURS = ["red", "blue", "green", "black", "violet", "amber"];

/**
 * A stack of chips with its amount: a taller stack for a bigger amount (one disc per doubling, at most
 * six), so 1 chip and 20,000 chips both read at a glance. Nothing is drawn for 0.
 */
export function Chips(props: { amount: number; label?: string; kind?: "bet" | "pot" }) {
  if (props.amount <= 0) return null;
  const discs = Math.min(CHIP_COLOURS.length, 1 + Math.floor(Math.log2(Math.max(1, props.amount)) / 2));
  const words = `${props.label ? `${props.label}: ` : ""}${chips(props.amount)} chip${props.amount === 1 ? "" : "s"}`;
  return (
    <span class={`chips ${props.kind ?? "bet"}`} title={words}>
      <span class="chip-stack" aria-hidden="true">
        {CHIP_COLOURS.slice(0, discs).map((c) => <span key={c} class={`chip chip-${c}`} />)}
      </span>
      <span class="chip-amount">
        {props.label && <span class="chip-label">{props.label}</span>}
        {chips(props.amount)}
      </span>
    </span>
  );
}

/** The pot in the middle of the felt. */
export function Pot(props: { amount: number; note?: string }) {
  return (
    <div class="pot" role="status" aria-label={`Pot ${chips(props.amount)}${props.note ? `, ${props.note}` : ""}`}>
      {props.amount > 0
        ? <Chips amount={props.amount} label="Pot" kind="pot" />
        : <span class="pot-empty">Pot empty</span>}
      {props.note && <span class="pot-note">{props.note}</span>}
    </div>
  );
}

/** How a seat is named in sentences: "You" for the viewer's own seat ("you" inside a sentence). */
export function who(seat: number, viewer: number | null, names: readonly string[], inside = false): string {
  return seat === viewer ? (inside ? "you" : "You") : names[seat] ?? `Seat ${seat}`;
}

/** Clauses joined into one sentence: "Alice bets 1, you call 1". */
export function sentence(clauses: readonly string[], joiner = ", "): string {
  return clauses.map((c, i) => (i > 0 ? c.replace(/^You\b/, "you") : c)).join(joiner);
}

/** A verb for a seat: "You check" / "Bob checks". */
export function does(seat: number, viewer: number | null, names: readonly string[], you: string, they: string) {
  return `${who(seat, viewer, names)} ${seat === viewer ? you : they}`;
}

/** A hand won by a fold: "You fold on the flop; Bob wins 200" (`where` says when, if it matters). */
export function foldedHand(
  folder: number,
  taker: number,
  amount: string | number,
  viewer: number | null,
  names: readonly string[],
  where = "",
): string {
  const fold = does(folder, viewer, names, "fold", "folds");
  return `${fold}${where ? ` ${where}` : ""}; ${who(taker, viewer, names, true)} ${
    taker === viewer ? "win" : "wins"
  } ${amount}`;
}

/** The status line of a poker match that has ended. */
export function matchOver(hands: number): string {
  return `Match over after ${hands} hand${hands === 1 ? "" : "s"}`;
}

/** The line above the felt that tells how the previous hand ended. */
export function LastHand(props: { hand: number; children: ComponentChildren }) {
  return (
    <p class="last-hand">
      <span class="last-hand-title">Hand {props.hand}</span> {props.children}
    </p>
  );
}

/** The seats in the order the felt shows them, bottom first: the viewer's own, else seat 0. */
export function seatOrder(viewer: number | null): [number, number] {
  const me = viewer ?? 0;
  return [me, 1 - me];
}

/** One seat on the felt: its plate (name, markers, stack, match total), its cards, and the chips it has put in. */
export function Seat(props: {
  seat: number;
  names: readonly string[];
  viewer: number | null;
  place: "top" | "bottom";
  cards: ComponentChildren;
  toAct?: boolean;
  /** Chips put in this hand, shown in front of the seat. */
  committed?: number;
  /** Chips behind (hold'em with stacks). */
  stack?: number | null;
  /** Net chips over the match so far. */
  total?: number;
  markers?: ComponentChildren;
  /** A word under the name: "folded", "wins 2", "to act". */
  note?: string;
  state?: "folded" | "winner";
}) {
  const { seat, names, viewer } = props;
  const mine = seat === viewer;
  return (
    <div
      class={`seat ${props.place} seat-${seat}${mine ? " mine" : ""}${props.toAct ? " to-act" : ""}${
        props.state ? ` ${props.state}` : ""
      }`}
      data-seat={seat}
    >
      <div class="seat-main">
        <div class="seat-plate">
          <div class="seat-name">
            <span class="seat-dot" aria-hidden="true" />
            <span class="seat-who" title={names[seat]}>{names[seat] ?? `Seat ${seat}`}</span>
            {mine && <span class="you-tag">you</span>}
          </div>
          {props.markers && <div class="seat-markers">{props.markers}</div>}
          <div class="seat-figures">
            {props.stack !== undefined && props.stack !== null && (
              <span class="seat-stack" title="chips behind">
                Stack <strong>{chips(props.stack)}</strong>
              </span>
            )}
            {props.total !== undefined && (
              <span class={`seat-total${props.total > 0 ? " up" : props.total < 0 ? " down" : ""}`} title="match total">
                Match <strong>{signed(props.total)}</strong>
              </span>
            )}
          </div>
          {(props.note || props.toAct) && <div class="seat-note">{props.note ?? (mine ? "your turn" : "to act")}</div>}
        </div>
        <div class="seat-cards">{props.cards}</div>
      </div>
      <div class="seat-bet">
        {props.committed !== undefined && props.committed > 0 && <Chips amount={props.committed} label="In" />}
      </div>
    </div>
  );
}

/** A small round marker beside a seat's name: the dealer button, a blind, who acts first. */
export function Marker(props: { kind: "dealer" | "blind" | "first"; title: string; children: ComponentChildren }) {
  return <span class={`marker marker-${props.kind}`} title={props.title}>{props.children}</span>;
}

/** The felt: the other seat at the top, the board and pot in the middle, the viewer's seat at the bottom. */
export function Felt(props: { top: ComponentChildren; center: ComponentChildren; bottom: ComponentChildren }) {
  return (
    // The wrapper is a size container: the felt narrows to a phone's width or a replay's side-by-side column.
    <div class="felt-wrap">
      <div class="felt">
        {props.top}
        <div class="felt-center">{props.center}</div>
        {props.bottom}
      </div>
    </div>
  );
}

/** This hand's betting in words, a line per round, e.g. "Flop: Bob bets 200, you call 200". */
export function BettingWords(props: { rounds: readonly { title?: string; words: readonly string[] }[] }) {
  const rounds = props.rounds.filter((r) => r.words.length > 0);
  if (rounds.length === 0) return <p class="betting-words muted-felt">No bets yet this hand.</p>;
  return (
    <ol class="betting-words" aria-label="Betting this hand">
      {rounds.map((r, i) => (
        <li key={i}>
          {r.title && <span class="betting-round">{r.title}</span>}
          {sentence(r.words)}
        </li>
      ))}
    </ol>
  );
}

/** A finished hand, as the history list shows it. */
export interface HandRow {
  /** 1-based. */
  readonly hand: number;
  /** Each seat's cards as revealed (null where never shown). */
  readonly cards: readonly (readonly (string | null)[])[];
  readonly board?: readonly string[];
  /** How it ended, in words: "Bob wins at showdown", "You fold". */
  readonly outcome: string;
  /** The betting in words, when the game tells it. */
  readonly betting?: string;
  /** Chips won by seat. */
  readonly won: readonly number[];
  /** Each seat's match total after this hand. */
  readonly totals: readonly number[];
}

/** How many finished hands the list shows; a long match keeps its totals but lists only the latest. */
const SHOWN_HANDS = 50;

/** Every finished hand, newest first: cards as revealed, the board, how it ended, chips won, running totals. */
export function HandHistory(props: {
  rows: readonly HandRow[];
  names: readonly string[];
  viewer: number | null;
  /** Finished hands before the first row that the observation no longer lists. */
  earlier?: number;
}) {
  const { rows, names, viewer } = props;
  const order = seatOrder(viewer);
  const shown = rows.slice(-SHOWN_HANDS).reverse();
  const hidden = rows.length - shown.length + (props.earlier ?? 0);
  return (
    <section class="hand-history" aria-label="Hand history">
      <h3>
        Hand history <span class="muted">{rows.length + (props.earlier ?? 0)} played</span>
      </h3>
      {shown.length === 0 ? <p class="muted">No hands finished yet.</p> : (
        <ol class="hand-rows">
          {shown.map((row) => {
            const best = Math.max(...row.won);
            return (
              <li key={row.hand} class="hand-row">
                <span class="hand-no">#{row.hand}</span>
                <span class="hand-seats">
                  {order.map((s) => (
                    <span key={s} class={`hand-seat seat-${s}${row.won[s] === best && best > 0 ? " won" : ""}`}>
                      <span class="hand-who">{who(s, viewer, names)}</span>
                      <CardRow cards={row.cards[s] ?? []} size="sm" label={`${who(s, viewer, names)}'s cards`} />
                    </span>
                  ))}
                  {row.board && row.board.length > 0 && (
                    <span class="hand-seat hand-board">
                      <span class="hand-who">Board</span>
                      <CardRow cards={row.board} size="sm" label="Board" />
                    </span>
                  )}
                </span>
                <span class="hand-outcome">
                  <span class="outcome">{row.outcome}</span>
                  {row.betting && <span class="hand-betting">{row.betting}</span>}
                </span>
                <span class="hand-money">
                  {order.map((s) => (
                    <span key={s} class={`hand-net${row.won[s] > 0 ? " up" : row.won[s] < 0 ? " down" : ""}`}>
                      {who(s, viewer, names)} {signed(row.won[s])}
                      <span class="hand-running" title="match total after this hand">
                        → {signed(row.totals[s])}
                      </span>
                    </span>
                  ))}
                </span>
              </li>
            );
          })}
        </ol>
      )}
      {hidden > 0 && <p class="muted hand-earlier">…and {chips(hidden)} earlier hand{hidden === 1 ? "" : "s"}.</p>}
    </section>
  );
}

/** Running totals after each hand, from each hand's winnings and the match totals now. */
export function runningTotals(won: readonly (readonly number[])[], totals: readonly number[]): number[][] {
  const after: number[][] = [];
  let running = [...totals];
  for (let i = won.length - 1; i >= 0; i--) {
    after[i] = running;
    running = running.map((t, s) => t - won[i][s]);
  }
  return after;
}

/** A finished hand of a one-private-card poker game (Kuhn, Leduc), as its history shows it. */
interface OneCardHand {
  readonly first: number;
  readonly cards: readonly (string | null)[];
  readonly showdown: boolean;
  readonly winner: number | null;
  readonly rewards: readonly number[];
}

/** What Kuhn and Leduc observations share: one private card each, a stake, running totals, the hands played. */
interface OneCardObservation<H extends OneCardHand> {
  readonly phase: string;
  readonly card: string | null;
  readonly first: number | null;
  readonly toAct: number | null;
  readonly contributions: readonly number[];
  readonly totals: readonly number[];
  readonly hands: number;
  readonly history: readonly H[];
}

/**
 * The seats of a one-private-card poker table: while a hand is in play only the viewer's own card is known;
 * once the match is over, the last hand as its history shows it, with who won and who folded.
 */
function oneCardSeat<H extends OneCardHand>(
  obs: OneCardObservation<H>,
  viewer: number | null,
  names: readonly string[],
  game: { readonly folder: (hand: H) => number; readonly firstTitle: string },
): (seat: number, place: "top" | "bottom") => ComponentChildren {
  const over = obs.phase === "over";
  const last = obs.history.at(-1);
  const first = over ? last?.first ?? null : obs.first;
  const cardsOf = (s: number): (string | null)[] =>
    over ? [last?.cards[s] ?? null] : [s === viewer && obs.card ? obs.card : null];
  return (s, place) => (
    <Seat
      seat={s}
      names={names}
      viewer={viewer}
      place={place}
      cards={<CardRow cards={cardsOf(s)} size="lg" label={`${who(s, viewer, names)}'s card`} />}
      toAct={obs.toAct === s}
      committed={over ? undefined : obs.contributions[s]}
      total={obs.hands > 1 || over ? obs.totals[s] : undefined}
      markers={first === s && <Marker kind="first" title={game.firstTitle}>Acts first</Marker>}
      note={over && last && last.rewards[s] > 0 ? `won ${signed(last.rewards[s])}` : undefined}
      state={over && last
        ? last.winner === s ? "winner" : !last.showdown && game.folder(last) === s ? "folded" : undefined
        : undefined}
    />
  );
}

/** What a one-private-card game tells its table; the table lays out the rest the same way for both. */
interface OneCardGame<H extends OneCardHand> {
  /** The seat that folded in a hand that ended without a showdown. */
  readonly folder: (hand: H) => number;
  /** The title of the "Acts first" marker. */
  readonly firstTitle: string;
  /** How a finished hand ended, in words. */
  readonly outcome: (hand: H) => string;
  /** A finished hand's betting in words, for the history. */
  readonly betting: (hand: H) => string;
  /** A finished hand's board, for the history, when the game has one. */
  readonly board?: (hand: H) => readonly string[];
}

/**
 * A Kuhn or Leduc table: the status line, how the last hand ended, the felt (seats, `board`, the pot or the
 * match's result, the betting, `hint`) and the hand history.
 */
export function OneCardTable<H extends OneCardHand>(props: {
  kind: string;
  obs: OneCardObservation<H>;
  seat: number | null;
  names: readonly string[];
  game: OneCardGame<H>;
  status: string;
  rounds: readonly { title?: string; words: readonly string[] }[];
  board?: ComponentChildren;
  pot: ComponentChildren;
  hint: ComponentChildren;
}) {
  const { obs, seat, names, game } = props;
  const over = obs.phase === "over";
  const last = obs.history.at(-1);
  const [bottom, top] = seatOrder(seat);
  const seatView = oneCardSeat(obs, seat, names, game);
  const running = runningTotals(obs.history.map((h) => h.rewards), obs.totals);
  const rows: HandRow[] = obs.history.map((h, i) => ({
    hand: i + 1,
    cards: [[h.cards[0]], [h.cards[1]]],
    ...(game.board ? { board: game.board(h) } : {}),
    outcome: game.outcome(h),
    betting: game.betting(h),
    won: h.rewards,
    totals: running[i],
  }));
  return (
    <div class={`poker ${props.kind}`}>
      <div class="status-line">{props.status}</div>
      {!over && last && <LastHand hand={obs.history.length}>{game.outcome(last)}</LastHand>}
      <Felt
        top={seatView(top, "top")}
        center={
          <>
            {props.board}
            {over ? last && <div class="felt-result">{game.outcome(last)}</div> : props.pot}
            <BettingWords rounds={props.rounds} />
            {!over && props.hint}
          </>
        }
        bottom={seatView(bottom, "bottom")}
      />
      <HandHistory rows={rows} names={names} viewer={seat} />
    </div>
  );
}
