/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import { api } from "../api.ts";
import { ENDED } from "../words.ts";

/** What the table says while its seat's connection is down, and once the seat is gone. */

/**
 * The connection dropped: the session is reconnecting while the server holds the seat (`holdMs` from the drop), or
 * the server is restarting (`restarting`): it holds the seat again once it is back.
 */
export function Reconnecting(props: { droppedAt: number; holdMs?: number; restarting?: boolean }) {
  const [now, setNow] = useState(performance.now());
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const timer = setInterval(() => setNow(performance.now()), 1000);
    const network = () => setOnline(navigator.onLine);
    addEventListener("online", network);
    addEventListener("offline", network);
    return () => {
      clearInterval(timer);
      removeEventListener("online", network);
      removeEventListener("offline", network);
    };
  }, []);
  const left = props.holdMs === undefined ? null : Math.ceil((props.holdMs - (now - props.droppedAt)) / 1000);
  return (
    <div class="turn-banner reconnecting" role="status" data-reconnecting>
      <div class="spinner" aria-hidden="true" />
      <span>
        {!online
          ? "You are offline. Reconnecting when the network is back…"
          : props.restarting
          ? "The server is restarting. Your seat is kept: you get it back as soon as the server is up again…"
          : "The connection to the match dropped. Reconnecting…"}
        {left !== null && left > 0 && ` The server holds your seat for ${left} s more.`}
      </span>
    </div>
  );
}

/** What the server plays for a released seat under the default conduct. */
const DEFAULTS = "its default moves (the first legal action of each turn)";

/**
 * The seat is gone: released after the page was away past its hold (the server then plays it by its
 * conduct rules), refused when a reopened page asked for it back, or taken over by another tab. The
 * server's own record says what became of it.
 */
export function SeatLost(
  props: { matchId: string; seat: number | null; why: "released" | "refused" | "elsewhere"; holdMs?: number },
) {
  const { matchId, seat, why } = props;
  const [fate, setFate] = useState<Awaited<ReturnType<typeof api.fate>> | null>(null);
  useEffect(() => {
    if (why === "elsewhere" || seat === null) return;
    let current = true;
    let tries = 0;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const ask = () =>
      api.fate(matchId, seat).then((f) => current && setFate(f), () => {
        // A match that ended a moment ago may not be in the store yet: ask again shortly, a few times.
        if (current && ++tries < 5) retry = setTimeout(ask, 1000 * tries);
      });
    ask();
    return () => {
      current = false;
      clearTimeout(retry);
    };
  }, [matchId, seat, why]);
  const links = (
    <p>
      {(!fate || !fate.ended) && <a href={`/watch/${matchId}`}>Watch the match</a>}
      {(!fate || !fate.ended) && " · "}
      <a href={`/replays/${matchId}`}>Its replay</a> · <a href="/">Back to the lobby</a>
    </p>
  );
  if (why === "elsewhere") {
    return (
      <div class="panel seat-lost" role="alert" data-seat-lost="elsewhere">
        <h2>Your seat is being played in another tab</h2>
        <p>Another tab or window of this browser took the seat over. Reload this page to play it here again.</p>
        {links}
      </div>
    );
  }
  if (fate?.ended && fate.status !== "DISCONNECTED") {
    return (
      <div class="panel seat-lost" role="alert" data-seat-lost="ended">
        <h2>This match is over</h2>
        <p>It ended while you were away ({ENDED[fate.ended.endReason ?? "completed"]}).</p>
        {links}
      </div>
    );
  }
  if (why === "refused" && fate && !fate.ended && fate.status === "ACTIVE") {
    // The server refused this browser's token for a seat it has not released: it lost the connection (a restart).
    return (
      <div class="panel seat-lost" role="alert" data-seat-lost="detached">
        <h2>This page cannot take your seat back</h2>
        <p>
          The server no longer knows this browser's connection to the seat (it may have restarted). Once the seat's hold
          is over it plays the seat with {DEFAULTS}, unless the match's rules end the match.
        </p>
        {links}
      </div>
    );
  }
  const hold = props.holdMs === undefined ? "" : ` (${props.holdMs / 1000} s)`;
  return (
    <div class="panel seat-lost" role="alert" data-seat-lost="released">
      <h2>Your seat was released</h2>
      <p>
        You were away longer than the server holds a seat for a player who drops{hold}, so it stopped waiting for you.
      </p>
      <p>{consequence(fate)}</p>
      {links}
    </div>
  );
}

/** What the server did with a released seat, as far as this page knows. */
function consequence(fate: Awaited<ReturnType<typeof api.fate>> | null): string {
  if (!fate) return `From then on the server plays your seat with ${DEFAULTS}, unless its rules end the match.`;
  if (!fate.ended) return `The match goes on: the server plays your seat with ${DEFAULTS} until the match ends.`;
  if (fate.ended.endReason === "forfeit") return "You forfeited the match.";
  if (fate.ended.endReason === "aborted") return "The match was aborted.";
  return `The server played your seat with ${DEFAULTS} to the end of the match.`;
}
