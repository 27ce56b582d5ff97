/// <reference lib="dom" />
import type { ComponentChildren } from "preact";
import type { Bundle as SnBundle, SnEvent, SnObservation } from "./game.ts";
import { fmt } from "../../web/src/table/action-bar.tsx";
import { Bundle, ScrolledList } from "../../web/src/table/negotiation.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * Simple negotiation: both inventories (values and gains only where the observation holds them), the offer
 * waiting for an answer and what it is worth to the viewer, the action counter, and every chat, offer and
 * answer. Chat, offers, accept and deny are the action bar's forms.
 */

const signed = (x: number) => (x > 0 ? `+${fmt(x)}` : fmt(x));

function Board({ obs, seat, names }: TableProps<SnObservation>) {
  const order = seat === null ? [0, 1] : [seat, 1 - seat];
  const name = (s: number) => (s === seat ? "You" : names[s] ?? `Player ${s + 1}`);
  const verb = (s: number, base: string) => `${name(s)} ${s === seat ? base : `${base}s`}`;
  const counts = (b: SnBundle) => obs.resources.map((r) => b[r as keyof SnBundle] ?? 0);
  const value = (s: number, xs: readonly number[]) => {
    const values = obs.values[s];
    return values === null ? null : xs.reduce((sum, n, i) => sum + n * values[i], 0);
  };
  const over = obs.phase === "over";
  const done = Math.min(obs.turn - 1, obs.maxTurns);
  const left = obs.maxTurns - done;

  const status = over
    ? `Trading is over after ${obs.maxTurns} actions`
    : `Action ${obs.turn} of ${obs.maxTurns} · ${obs.toMove === seat ? "Your move" : `${name(obs.toMove!)}'s move`}`;

  return (
    <div class="sn">
      <div class="status-line">{status}</div>
      <div class="sn-meter-row">
        <div
          class="sn-meter"
          role="progressbar"
          aria-label="Actions used"
          aria-valuemin={0}
          aria-valuemax={obs.maxTurns}
          aria-valuenow={done}
        >
          <div class="fill" style={{ width: `${(100 * done) / obs.maxTurns}%` }} />
        </div>
        <span class="nego-note">{over ? "no actions left" : `${left} action${left === 1 ? "" : "s"} left`}</span>
      </div>

      <div class="sn-inventories">
        {order.map((s) => {
          const inv = obs.inventories[s];
          const values = obs.values[s];
          const gain = obs.gains[s];
          return (
            <div
              key={s}
              class={`sn-inventory seat-${s}${s === seat ? " mine" : ""}${obs.toMove === s ? " to-move" : ""}`}
            >
              <div class="inv-head">
                <span class="inv-name">{name(s)}</span>
                {obs.toMove === s && <span class="tag">to move</span>}
              </div>
              <ul class="inv-items">
                {obs.resources.map((r, i) => (
                  <li key={r}>
                    <Bundle items={[r]} counts={[inv[i]]} />
                    {values !== null && <span class="unit-value">{fmt(values[i])} each</span>}
                  </li>
                ))}
              </ul>
              <div class="inv-foot">
                {values === null || gain === null
                  ? <span class="nego-hidden" title="hidden until the game ends">values hidden</span>
                  : (
                    <>
                      Worth {fmt(value(s, inv)!)} ·{" "}
                      <span class={`sn-gain${gain > 0 ? " up" : gain < 0 ? " down" : ""}`}>gain {signed(gain)}</span>
                    </>
                  )}
              </div>
            </div>
          );
        })}
      </div>

      <section class="nego-section sn-offer-box">
        <h3>Offer on the table</h3>
        {obs.offer === null ? <p class="nego-note">No offer is waiting for an answer.</p> : (() => {
          const { from, to } = obs.offer;
          const give = counts(obs.offer.give);
          const get = counts(obs.offer.get);
          const held = (s: number, xs: number[]) => xs.every((n, i) => n <= obs.inventories[s][i]);
          // What the trade is worth to the viewer, by its own values.
          const forYou = seat === to
            ? (value(seat, give) ?? 0) - (value(seat, get) ?? 0)
            : seat === from
            ? (value(seat, get) ?? 0) - (value(seat, give) ?? 0)
            : null;
          return (
            <div class={`sn-offer seat-${from}`}>
              <div class="offer-head">
                {from === seat
                  ? `Your offer to ${name(to)}`
                  : to === seat
                  ? `${name(from)} offers you a trade`
                  : `${name(from)} offers ${name(to)} a trade`}
              </div>
              <div class="offer-sides">
                <div class={`offer-side seat-${from}`}>
                  <span class="side-label">{verb(from, "give")}</span>
                  <Bundle items={obs.resources} counts={give} named />
                </div>
                <span class="sn-swap" aria-hidden="true">⇄</span>
                <div class={`offer-side seat-${to}`}>
                  <span class="side-label">{verb(to, "give")}</span>
                  <Bundle items={obs.resources} counts={get} named />
                </div>
              </div>
              {forYou !== null && (
                <p class={`sn-gain${forYou > 0 ? " up" : forYou < 0 ? " down" : ""}`}>
                  {signed(forYou)} for you by your values
                </p>
              )}
              {!(held(from, give) && held(to, get)) && (
                <p class="nego-warning">
                  This trade cannot be made now: {held(from, give) ? name(to) : name(from)}{" "}
                  {(held(from, give) ? to : from) === seat ? "do" : "does"} not hold what it names.
                </p>
              )}
              {!over && (
                <p class="nego-note">
                  {to === seat
                    ? "Accept or deny it below, or make a counter-offer (which turns this one down)."
                    : `Waiting for ${name(to)} to accept or deny.`}
                </p>
              )}
            </div>
          );
        })()}
      </section>

      <section class="nego-section">
        <h3>Negotiation</h3>
        <Log log={obs.log} resources={obs.resources} name={name} seat={seat} counts={counts} />
      </section>
    </div>
  );
}

/** Every action in order: chat as speech bubbles, offers and answers as moves with any text they carried. */
function Log(props: {
  log: readonly SnEvent[];
  resources: readonly string[];
  seat: number | null;
  name: (s: number) => string;
  counts: (b: SnBundle) => number[];
}) {
  const { log, resources, seat, name, counts } = props;
  if (log.length === 0) return <p class="chat-empty">Nothing said or offered yet.</p>;
  // An accept names no trade: it takes the offer last made.
  let pending: SnEvent | null = null;
  const items = log.map((e) => {
    let move: ComponentChildren = null;
    if (e.type === "offer") {
      move = (
        <span class="sn-move">
          {name(e.seat)} offered <Bundle items={resources} counts={counts(e.give!)} named /> for{" "}
          <Bundle items={resources} counts={counts(e.get!)} named />
          {e.countered && (
            <span class="muted">(turning down the offer made to {e.seat === seat ? "you" : "them"})</span>
          )}
        </span>
      );
      pending = e;
    } else if (e.type === "accept") {
      const offer: SnEvent | null = pending;
      move = (
        <>
          <span class="sn-move accepted">{name(e.seat)} accepted the trade</span>
          {offer !== null && (
            <span class="sn-move">
              {name(offer.seat)} gave <Bundle items={resources} counts={counts(offer.give!)} named /> and got{" "}
              <Bundle items={resources} counts={counts(offer.get!)} named />
            </span>
          )}
        </>
      );
      pending = null;
    } else if (e.type === "deny") {
      move = <span class="sn-move denied">{name(e.seat)} denied the offer</span>;
      pending = null;
    }
    return (
      <li key={e.turn} class={`sn-event ${e.type} seat-${e.seat}${e.seat === seat ? " mine" : ""}`}>
        <span class="sn-turn" title={`action ${e.turn}`}>{e.turn}</span>
        <div class="sn-event-body">
          {e.type === "chat" && <span class="speaker">{name(e.seat)}</span>}
          {move}
          {e.text !== undefined && <span class="text">{e.text}</span>}
        </div>
      </li>
    );
  });
  return <ScrolledList class="sn-log" count={items.length}>{items}</ScrolledList>;
}

export const table: GameTable = {
  Board,
  labels: { chat: "Chat", offer: "Offer a trade", accept: "Accept trade", deny: "Deny" },
};
