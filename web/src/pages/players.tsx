/// <reference lib="dom" />
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, league, type PlayerDetail, type PlayerInfo, type RatingPoint, type StoredMatch } from "../api.ts";
import { playerId } from "../../../protocol/players.ts";
import { Chart } from "../chart.tsx";
import { navigate } from "../router.ts";
import { kindOf, nameOf, two, useGames, when } from "./league.tsx";

/**
 * Players: everyone who has sat at a table or holds a token (`/league/players`), and one player (`/league/players/
 * <kind:name>`): what names them, their online rating in each game, its history as a chart, and their latest matches.
 */

const KINDS = ["human", "bot", "llm", "policy", "builtin"];
/** Matches a player's page lists; the rest are a link away. */
const RECENT = 10;

/** What names a player beyond its name: an LLM's model and endpoint, a policy's version, a built-in's argument. */
function details(d: PlayerInfo["details"]): string {
  return [
    d.model && `model ${d.model}`,
    d.endpoint && `at ${d.endpoint}`,
    d.policyVersion !== undefined && `version ${d.policyVersion}`,
    d.strategy && d.strategy !== "" && `strategy ${d.strategy}`,
  ].filter(Boolean).join(" · ");
}

const playerHref = (id: string, game?: string) =>
  `/league/players/${encodeURIComponent(id)}${game ? `?game=${encodeURIComponent(game)}` : ""}`;

export function PlayersPage(props: { query: URLSearchParams }) {
  const kind = props.query.get("kind") ?? "";
  const search = props.query.get("search") ?? "";
  // Players without a rated match (tokens never used, each mutant a Donor Game evolution made) are left out unless
  // asked for: they would bury the ones with a record.
  const all = props.query.get("all") ?? "";
  const asked = { kind, search, ...(all ? {} : { rated: "true" }) };
  const [text, setText] = useState(search);
  const [pages, setPages] = useState<{ players: PlayerInfo[]; next: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    setPages(null);
    setError(null);
    league.players(asked).then(
      (p) => current && setPages(p),
      (e: Error) => current && setError(e.message),
    );
    return () => void (current = false);
  }, [kind, search, all]);
  const filter = (change: Record<string, string>) => {
    const next = new URLSearchParams({ kind, search, all, ...change });
    for (const [k, v] of [...next]) if (!v) next.delete(k);
    navigate(`/league/players${next.size ? `?${next}` : ""}`);
  };
  const more = () =>
    pages?.next && league.players(asked, pages.next).then(
      (p) => setPages({ players: [...pages.players, ...p.players], next: p.next }),
      (e: Error) => setError(e.message),
    );
  return (
    <div class="panel players">
      <h1>Players</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          filter({ search: text.trim() });
        }}
      >
        <label>
          Kind
          <select value={kind} onChange={(e) => filter({ kind: (e.currentTarget as HTMLSelectElement).value })}>
            <option value="">Everyone</option>
            {KINDS.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </label>
        <label>
          Name
          <input
            type="search"
            value={text}
            placeholder="part of a name"
            onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Find</button>
        <label class="check">
          <input
            type="checkbox"
            name="all"
            checked={all !== ""}
            onChange={(e) => filter({ all: (e.currentTarget as HTMLInputElement).checked ? "1" : "" })}
          />
          Also players without a rated match
        </label>
      </form>
      {error && <div class="notice error" role="alert">Could not load the players: {error}</div>}
      {!pages && !error && <p class="muted">Loading…</p>}
      {pages && pages.players.length === 0 && (
        <p class="muted">
          Nobody{" "}
          {kind || search ? "matches these filters" : all ? "has played yet" : "has played a rated match yet"}: a player
          appears when first seated, or when a token is made for it.
        </p>
      )}
      {pages && pages.players.length > 0 && (
        <div class="scroll-x">
          <table class="list player-list">
            <thead>
              <tr>
                <th>Player</th>
                <th>Details</th>
                <th>Rated matches</th>
                <th>Since</th>
              </tr>
            </thead>
            <tbody>
              {pages.players.map((p) => (
                <tr key={p.id} data-player={p.id}>
                  <td>
                    <a href={playerHref(p.id)}>{p.name}</a> <span class="tag">{p.kind}</span>
                  </td>
                  <td class="muted">{details(p.details)}</td>
                  <td>{p.ratedMatches}</td>
                  <td>{when(p.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages?.next && <button type="button" class="more" onClick={more}>More players</button>}
    </div>
  );
}

export function PlayerPage(props: { player: string; query: URLSearchParams }) {
  const games = useGames();
  const [detail, setDetail] = useState<PlayerDetail | null>(null);
  const [recent, setRecent] = useState<StoredMatch[] | null>(null);
  const [points, setPoints] = useState<{ variant: string; points: RatingPoint[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    league.player(props.player).then(setDetail, (e: Error) => setError(e.message));
    api.matches({ player: props.player, limit: String(RECENT) }).then(
      (page) => setRecent(page.matches),
      (e: Error) => setError(e.message),
    );
  }, [props.player]);
  // The chart's game: the one asked for, else the game this player has played most rated, else Kuhn poker.
  const game = props.query.get("game") ?? detail?.ratings[0]?.game ?? (detail ? "kuhn-poker" : null);
  const variant = props.query.get("variant") ?? undefined;
  useEffect(() => {
    if (game === null) return;
    let current = true;
    setPoints(null);
    league.history(props.player, game, variant).then(
      (h) => current && setPoints(h),
      (e: Error) => current && setError(e.message),
    );
    return () => void (current = false);
  }, [props.player, game, variant]);
  const title = (id: string) => games.find((g) => g.id === id)?.title ?? id;
  const d = detail?.player;
  return (
    <div class="panel player" data-player={props.player}>
      <h1>
        {d?.name ?? nameOf(props.player)} <span class="tag">{d?.kind ?? kindOf(props.player)}</span>
      </h1>
      {error && <div class="notice error" role="alert">Could not load this player: {error}</div>}
      {d && (
        <p class="muted player-details">
          {[details(d.details), `first seen ${when(d.createdAt)}`, `${d.ratedMatches} rated match(es)`]
            .filter(Boolean).join(" · ")}
        </p>
      )}
      {detail && detail.ratings.length > 0 && (
        <div class="scroll-x">
          <table class="list player-ratings">
            <thead>
              <tr>
                <th>Game</th>
                <th title="OpenSkill's μ ± 3σ, updated as each rated match ends">Online rating</th>
                <th>Rated matches</th>
                <th>Last rated</th>
              </tr>
            </thead>
            <tbody>
              {detail.ratings.map((r) => (
                <tr key={`${r.game}/${r.variant}`} class={r.game === game ? "selected" : ""}>
                  <td>
                    <a href={`${playerHref(props.player, r.game)}&variant=${encodeURIComponent(r.variant)}`}>
                      {title(r.game)}
                    </a>{" "}
                    <span class="tag">{r.variant}</span>
                  </td>
                  <td>{two(r.mu)} ± {two(3 * r.sigma)}</td>
                  <td>{r.matches}</td>
                  <td>{when(r.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {game !== null && (
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            Chart of
            <select
              value={game}
              onChange={(e) => navigate(playerHref(props.player, (e.currentTarget as HTMLSelectElement).value))}
            >
              {games.map((g) => <option key={g.id} value={g.id}>{g.title}</option>)}
            </select>
          </label>
        </form>
      )}
      {points && points.points.length === 0 && <p class="muted">No rated match of this game yet.</p>}
      {points && points.points.length > 0 && (
        <>
          <p class="chart-caption">
            {points.points.at(-1)!.n} rated match(es) of {title(game!)}
            {points.points[0].n > 1 ? ` (the chart shows the last ${points.points.length})` : ""} · now{" "}
            {two(points.points.at(-1)!.mu)} ± {two(3 * points.points.at(-1)!.sigma)}
          </p>
          <RatingChart points={points.points} />
        </>
      )}
      <h2>Latest matches</h2>
      {recent && recent.length === 0 && <p class="muted">No match yet.</p>}
      {recent && recent.length > 0 && (
        <ul class="recent-matches">
          {recent.map((m) => <RecentMatch key={m.id} match={m} player={props.player} title={title(m.game)} />)}
        </ul>
      )}
      <p>
        <a class="all-matches" href={`/replays?${new URLSearchParams({ player: props.player })}`}>All matches</a>
      </p>
    </div>
  );
}

/** One of a player's matches as the player lived it: against whom, and what the player got. */
function RecentMatch(props: { match: StoredMatch; player: string; title: string }) {
  const { match: m, player } = props;
  const own = m.seats.findIndex((s) => s !== null && playerId(s) === player);
  const others = m.seats.filter((_, i) => i !== own).map((s) => s?.name ?? "(open seat)");
  const result = m.returns && own >= 0 ? m.returns[own] : null;
  return (
    <li data-match={m.id}>
      <a href={`/replays/${m.id}`}>{props.title}</a> vs {others.join(", ") || "itself"} ·{" "}
      {when(m.endedAt ?? m.createdAt)} · {m.endedAt === null
        ? "in play"
        : result === null
        ? m.endReason
        : <span class={result > 0 ? "gain" : result < 0 ? "loss" : ""}>{result > 0 ? `+${result}` : result}</span>}
    </li>
  );
}

/** μ and the conservative μ − 3σ after each rated match, by the match's number (the chart may hold only the last). */
function RatingChart(props: { points: readonly RatingPoint[] }) {
  const { points } = props;
  return (
    <Chart
      class="player-chart"
      label="Online rating μ and μ − 3σ after each rated match"
      options={{
        scales: { x: { time: false } },
        axes: [{ label: "rated match" }, { label: "rating" }],
        series: [
          { label: "match" },
          { label: "μ", stroke: "#2f6fde", width: 2 },
          { label: "μ − 3σ", stroke: "#8a8f98", width: 1, dash: [6, 4] },
        ],
      }}
      data={useMemo(
        () => [points.map((p) => p.n), points.map((p) => p.mu), points.map((p) => p.mu - 3 * p.sigma)],
        [points],
      )}
    />
  );
}
