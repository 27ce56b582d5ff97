/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import { api, type LiveMatch } from "../api.ts";
import { displayName } from "../name.ts";
import { navigate } from "../router.ts";
import { MatchSession, queue } from "../session.ts";

/**
 * The ways to a seat, each ending on the match's own page (`/play/<id>`): a new match against a built-in
 * strategy or a registered policy, or with open seats for an invite, the public queue, and an invite link.
 */

function Failed(props: { what: string; message: string }) {
  return (
    <div class="panel">
      <h1>{props.what}</h1>
      <div class="notice error" role="alert">{props.message}</div>
      <p>
        <a href="/">Back to the lobby</a>
      </p>
    </div>
  );
}

/**
 * `/play/new/<game>?variant&vs=<strategy | policy:<name>[@<version>]>` (every other seat that built-in strategy
 * or registered policy) or `/play/private/<game>?variant` (open).
 */
export function NewMatch(props: { game: string; query: URLSearchParams; open: boolean }) {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let cancelled = false;
    (async () => {
      const info = (await api.games()).find((g) => g.id === props.game);
      if (!info) throw new Error(`no game \`${props.game}\``);
      const variant = props.query.get("variant") ?? info.defaultVariant;
      const seats = info.variants[variant]?.seats;
      if (seats === undefined) {
        throw new Error(
          `${info.title} has no variant \`${variant}\`; variants: ${Object.keys(info.variants).join(", ")}`,
        );
      }
      const vs = props.query.get("vs") ?? info.strategies[0]?.name ?? "random";
      // A policy's seat spec goes to the server as it is; anything else names a built-in strategy.
      const opponent = props.open ? "open" : vs.startsWith("policy:") ? vs : `strategy:${vs}`;
      const opponents = Object.fromEntries(Array.from({ length: seats - 1 }, (_, i) => [String(i + 1), opponent]));
      const session = await MatchSession.create(props.game, { variant, name: displayName(), opponents });
      if (!cancelled) navigate(`/play/${session.current.matchId}`, true);
    })().catch((e: Error) => !cancelled && setError(e.message));
    return () => void (cancelled = true);
  }, [props.game, props.query.toString(), props.open]);
  if (error) return <Failed what="Could not start the match" message={error} />;
  return <p class="muted">Setting the table…</p>;
}

/** `/play/queue/<game>?variant`: waits with the bots and people in the public queue. */
export function QueuePage(props: { game: string; variant: string | undefined }) {
  const [fillAt, setFillAt] = useState<number | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    let leave: (() => void) | undefined;
    let cancelled = false;
    queue(props.game, props.variant, displayName(), (f) => setFillAt(f.fillAt)).then((waiting) => {
      leave = waiting.leave;
      if (cancelled) return leave();
      waiting.matched.then(
        (session) => !cancelled && navigate(`/play/${session.current.matchId}`, true),
        (e: Error) => !cancelled && setError(e.message),
      );
    }, (e: Error) => setError(e.message));
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => {
      cancelled = true;
      clearInterval(timer);
      leave?.();
    };
  }, [props.game, props.variant]);
  if (error) return <Failed what="Could not join the queue" message={error} />;
  return (
    <div class="panel queue-panel">
      <h1>Looking for opponents</h1>
      <div class="waiting">
        <div class="spinner" aria-hidden="true" />
        <span>
          Waiting in the public queue for {props.game}
          {props.variant ? ` (${props.variant})` : ""}…
        </span>
      </div>
      {fillAt && (
        <p class="muted">
          If nobody comes, built-in players fill the table in {Math.max(0, Math.ceil((fillAt - now) / 1000))} s.
        </p>
      )}
      <p>
        <a href="/">Leave the queue</a>
      </p>
    </div>
  );
}

/** `/invite/<code>`: what the invite is for, and the seat it offers. */
export function InvitePage(props: { code: string }) {
  const [match, setMatch] = useState<LiveMatch | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [joining, setJoining] = useState(false);
  useEffect(() => {
    api.invite(props.code).then(setMatch, (e: Error) => setError(e.message));
  }, [props.code]);
  if (error) return <Failed what="This invite cannot be used" message={error} />;
  if (!match) return <p class="muted">Opening the invite…</p>;
  const take = () => {
    setJoining(true);
    MatchSession.invited(match.game, match.id, props.code, displayName()).then(
      (session) => navigate(`/play/${session.current.matchId}`, true),
      (e: Error) => {
        setJoining(false);
        setError(e.message);
      },
    );
  };
  const seated = match.participants.filter((p) => !match.openSeats.includes(p.seat));
  return (
    <div class="panel invite-panel">
      <h1>
        You are invited to {match.title} <span class="tag">{match.variant}</span>
      </h1>
      <p>
        {seated.length ? `${seated.map((p) => p.name).join(", ")} ${seated.length === 1 ? "is" : "are"} waiting. ` : ""}
        {match.openSeats.length} open {match.openSeats.length === 1 ? "seat" : "seats"}.
      </p>
      {match.openSeats.length > 0
        ? (
          <button type="button" class="primary" disabled={joining} onClick={take}>
            {joining ? "Taking the seat…" : `Take a seat as ${displayName()}`}
          </button>
        )
        : (
          <p class="muted">
            Every seat is taken. <a href={`/watch/${match.id}`}>Watch the match</a>
          </p>
        )}
    </div>
  );
}
