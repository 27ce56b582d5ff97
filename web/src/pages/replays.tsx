/// <reference lib="dom" />
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, type Decision, type GameInfo, type ReplayView, type StoredMatch } from "../api.ts";
import { useDisplayName } from "../name.ts";
import { navigate } from "../router.ts";
import { fmt } from "../table/action-bar.tsx";
import { Guard } from "../table/guard.tsx";
import { TABLES } from "../tables/index.ts";
import { DID, ENDED } from "../words.ts";

/** Finished and running matches from the replay store (`/replays`), and one match step by step (`/replays/<id>`). */

export function ReplayList(props: { query: URLSearchParams }) {
  const game = props.query.get("game") ?? "";
  const participant = props.query.get("participant") ?? "";
  // A player as the league names them (`bot:alpha`), from a player's page.
  const player = props.query.get("player") ?? "";
  const [games, setGames] = useState<readonly GameInfo[]>([]);
  const [pages, setPages] = useState<{ matches: StoredMatch[]; next: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [name, setName] = useState(participant);
  // The name this browser plays under: its own matches are those with a seat of that name.
  const me = useDisplayName();
  // Answers for filters the page has since left are dropped: the list shows only the filters in the URL.
  const filters = useRef("");

  useEffect(() => void api.games().then(setGames, (e: Error) => setError(e.message)), []);
  useEffect(() => {
    const key = filters.current = `${game}\n${participant}\n${player}`;
    setPages(null);
    setError(null);
    setLoadingMore(false);
    api.matches({ game, participant, player }).then(
      (page) => filters.current === key && setPages(page),
      (e: Error) => filters.current === key && setError(e.message),
    );
  }, [game, participant, player]);

  const filter = (change: Record<string, string>) => {
    const next = new URLSearchParams({ game, participant, player, ...change });
    for (const [k, v] of [...next]) if (!v) next.delete(k);
    navigate(`/replays${next.size ? `?${next}` : ""}`);
  };
  const more = () => {
    if (!pages?.next || loadingMore) return;
    const key = filters.current;
    setLoadingMore(true);
    setError(null);
    api.matches({ game, participant, player }, pages.next).then(
      (page) => {
        if (filters.current !== key) return;
        setPages({ matches: [...pages.matches, ...page.matches], next: page.next });
        setLoadingMore(false);
      },
      (e: Error) => {
        if (filters.current !== key) return;
        setError(e.message);
        setLoadingMore(false);
      },
    );
  };
  const title = (id: string) => games.find((g) => g.id === id)?.title ?? id;

  return (
    <div class="panel replays">
      <h1>Replays</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          filter({ participant: name.trim() });
        }}
      >
        <label>
          Game
          <select value={game} onChange={(e) => filter({ game: (e.currentTarget as HTMLSelectElement).value })}>
            <option value="">All games</option>
            {games.map((g) => <option key={g.id} value={g.id}>{g.title}</option>)}
          </select>
        </label>
        <label>
          Participant
          <input
            type="text"
            value={name}
            placeholder="a player's name"
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        {player && (
          <span class="tag player-filter">
            <a href={`/league/players/${encodeURIComponent(player)}`}>{player}</a>{" "}
            <button
              type="button"
              class="link"
              aria-label="Show every player's matches"
              onClick={() => filter({ player: "" })}
            >
              ×
            </button>
          </span>
        )}
        <button type="submit">Filter</button>
        <button
          type="button"
          class="my-matches"
          aria-pressed={participant === me}
          onClick={() => {
            setName(me);
            filter({ participant: me });
          }}
        >
          My matches
        </button>
      </form>
      {error && <div class="notice error" role="alert">Could not load the matches: {error}</div>}
      {!pages && !error && <p class="muted">Loading…</p>}
      {pages && pages.matches.length === 0 && <p class="muted">No match matches these filters.</p>}
      {pages && pages.matches.length > 0 && (
        <table class="list replay-list">
          <thead>
            <tr>
              <th>Game</th>
              <th>Players</th>
              <th>Result</th>
              <th>Played</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pages.matches.map((m) => (
              <tr key={m.id} data-match={m.id}>
                <td>
                  {title(m.game)} <span class="tag">{m.variant}</span>
                </td>
                <td>{players(m)}</td>
                <td>{m.endedAt ? <Outcome match={m} /> : <span class="tag">in play</span>}</td>
                <td>{when(m.endedAt ?? m.createdAt)}</td>
                <td>
                  <a href={`/replays/${m.id}`}>{m.endedAt ? "Replay" : "Open"}</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages?.next && (
        <button type="button" onClick={more} disabled={loadingMore}>{loadingMore ? "Loading…" : "More matches"}</button>
      )}
    </div>
  );
}

/** Seat names; a seat nobody took (a private match aborted before its invite was used) is an open seat. */
function seatNames(m: StoredMatch): string[] {
  return m.seats.map((s) => s?.name ?? "(open seat)");
}

function players(m: StoredMatch): string {
  const names = seatNames(m);
  return names.length > 4 ? `${names.slice(0, 3).join(" · ")} and ${names.length - 3} more` : names.join(" · ");
}

/** How a finished match ended: its returns and, when it did not end normally, why. */
function Outcome(props: { match: StoredMatch }) {
  const { match } = props;
  const why = ending(match);
  return (
    <>
      {match.returns?.map(fmt).join(" : ")}
      {why && <span class="tag ending" data-end-reason={match.endReason}>{why}</span>}
    </>
  );
}

/** Why a match ended early, in words (null for one played to the end): the reason, whose conduct, what was never played. */
function ending(m: StoredMatch): string | null {
  if (m.endReason === null || m.endReason === "completed") return null;
  const names = seatNames(m);
  const culprit = m.culprit === null ? "" : `: ${names[m.culprit]} ${DID[m.statuses[m.culprit]] ?? "ended it"}`;
  const unplayed = m.steps === 0 ? " before any move" : "";
  return `${ENDED[m.endReason]}${unplayed}${culprit}`;
}

function when(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}

/** `/replays/<id>?seat=<n|public|all>`: the match re-simulated, one turn at a time, from the chosen view. */
export function ReplayViewer(props: { id: string; query: URLSearchParams }) {
  const seat = props.query.get("seat") ?? "all";
  const [view, setView] = useState<ReplayView | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [index, setIndex] = useState(0);
  const [title, setTitle] = useState<string | undefined>();

  useEffect(() => {
    let current = true;
    setError(null);
    api.view(props.id, seat).then((v) => {
      if (!current) return;
      setView(v);
      setIndex((i) => Math.min(i, v.turns.length));
      api.games().then((games) => current && setTitle(games.find((g) => g.id === v.match.game)?.title), () => {});
    }, (e: Error) => current && setError(e));
    return () => void (current = false);
  }, [props.id, seat]);

  const last = view ? view.turns.length : 0;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest("input, select, textarea")) return;
      const to = e.key === "ArrowRight"
        ? index + 1
        : e.key === "ArrowLeft"
        ? index - 1
        : e.key === "Home"
        ? 0
        : e.key === "End"
        ? last
        : null;
      if (to === null) return;
      e.preventDefault();
      setIndex(Math.max(0, Math.min(last, to)));
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [index, last]);

  if (error) return <ReplayRefused id={props.id} seat={seat} error={error} />;
  if (!view) return <p class="muted">Re-simulating the match…</p>;

  const { match } = view;
  // Drawn from the view as fetched: while another seat's view loads, the URL already names that seat.
  const shown = String(view.viewer);
  const table = TABLES[match.game];
  const names = seatNames(match);
  const why = ending(match);
  const atEnd = index >= last;
  const turn = atEnd ? undefined : view.turns[index];
  const observation = atEnd ? view.final.observation : turn!.observation;
  const choose = (value: string) => navigate(`/replays/${props.id}?seat=${value}`, true);

  return (
    <div class="replay-viewer" data-match={match.id}>
      <div class="panel">
        <h1>
          {title ?? match.game} <span class="tag">{match.variant}</span> <span class="tag">replay</span>
        </h1>
        <p class="muted" data-summary>
          {names.join(" · ")}
          {match.returns && ` — final ${match.returns.map(fmt).join(" : ")}`}
          {!match.endedAt && " — still being played"}
          {why && ` — ${why}`}
        </p>
        <div class="replay-controls">
          <label>
            View{" "}
            <select value={seat} onChange={(e) => choose((e.currentTarget as HTMLSelectElement).value)}>
              <option value="all">Full view (everything)</option>
              <option value="public">Public (spectators)</option>
              {names.map((n, i) => <option key={i} value={String(i)}>Seat {i}: {n}</option>)}
            </select>
          </label>
          <button type="button" aria-label="First turn" onClick={() => setIndex(0)} disabled={index === 0}>«</button>
          <button type="button" aria-label="Previous turn" onClick={() => setIndex(index - 1)} disabled={index === 0}>
            ◀
          </button>
          <input
            type="range"
            min={0}
            max={last}
            value={index}
            aria-label="Turn"
            onInput={(e) => setIndex(Number((e.currentTarget as HTMLInputElement).value))}
          />
          <button type="button" aria-label="Next turn" onClick={() => setIndex(index + 1)} disabled={atEnd}>▶</button>
          <button type="button" aria-label="Last turn" onClick={() => setIndex(last)} disabled={atEnd}>»</button>
          <span class="turn-counter" data-turn={index}>
            {last === 0 ? "No turn was played" : atEnd ? `End (${last} turns)` : `Turn ${index + 1} of ${last}`}
          </span>
        </div>
        <p class="muted">Keys: ← → step, Home/End jump.</p>
      </div>
      <div class="panel">
        <Guard>
          {shown === "all"
            ? <FullView observation={observation} names={names} table={table} />
            : table && (
              <table.Board obs={observation as never} seat={shown === "public" ? null : Number(shown)} names={names} />
            )}
        </Guard>
      </div>
      {turn && <TurnLog turn={turn} names={names} />}
      {atEnd && match.returns && (
        <div class="panel result">
          <h2>Final returns</h2>
          <div class="returns">
            {match.returns.map((r, i) => <span key={i} data-seat={i}>{names[i]}: {fmt(r)}</span>)}
          </div>
        </div>
      )}
      <details class="panel rules">
        <summary>
          <h2>Rules</h2>
        </summary>
        <p class="rules-text">{view.rules}</p>
      </details>
    </div>
  );
}

/** Why a replay cannot be shown, as the server said; a live match offers what spectators see instead. */
function ReplayRefused(props: { id: string; seat: string; error: Error }) {
  const { id, seat, error } = props;
  const code = error instanceof ApiError ? error.code : "";
  const live = code === "match_live";
  return (
    <div class="panel replay-refused" data-refused={code}>
      <h1>Replay {id}</h1>
      {live
        ? (
          <div class="notice info" role="alert">
            This match is still being played: until it ends, only what its spectators see can be shown.
          </div>
        )
        : <div class="notice error" role="alert">{error.message}</div>}
      <p>
        {live && <a href={`/watch/${id}`}>Watch it live</a>}
        {live && " · "}
        {seat !== "public" && code !== "unknown_match" && (
          <a href={`/replays/${id}?seat=public`}>Open the public view</a>
        )}
        {seat !== "public" && code !== "unknown_match" && " · "}
        <a href="/replays">All replays</a>
      </p>
    </div>
  );
}

/** Every seat's view side by side (for a handful of seats), or the public one where there are many. */
function FullView(props: {
  observation: unknown;
  names: readonly string[];
  table: (typeof TABLES)[string] | undefined;
}) {
  const { table, names } = props;
  const views = props.observation as { public: unknown; seats: unknown[] };
  if (!table) return null;
  if (views.seats.length > 4) return <table.Board obs={views.public as never} seat={null} names={names} />;
  return (
    <div class="views">
      {views.seats.map((obs, s) => (
        <section key={s} class="seat-view" data-seat={s}>
          <h3>{names[s]}'s view</h3>
          <table.Board obs={obs as never} seat={s} names={names} />
        </section>
      ))}
    </div>
  );
}

function TurnLog(props: { turn: ReplayView["turns"][number]; names: readonly string[] }) {
  const { turn, names } = props;
  const decisions: Decision[] = turn.decisions ? [...turn.decisions] : turn.decision ? [turn.decision] : [];
  if (decisions.length === 0 && turn.toAct.length === 0) return null;
  return (
    <div class="panel turn-log">
      <h2>On this turn</h2>
      <p class="muted">To act: {turn.toAct.map((s) => names[s]).join(", ")}</p>
      {decisions.length > 0 && (
        <ul class="decision-log">
          {decisions.map((d) => (
            <li key={d.seq}>
              {d.seat !== undefined ? `${names[d.seat]}: ` : "You: "}
              {d.action === null
                ? <em>no move{d.error ? ` (${d.error.message})` : ""}</em>
                : <code>{describe(d.action)}</code>}
              {d.defaulted && <span class="tag">played for them ({d.defaulted})</span>}
              {d.attempts.length > 0 && <span class="tag">{d.attempts.length} refused attempts</span>}
              <span class="muted">in {(d.latencyMs / 1000).toFixed(1)} s</span>
            </li>
          ))}
        </ul>
      )}
      {turn.rewards && <p class="muted">Rewards: {turn.rewards.map(fmt).join(" : ")}</p>}
      {turn.reward !== undefined && turn.reward !== null && <p class="muted">Your reward: {fmt(turn.reward)}</p>}
    </div>
  );
}

/** An action in words: its type, then its fields (`raise 300`, `propose 1 0 2`). */
function describe(action: unknown): string {
  if (action === null || typeof action !== "object") return String(action);
  const { type, ...rest } = action as Record<string, unknown>;
  const parts = Object.values(rest).map((v) =>
    Array.isArray(v)
      ? v.join(" ")
      : typeof v === "object" && v !== null
      ? Object.entries(v).map(([k, n]) => `${n} ${k}`).join(", ")
      : String(v)
  );
  return [String(type), ...parts].join(" ");
}
