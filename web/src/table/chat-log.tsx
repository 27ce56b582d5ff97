/// <reference lib="dom" />
import { useEffect, useRef } from "preact/hooks";

/** The messages of a match, newest at the bottom, each with its speaker (and round, where the game has rounds). */
export interface ChatLine {
  readonly seat: number;
  readonly text: string;
  readonly round?: number;
}

export function ChatLog(props: { lines: readonly ChatLine[]; names: readonly string[]; seat: number | null }) {
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => end.current?.scrollIntoView?.({ block: "nearest" }), [props.lines.length]);
  if (props.lines.length === 0) return <p class="chat-empty">No messages yet.</p>;
  return (
    <ol class="chat-log" aria-label="Messages" aria-live="polite">
      {props.lines.map((line, i) => (
        <li
          key={i}
          class={`chat-line seat-${line.seat}${line.seat === props.seat ? " mine" : ""}`}
          ref={i === props.lines.length - 1 ? end : undefined}
        >
          <span class="speaker">
            {props.names[line.seat] ?? `Seat ${line.seat}`}
            {line.round !== undefined && <span class="round-tag">round {line.round}</span>}
          </span>
          <span class="text">{line.text}</span>
        </li>
      ))}
    </ol>
  );
}

/** Each seat's running total, the viewer's first-person where it has a seat. */
export function Totals(props: { totals: readonly (number | null)[]; names: readonly string[]; seat: number | null }) {
  return (
    <dl class="totals">
      {props.totals.map((t, s) => (
        <div class={`total seat-${s}${s === props.seat ? " mine" : ""}`}>
          <dt>{props.names[s] ?? `Seat ${s}`}</dt>
          <dd>{t === null ? "?" : Number.isInteger(t) ? t : t.toFixed(2)}</dd>
        </div>
      ))}
    </dl>
  );
}
