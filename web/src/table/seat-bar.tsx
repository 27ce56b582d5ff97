/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import type { SeatSnapshot } from "../session.ts";

/** The seats: who sits where, who is connected, whose turn it is, and each clock counting down. */

function clockText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

const KIND: Readonly<Record<string, string>> = { human: "person", bot: "bot", llm: "LLM", builtin: "built-in" };

export function SeatBar(props: { seats: readonly SeatSnapshot[]; toAct: readonly number[]; mine: number | null }) {
  const [now, setNow] = useState(performance.now());
  const running = props.seats.some((s) => s.running);
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
        const left = s.running ? s.remainingMs - (now - s.receivedAt) : s.remainingMs;
        const toAct = props.toAct.includes(s.seat);
        return (
          <div
            key={s.seat}
            class={`seat-card seat-${s.seat}${toAct ? " to-act" : ""}${s.seat === props.mine ? " mine" : ""}`}
            data-seat={s.seat}
          >
            <span class="name" title={s.name}>{s.name}</span>
            <span
              class={`clock${s.running ? " running" : ""}${s.running && left < 10_000 ? " low" : ""}`}
              aria-label={`${s.name}'s clock`}
            >
              {s.kind === "builtin" ? "" : clockText(left)}
            </span>
            <span class="meta">
              <span class={`dot${s.connected ? " on" : ""}`} />
              {KIND[s.kind] ?? s.kind}
              {s.status !== "ACTIVE" && s.status !== "DONE" ? ` · ${s.status.toLowerCase()}` : ""}
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
