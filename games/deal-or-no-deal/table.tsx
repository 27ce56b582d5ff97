/// <reference lib="dom" />
import type { ComponentChildren, JSX } from "preact";
import type { DondObservation } from "./game.ts";
import { ChatLog } from "../../web/src/table/chat-log.tsx";
import { Bundle, ItemIcon, ScrolledList } from "../../web/src/table/negotiation.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * Deal or No Deal: the pool with each side's values (the other's stay hidden until the end), the offer on
 * the table, every offer and message in turn order (or the free talk in the dialogue protocol), and the
 * outcome. Proposals, agreement and the final takes are the action bar's forms.
 */

function Board({ obs, seat, names }: TableProps<DondObservation>) {
  const order = seat === null ? [0, 1] : [seat, 1 - seat];
  const name = (s: number) => (s === seat ? "You" : names[s] ?? `Player ${s + 1}`);
  // "You keep" but "Ana keeps".
  const verb = (s: number, base: string) => `${name(s)} ${s === seat ? base : `${base}s`}`;
  const worth = (s: number, counts: readonly number[]) => {
    const values = obs.values[s];
    return values === null ? null : counts.reduce((sum, n, i) => sum + n * values[i], 0);
  };
  const poolWorth = obs.values.find((v) => v !== null)?.reduce((sum, v, i) => sum + v * obs.pool[i], 0) ?? null;
  const rest = (keep: readonly number[]) => obs.pool.map((n, i) => n - keep[i]);
  const dialogue = obs.protocol === "dialogue";
  const actor = obs.toAct[0];
  const last = obs.offers.at(-1);

  const offerCard = (offer: DondObservation["offers"][number], index: number, current: boolean) => {
    const p = offer.seat;
    const sides = [
      { seat: p, label: verb(p, "keep"), counts: offer.keep },
      { seat: 1 - p, label: verb(1 - p, "get"), counts: rest(offer.keep) },
    ];
    return (
      <div class={`dond-offer seat-${p}${current ? " current" : ""}`}>
        <div class="offer-head">
          <span class="who">{name(p)}</span> · offer {index + 1}
          {current && <span class="tag">on the table</span>}
        </div>
        <div class="offer-sides">
          {sides.map((side) => {
            const w = worth(side.seat, side.counts);
            return (
              <div class={`offer-side seat-${side.seat}`}>
                <span class="side-label">{side.label}</span>
                <Bundle items={obs.items} counts={side.counts} />
                {w !== null && <span class="worth">worth {w}{side.seat === seat ? " to you" : ""}</span>}
              </div>
            );
          })}
        </div>
      </div>
    );
  };

  let status: string;
  if (obs.phase === "over") {
    status = !obs.agreement
      ? "No deal: both score 0."
      : dialogue
      ? "Deal: the takes fit together."
      : `Deal on offer ${obs.offers.length}.`;
  } else if (obs.phase === "choose") {
    status = seat === null
      ? "The talk is over: both state privately what they take."
      : "The talk is over: state privately what you take.";
  } else {
    const whose = actor === seat ? "Your turn" : `${name(actor)}'s turn`;
    status = dialogue
      ? `Message ${obs.turn} of at most ${obs.maxTurns} · ${whose}`
      : `Offer ${obs.turn} of at most ${obs.maxTurns} · ${whose}`;
  }

  // Alternating offers, in turn order: each turn's optional message, then its offer.
  const timeline: ComponentChildren[] = [];
  if (!dialogue) {
    const lastTurn = Math.max(obs.offers.length, obs.chat.at(-1)?.turn ?? 0);
    for (let t = 1, c = 0; t <= lastTurn; t++) {
      for (; c < obs.chat.length && obs.chat[c].turn === t; c++) {
        const m = obs.chat[c];
        timeline.push(
          <li key={`m${c}`} class={`chat-line seat-${m.seat}${m.seat === seat ? " mine" : ""}`}>
            <span class="speaker">{name(m.seat)}</span>
            <span class="text">{m.text}</span>
          </li>,
        );
      }
      const offer = obs.offers[t - 1];
      if (offer !== undefined) {
        timeline.push(<li key={`o${t}`} class="dond-timeline-offer">{offerCard(offer, t - 1, false)}</li>);
      }
    }
  }

  const discountNow = obs.discount < 1 && obs.phase === "negotiate" && !dialogue
    ? obs.discount ** Math.max(0, obs.offers.length - 1)
    : null;

  return (
    <div class="dond">
      <div class="status-line">{status}</div>

      <section class="nego-section">
        <h3>The pool</h3>
        <div class="dond-pool">
          {obs.items.map((item, i) => (
            <div key={item} class="dond-item">
              <ItemIcon item={item} />
              <span class="dond-count">×{obs.pool[i]}</span>
              <span class="dond-item-name">{item}</span>
              <dl class="dond-values">
                {order.map((s) => (
                  <div key={s} class={`seat-${s}`}>
                    <dt>{name(s)}</dt>
                    <dd>
                      {obs.values[s] === null
                        ? <span class="nego-hidden" title="hidden until the game ends">hidden</span>
                        : `${obs.values[s]![i]} each`}
                    </dd>
                  </div>
                ))}
              </dl>
            </div>
          ))}
        </div>
        <p class="nego-note">
          {poolWorth !== null && `The whole pool is worth ${poolWorth} to each player. `}
          {obs.phase === "over"
            ? "Both players' values are revealed."
            : seat === null
            ? "Both players' values stay hidden until the game ends."
            : `${name(1 - seat)}'s values stay hidden until the game ends.`}
        </p>
      </section>

      {obs.phase === "negotiate" && !dialogue && (
        <section class="nego-section dond-current">
          <h3>The current proposal</h3>
          {last === undefined
            ? <p class="nego-note">No offer yet: {verb(actor, "open")} by proposing what to keep.</p>
            : (
              <>
                {offerCard(last, obs.offers.length - 1, true)}
                <p class="nego-note">
                  {last.seat === seat
                    ? `Waiting for ${name(1 - last.seat)} to accept it or counter.`
                    : `${name(1 - last.seat)} may accept it, or counter with an offer of ${
                      seat === 1 - last.seat ? "your" : "their"
                    } own.`}
                </p>
              </>
            )}
          {obs.offers.length === obs.maxTurns - 1 && (
            <p class="nego-warning">
              The next offer is the last: nobody can accept it, so making it ends the game with no deal.
            </p>
          )}
          {discountNow !== null && (
            <p class="nego-note">
              Deals shrink with time: agreeing now pays {Math.round(discountNow * 1000) / 10}% of the shares' value.
            </p>
          )}
        </section>
      )}

      {obs.phase === "over" && <Outcome obs={obs} seat={seat} names={names} offerCard={offerCard} />}

      {obs.phase === "choose" && (
        <p class="nego-notice">
          {obs.selectedBy === null ? "The message limit closed the talk." : `${name(obs.selectedBy)} ended the talk.`}
          {" "}
          Both now state, without seeing the other's answer, how many of each item they take. It is a deal only if the
          two takes add up exactly to the pool.
        </p>
      )}

      {dialogue
        ? (
          <section class="nego-section">
            <h3>Talk</h3>
            <ChatLog lines={obs.chat.map((m) => ({ seat: m.seat, text: m.text }))} names={names} seat={seat} />
          </section>
        )
        : (
          <section class="nego-section">
            <h3>Offers and messages</h3>
            {timeline.length === 0
              ? <p class="chat-empty">Nothing said or offered yet.</p>
              : <ScrolledList class="dond-timeline chat-log" count={timeline.length}>{timeline}</ScrolledList>}
          </section>
        )}
    </div>
  );
}

/** How the game ended: the accepted offer or the two stated takes, and each side's score. */
function Outcome(props: {
  obs: DondObservation;
  seat: number | null;
  names: readonly string[];
  offerCard: (offer: DondObservation["offers"][number], index: number, current: boolean) => JSX.Element;
}) {
  const { obs, seat, names } = props;
  const name = (s: number) => (s === seat ? "You" : names[s] ?? `Player ${s + 1}`);
  const order = seat === null ? [0, 1] : [seat, 1 - seat];
  const last = obs.offers.at(-1);
  let detail: ComponentChildren;
  if (obs.choices !== null) {
    const [a, b] = obs.choices;
    const fits = obs.pool.map((n, i) => a !== null && b !== null && a[i] + b[i] === n);
    detail = (
      <>
        <ul class="dond-takes">
          {order.map((s) => {
            const take = obs.choices![s];
            return (
              <li key={s} class={`seat-${s}`}>
                <span class="side-label">{name(s)} {s === seat ? "take" : "takes"}</span>
                {take === null
                  ? <span class="nego-none">no agreement</span>
                  : <Bundle items={obs.items} counts={take} />}
              </li>
            );
          })}
        </ul>
        <p class="nego-note">
          {obs.agreement
            ? "The takes add up exactly to the pool."
            : a === null || b === null
            ? "A player declared no agreement."
            : `The takes do not add up to the pool (${obs.items.filter((_, i) => !fits[i]).join(", ")} do not match).`}
        </p>
      </>
    );
  } else if (obs.agreement && last !== undefined) {
    detail = (
      <>
        <p class="nego-note">
          {name(1 - last.seat)} accepted {last.seat === seat ? "your" : `${name(last.seat)}'s`} offer.
        </p>
        {props.offerCard(last, obs.offers.length - 1, false)}
      </>
    );
  } else {
    detail = <p class="nego-note">No offer was accepted in {obs.offers.length} offers.</p>;
  }
  return (
    <section class={`nego-section nego-outcome ${obs.agreement ? "deal" : "no-deal"}`}>
      <h3>{obs.agreement ? "Deal" : "No deal"}</h3>
      {detail}
      <dl class="totals">
        {order.map((s) => (
          <div key={s} class={`total seat-${s}${s === seat ? " mine" : ""}`}>
            <dt>{name(s)}</dt>
            <dd>{Math.round(obs.returns[s] * 100) / 100}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

export const table: GameTable = {
  Board,
  labels: {
    message: "Message",
    propose: "Propose",
    agree: "Accept offer",
    select: "End the talk",
    choice: "Claim",
    no_agreement: "No deal",
  },
};
