/// <reference lib="dom" />
import type { Hand, TasObservation } from "./game.ts";
import { fmt } from "../../web/src/table/action-bar.tsx";
import { ChatLog, Totals } from "../../web/src/table/chat-log.tsx";
import { Bundle, ItemIcon } from "../../web/src/table/negotiation.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * Trust-and-Split: this round's pile and what the viewer knows of the values (its own rock-paper-scissors
 * hand, or the public values), the chat, and every finished round with both hands, claims, shares and
 * points. The message box and the claim steppers are the action bar's.
 */

const BEATS: Record<Hand, Hand> = { rock: "scissors", paper: "rock", scissors: "paper" };
const LOSES_TO: Record<Hand, Hand> = { rock: "paper", paper: "scissors", scissors: "rock" };

function HandIcon(props: { hand: Hand }) {
  return (
    <svg class={`hand-icon hand-${props.hand}`} viewBox="0 0 24 24" aria-hidden="true">
      {props.hand === "rock" && <path class="fill" d="M5 15 3.5 10 7.5 5 14.5 4 20 8.5 19.5 15.5 13.5 20 8 19.5z" />}
      {props.hand === "paper" && (
        <>
          <path class="fill" d="M6 3h9l4 4v14H6z" />
          <path class="line" d="M15 3v4h4M9 11h7M9 14h7M9 17h5" />
        </>
      )}
      {props.hand === "scissors" && (
        <>
          <path class="line blade" d="M9.5 14.5 17 3M14.5 14.5 7 3" />
          <circle class="line" cx="7.5" cy="17.5" r="3" />
          <circle class="line" cx="16.5" cy="17.5" r="3" />
        </>
      )}
    </svg>
  );
}

const cap = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** A hand as a card; null is the back of one this view may not see. */
function HandCard(props: { hand: Hand | null; owner: string; upper: boolean | null }) {
  const { hand, upper } = props;
  return (
    <div class={`tas-hand${hand === null ? " hidden" : ""}${upper === true ? " upper" : ""}`}>
      {hand === null ? <span class="card-back" aria-hidden="true">?</span> : <HandIcon hand={hand} />}
      <span class="hand-name">{hand === null ? "Hidden" : cap(hand)}</span>
      <span class="hand-owner">{props.owner}</span>
      {upper !== null && <span class={`tag ${upper ? "upper" : "lower"}`}>{upper ? "upper hand" : "lower hand"}</span>}
    </div>
  );
}

function Board({ obs, seat, names }: TableProps<TasObservation>) {
  const order = seat === null ? [0, 1] : [seat, 1 - seat];
  const name = (s: number) => (s === seat ? "You" : names[s] ?? `Player ${s + 1}`);
  const rps = obs.valuation !== "ties";
  const playing = obs.phase !== "over";
  const unit = obs.items.length === 1 ? obs.items[0].replace(/s$/, "") : "unit";
  const several = obs.items.length > 1;
  const counts = (xs: readonly number[]) => xs.map(fmt).join(" · ");

  // Under "rps-alternating" the upper hand passes to the other seat every round, so from round 2 on the
  // rules themselves tell everyone who holds it.
  const lastRound = obs.history.at(-1);
  const upperNow = playing && obs.valuation === "rps-alternating" && lastRound?.standing
    ? (lastRound.standing[0] === "upper" ? 1 : 0)
    : null;

  let status: string;
  if (!playing) {
    const [a, b] = obs.totals;
    status = `All ${obs.rounds} rounds played · ${
      a === b ? "level on points" : `${name(a > b ? 0 : 1)} finished ahead`
    }`;
  } else if (obs.phase === "message") {
    const said = obs.chat.filter((m) => m.round === obs.round).length;
    const speaker = obs.speaker!;
    status = `Round ${obs.round} of ${obs.rounds} · Chat: ${
      speaker === seat ? "your message" : `${name(speaker)}'s message`
    } (${said + 1} of ${2 * obs.messages})`;
  } else {
    status = `Round ${obs.round} of ${obs.rounds} · Claims: ${
      seat === null ? "both players claim" : "claim your share"
    }, in secret`;
  }

  return (
    <div class="tas">
      <div class="status-line">{status}</div>
      <Totals totals={obs.totals} names={obs.totals.map((_, s) => name(s))} seat={seat} />

      {playing && (
        <section class="nego-section tas-round">
          <h3>Round {obs.round}</h3>
          <div class="tas-pile">
            <span class="side-label">To split</span>
            <Bundle items={obs.items} counts={obs.items.map(() => obs.quantity)} />
          </div>
          {rps
            ? (
              <>
                <div class="tas-hands">
                  {order.map((s) => (
                    <HandCard
                      key={s}
                      hand={s === seat ? obs.hand : null}
                      owner={name(s)}
                      upper={upperNow === null ? null : upperNow === s}
                    />
                  ))}
                </div>
                <p class="nego-note">
                  {seat !== null && obs.hand !== null
                    ? `${cap(obs.hand)} beats ${BEATS[obs.hand]} and loses to ${LOSES_TO[obs.hand]}. `
                    : "The hands stay hidden until the round ends. "}
                  The winning hand values every {unit} at <strong>{fmt(obs.high)}</strong>, the other at{" "}
                  <strong>{fmt(obs.low)}</strong>.
                  {upperNow !== null &&
                    ` The upper hand alternates, so this round it is ${
                      upperNow === seat ? "yours" : `${name(upperNow)}'s`
                    }.`}
                </p>
              </>
            )
            : (
              <table class="tas-values" aria-label="Values per unit this round">
                <thead>
                  <tr>
                    <th>Per unit</th>
                    {obs.items.map((item) => (
                      <th key={item}>
                        <ItemIcon item={item} /> {item}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {order.map((s) => (
                    <tr key={s} class={`seat-${s}`}>
                      <th>{name(s)}</th>
                      {(obs.values?.[s] ?? obs.items.map(() => null)).map((v, i) => (
                        <td key={i} class={v === null ? "" : v === obs.high ? "high" : "low"}>
                          {v === null ? <span class="nego-hidden">hidden</span> : fmt(v)}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          <p class="nego-notice">
            {obs.phase === "message"
              ? `Talk first: each player sends ${obs.messages} message${
                obs.messages === 1 ? "" : "s"
              } this round, taking turns. Nothing said is binding.`
              : `Both claim at once how much of each item they keep, 0 to ${obs.quantity}. If the claims add up to ` +
                `more than ${obs.quantity}, the ${obs.quantity} are shared in proportion to them.`}
          </p>
        </section>
      )}

      {(obs.messages > 0 || obs.chat.length > 0) && (
        <section class="nego-section">
          <h3>Chat</h3>
          <ChatLog lines={obs.chat} names={names} seat={seat} />
        </section>
      )}

      <section class="nego-section">
        <h3>Rounds</h3>
        <div class="nego-scroll">
          <table class="history tas-history" aria-label="Rounds played">
            <thead>
              <tr>
                <th>Round</th>
                <th>Player</th>
                <th>{rps ? "Hand" : <>Values{several && <span class="tas-items">{obs.items.join(" · ")}</span>}</>}</th>
                <th>Claim{several && <span class="tas-items">{obs.items.join(" · ")}</span>}</th>
                <th>Share{several && <span class="tas-items">{obs.items.join(" · ")}</span>}</th>
                <th>Points</th>
              </tr>
            </thead>
            <tbody>
              {obs.history.map((h, r) =>
                order.map((s, k) => (
                  <tr key={`${r}-${s}`} class={`seat-${s}${k === 0 ? " first" : ""}`}>
                    {k === 0 && <td rowSpan={2} class="tas-round-no">{r + 1}</td>}
                    <td class="tas-player">{name(s)}</td>
                    <td class={h.standing?.[s] === "upper" ? "tas-upper" : ""}>
                      {h.hands && h.standing
                        ? (
                          <span class="tas-hand-cell">
                            <HandIcon hand={h.hands[s]} />
                            {cap(h.hands[s])}
                            <span class="muted">· {fmt(h.values[s][0])} each</span>
                          </span>
                        )
                        : counts(h.values[s])}
                    </td>
                    <td>{counts(h.claims[s])}</td>
                    <td>{counts(h.received[s])}</td>
                    <td class="tas-points">{fmt(h.rewards[s])}</td>
                  </tr>
                ))
              )}
              {obs.history.length === 0 && (
                <tr>
                  <td colSpan={6} class="empty">No rounds finished yet.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      </section>
    </div>
  );
}

export const table: GameTable = {
  Board,
  labels: { message: "Message", split: "Claim" },
};
