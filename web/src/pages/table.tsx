/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import { api, type GameInfo, type StoredMatch } from "../api.ts";
import { navigate } from "../router.ts";
import { MatchOver, MatchSession, SeatGone, sessions, type Snapshot } from "../session.ts";
import { ActionBar, fmt } from "../table/action-bar.tsx";
import { Reconnecting, SeatLost } from "../table/connection.tsx";
import { SeatBar } from "../table/seat-bar.tsx";
import { Guard } from "../table/guard.tsx";
import { TABLES } from "../tables/index.ts";
import type { TurnBinding } from "../tables/types.ts";
import { ENDED } from "../words.ts";
import { playAgainHref, seatLabels } from "../result.ts";

/**
 * A live match: a person's seat (`/play/<id>`) or a spectator's chair (`/watch/<id>`). A seat comes from
 * this page's session (created, queued, invited) or, after a reload or in a reopened tab, from the
 * reconnection token this browser kept; a spectator joins the match's room and sees only its public state.
 */
export function TablePage(props: { matchId: string; watch: boolean }) {
  const { matchId, watch } = props;
  const [session, setSession] = useState<MatchSession | null>(() => sessions.get(matchId) ?? null);
  const [problem, setProblem] = useState<string | SeatGone | MatchOver | null>(null);
  const [snapshot, setSnapshot] = useState<Snapshot | null>(null);
  const [info, setInfo] = useState<GameInfo | undefined>();

  useEffect(() => {
    if (session) return;
    let cancelled = false;
    const found = watch ? spectate(matchId) : MatchSession.resume(matchId);
    found.then(
      (s) => {
        if (cancelled) return;
        if (s instanceof MatchSession) setSession(s);
        else setProblem(s ?? (watch ? "gone" : "no-seat"));
      },
      (e: Error) => !cancelled && setProblem(e instanceof SeatGone ? e : e.message),
    );
    return () => void (cancelled = true);
  }, [matchId, watch]);

  useEffect(() => {
    if (!session) return;
    const unsubscribe = session.subscribe(setSnapshot);
    return () => {
      unsubscribe();
      // Leaving the table: a finished match's connection, or a spectator's, has nothing more to carry. A seat in play
      // keeps its room, to come back to.
      if (watch || session.current.phase === "ended") session.leave();
    };
  }, [session]);
  useEffect(() => {
    if (!snapshot?.game) return;
    api.games().then((games) => setInfo(games.find((g) => g.id === snapshot.game)));
  }, [snapshot?.game]);

  if (problem instanceof MatchOver) return <Finished matchId={matchId} seat={problem.seat} />;
  if (problem instanceof SeatGone) {
    return <SeatLost matchId={matchId} seat={problem.seat} why="refused" />;
  }
  if (problem === "no-seat" || problem === "gone") {
    return (
      <div class="panel">
        <h1>{problem === "gone" ? "This match is not being played now" : "No seat of yours here"}</h1>
        <p class="muted">
          {problem === "gone"
            ? "It has ended or never existed. Finished matches are in the replays."
            : "This browser holds no seat in this match (a seat is kept only while the server holds it for you)."}
        </p>
        <p>
          {problem === "no-seat" && <a href={`/watch/${matchId}`}>Watch it</a>}
          {problem === "no-seat" && " · "}
          <a href={`/replays/${matchId}`}>Open its replay</a> · <a href="/">Back to the lobby</a>
        </p>
      </div>
    );
  }
  if (problem) return <div class="notice error" role="alert">Could not open the match: {problem}</div>;
  if (!snapshot) return <p class="muted">Connecting to the match…</p>;

  const seated = snapshot.seat !== null && !watch;
  const released = seated &&
    (snapshot.connection === "released" || snapshot.seats[snapshot.seat!]?.status === "DISCONNECTED");
  const lost = released || snapshot.connection === "elsewhere";

  return (
    <div
      class="table-page"
      data-match={snapshot.matchId}
      data-phase={snapshot.phase}
      data-connection={snapshot.connection}
    >
      <section>
        <header class="table-header">
          <h1>
            {info?.title ?? snapshot.game}
            <span class="tag">{snapshot.variant}</span>
            {watch && <span class="tag">spectating</span>}
          </h1>
        </header>
        {lost
          // What the page last saw of the table is stale once the seat is gone: only where it went is shown.
          ? (
            <SeatLost
              matchId={snapshot.matchId}
              seat={snapshot.seat}
              why={released ? "released" : "elsewhere"}
              holdMs={snapshot.holdMs}
            />
          )
          : <Table snapshot={snapshot} session={session!} seated={seated} />}
      </section>
      <aside class="side">
        <div class="panel match-info">
          <h2>Match</h2>
          <p class="muted">
            <code>{snapshot.matchId}</code>
          </p>
          {!watch && !lost && snapshot.phase !== "ended" && (
            <p>
              <a href={`/watch/${snapshot.matchId}`} target="_blank">Spectator link</a>
            </p>
          )}
          {snapshot.phase === "ended" && (
            <p>
              <a href={`/replays/${snapshot.matchId}${seated ? `?seat=${snapshot.seat}` : ""}`}>
                Step through the replay
              </a>
            </p>
          )}
          <p>
            <a href="/">Back to the lobby</a>
          </p>
        </div>
        {(snapshot.start?.rules ?? info?.summary) && (
          <details class="panel rules" open={!seated}>
            <summary>
              <h2>Rules</h2>
            </summary>
            <p class="rules-text">{snapshot.start?.rules ?? info?.summary}</p>
          </details>
        )}
      </aside>
    </div>
  );
}

/** The seats, whose turn it is, the board with its controls, and the result: the table while the seat is the page's. */
function Table(props: { snapshot: Snapshot; session: MatchSession; seated: boolean }) {
  const { snapshot, session, seated } = props;
  const table = TABLES[snapshot.game];
  const obs = seated ? snapshot.view : snapshot.publicObservation;
  const names = snapshot.seats.map((s) => s.name);
  const connected = snapshot.connection === "connected";
  // A turn stays on the table while the connection is re-established (its controls disabled).
  const open = connected || snapshot.connection === "reconnecting";
  const turn: TurnBinding | undefined = seated && open && snapshot.turn && snapshot.phase === "playing"
    ? { legal: snapshot.turn.legal, submit: (action) => session.act(action) }
    : undefined;
  return (
    <>
      <SeatBar
        seats={snapshot.seats}
        toAct={snapshot.toAct}
        mine={seated ? snapshot.seat : null}
        phase={snapshot.phase}
        frozenAt={connected ? undefined : snapshot.droppedAt ?? performance.now()}
      />
      {snapshot.connection === "reconnecting" && snapshot.phase !== "ended"
        ? (
          <Reconnecting
            droppedAt={snapshot.droppedAt!}
            holdMs={snapshot.restarting ? undefined : snapshot.holdMs}
            restarting={snapshot.restarting}
          />
        )
        : snapshot.phase === "playing" && <TurnBanner snapshot={snapshot} seated={seated} />}
      {snapshot.phase === "waiting" && <Waiting snapshot={snapshot} />}
      {snapshot.notice && (
        <div class={`notice ${snapshot.notice.kind}`} role="alert" data-notice>
          {snapshot.notice.text}
          <button type="button" class="dismiss" aria-label="Dismiss" onClick={() => session.dismissNotice()}>
            ×
          </button>
        </div>
      )}
      {/* While the connection is down every control of the table is disabled, the board's own included. */}
      <fieldset
        class="board-area panel"
        disabled={seated && !connected}
        data-turn-seq={turn && connected ? snapshot.turn!.seq : ""}
      >
        {obs !== null && obs !== undefined && table
          ? (
            <Guard>
              <table.Board obs={obs as never} seat={seated ? snapshot.seat : null} names={names} turn={turn} />
            </Guard>
          )
          : <p class="muted">The table is set once every seat is taken.</p>}
        {turn && table && <ActionBar turn={turn} table={table} obs={obs} />}
      </fieldset>
      {snapshot.phase === "ended" && (
        <Result
          returns={snapshot.end?.returns ?? snapshot.publicReturns}
          reason={snapshot.end?.reason ?? snapshot.reason}
          names={snapshot.seats.map((s) => s.name)}
          seat={seated ? snapshot.seat : null}
          again={playAgainHref(snapshot, seated)}
        />
      )}
    </>
  );
}

async function spectate(matchId: string): Promise<MatchSession | null> {
  const live = (await api.live()).find((m) => m.id === matchId);
  return live ? MatchSession.spectate(live.game, matchId) : null;
}

function Waiting(props: { snapshot: Snapshot }) {
  const { invite } = props.snapshot;
  const link = invite ? `${location.origin}/invite/${invite}` : null;
  const [copied, setCopied] = useState(false);
  return (
    <div class="panel waiting-panel">
      <div class="waiting">
        <div class="spinner" aria-hidden="true" />
        <strong>Waiting for players to take their seats…</strong>
      </div>
      {link && (
        <p class="invite">
          Share this invite link: <input type="text" readOnly value={link} aria-label="Invite link" size={48} />{" "}
          <button
            type="button"
            onClick={() => navigator.clipboard?.writeText(link).then(() => setCopied(true), () => setCopied(false))}
          >
            {copied ? "Copied" : "Copy"}
          </button>
        </p>
      )}
    </div>
  );
}

/** Whose move it is: the page's own (with the retries left once an action was refused) or whom it waits for. */
function TurnBanner(props: { snapshot: Snapshot; seated: boolean }) {
  const { snapshot, seated } = props;
  const turn = seated ? snapshot.turn : undefined;
  if (turn) {
    const retries = turn.retriesLeft < (snapshot.start?.conduct.retries ?? turn.retriesLeft)
      ? ` · ${turn.retriesLeft} ${turn.retriesLeft === 1 ? "retry" : "retries"} left`
      : "";
    return <div class="turn-banner" role="status">Your turn{retries}</div>;
  }
  const waitingFor = snapshot.toAct.filter((s) => !seated || s !== snapshot.seat).map((s) => snapshot.seats[s]?.name);
  const waiting = waitingFor.length ? `Waiting for ${waitingFor.join(", ")}…` : "…";
  return (
    <div class="turn-banner waiting-for" role="status" data-moved={String(seated && snapshot.moved)}>
      {seated && snapshot.moved ? `Your move is in. ${waiting}` : waiting}
    </div>
  );
}

/** How a match ended, said to `seat` (null: to a spectator). */
function Result(
  props: { returns: readonly number[]; reason: string; names: readonly string[]; seat: number | null; again: string },
) {
  const { returns, reason, names, seat, again } = props;
  const best = Math.max(...returns);
  const mine = seat !== null ? returns[seat] : undefined;
  const labels = seatLabels(returns.map((_, seat) => names[seat] ?? `Seat ${seat}`));
  return (
    <div class="panel result" role="status" data-result>
      <h2>
        {mine === undefined
          ? "Match over"
          : mine === best && returns.filter((r) => r === best).length === 1
          ? "You won"
          : mine === best
          ? "A tie"
          : "Match over"}
      </h2>
      <p class="muted">The match was {ENDED[reason as keyof typeof ENDED] ?? reason}.</p>
      <div class="returns">
        {returns.map((r, seat) => (
          <span class={r === best ? "winner" : ""} data-seat={seat} data-return={r}>
            {labels[seat]}: {r > 0 ? "+" : ""}
            {fmt(r)}
          </span>
        ))}
      </div>
      <p>
        <button type="button" class="primary" onClick={() => navigate(again)}>
          Play again
        </button>
      </p>
    </div>
  );
}

/** A match of this browser's seat that has ended (a reload after the result): the result, as the store has it. */
function Finished(props: { matchId: string; seat: number | null }) {
  const { matchId, seat } = props;
  const [match, setMatch] = useState<StoredMatch | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [title, setTitle] = useState<string | undefined>();
  useEffect(() => {
    let current = true;
    api.match(matchId).then((m) => current && setMatch(m), (e: Error) => current && setProblem(e.message));
    return () => void (current = false);
  }, [matchId]);
  useEffect(() => {
    if (match) api.games().then((games) => setTitle(games.find((g) => g.id === match.game)?.title));
  }, [match?.game]);
  if (problem) return <div class="notice error" role="alert">Could not open the match's result: {problem}</div>;
  if (!match) return <p class="muted">Loading the match's result…</p>;
  return (
    <div class="table-page" data-match={matchId} data-phase="ended">
      <section>
        <header class="table-header">
          <h1>
            {title ?? match.game}
            <span class="tag">{match.variant}</span>
          </h1>
        </header>
        <Result
          returns={match.returns ?? []}
          reason={match.endReason ?? "completed"}
          names={match.seats.map((s, i) => s?.name ?? `Seat ${i}`)}
          seat={seat}
          again="/"
        />
      </section>
      <aside class="side">
        <div class="panel match-info">
          <h2>Match</h2>
          <p class="muted">
            <code>{matchId}</code>
          </p>
          <p>
            <a href={`/replays/${matchId}${seat !== null ? `?seat=${seat}` : ""}`}>Step through the replay</a>
          </p>
          <p>
            <a href="/">Back to the lobby</a>
          </p>
        </div>
      </aside>
    </div>
  );
}
