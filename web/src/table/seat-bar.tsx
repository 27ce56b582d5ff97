/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import type { SeatKind } from "../../../protocol/frames.ts";
import type { SeatSnapshot } from "../session.ts";
import { DID } from "../words.ts";

/** The seats: who sits where, who is here, whose turn it is, and each clock counting down. */

function clockText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Every kind of player, as the page names it (the compiler asks for a new kind here). */
const KIND: Readonly<Record<SeatKind, string>> = {
  human: "person",
  bot: "bot",
  llm: "LLM",
  builtin: "built-in",
  policy: "policy",
};

/** Whether a seat's player is here, from the public state: away (the server holds the seat), or gone and why. */
function presence(s: SeatSnapshot, phase: string): string | null {
  if (s.open) return "open seat · waiting for the invite to be used";
  const did = DID[s.status];
  if (did) return s.status === "DISCONNECTED" && phase === "playing" ? `${did} · plays default moves` : did;
  if (s.connected || phase === "ended") return null;
  return phase === "waiting" ? "not here yet" : "away · seat held";
}

export function SeatBar(props: {
  seats: readonly SeatSnapshot[];
  toAct: readonly number[];
  mine: number | null;
  phase: string;
  /** While this page's connection is down (page clock): the clocks show the time they had then and stop. */
  frozenAt?: number;
}) {
  const { frozenAt } = props;
  const [now, setNow] = useState(performance.now());
  const running = frozenAt === undefined && props.seats.some((s) => s.running);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 250);
    return () => clearInterval(timer);
  }, [running]);
  // Many seats (the Donor Game's twelve) show as a compact list of those to act.
  const shown = props.seats.length > 4 ? props.seats.filter((s) => s.seat === props.mine || s.running) : props.seats;
  return (
    <div class="seats" aria-label="Players">
      {shown.map((s) => {
        const ticking = s.running && frozenAt === undefined;
        // A state received since the last tick is not yet older than `now`: it never counts up.
        const left = s.running ? s.remainingMs - Math.max(0, (frozenAt ?? now) - s.receivedAt) : s.remainingMs;
        const toAct = props.toAct.includes(s.seat);
        const away = presence(s, props.phase);
        return (
          <div
            key={s.seat}
            class={`seat-card seat-${s.seat}${toAct ? " to-act" : ""}${s.seat === props.mine ? " mine" : ""}${
              away ? " away" : ""
            }`}
            data-seat={s.seat}
            data-status={s.status}
            data-connected={String(s.connected)}
          >
            <span class="name" title={s.name}>{s.name}</span>
            <span
              class={`clock${ticking ? " running" : ""}${ticking && left < 10_000 ? " low" : ""}`}
              role="timer"
              aria-label={`${s.name}'s clock`}
            >
              {s.kind === "builtin" || s.kind === "policy" || s.open ? "" : clockText(left)}
            </span>
            <span class="meta">
              <span class={`dot${s.connected ? " on" : ""}`} />
              {s.open ? "" : KIND[s.kind]}
              {away && <span class="presence">{s.open ? away : ` · ${away}`}</span>}
              {toAct ? " · to act" : ""}
            </span>
          </div>
        );
      })}
      {shown.length < props.seats.length && (
        <div class="seat-card more">
          <span class="meta">{props.seats.length} players in all</span>
        </div>
      )}
    </div>
  );
}
