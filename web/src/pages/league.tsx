/// <reference lib="dom" />
import { useEffect, useMemo, useState } from "preact/hooks";
import { Chart } from "../chart.tsx";
import {
  type Board,
  type EvolutionInfo,
  type EvolutionReport,
  type GameInfo,
  league,
  type TournamentInfo,
} from "../api.ts";
import { api } from "../api.ts";
import { navigate } from "../router.ts";

/**
 * The league: a game's online leaderboard and the tournaments (`/league`), one tournament's standings, live while
 * it runs (`/league/tournaments/<id>`), and a Donor Game evolution (`/league/evolutions/<id>`); players are in
 * players.tsx.
 */

/** How often a running tournament's standings are fetched again. */
const LIVE_MS = 2_000;

export function useGames(): readonly GameInfo[] {
  const [games, setGames] = useState<readonly GameInfo[]>([]);
  useEffect(() => void api.games().then(setGames, () => {}), []);
  return games;
}

/** A rating's number: OpenSkill's μ shown on a familiar scale would invent precision; two decimals say enough. */
export const two = (x: number) => x.toFixed(2);
const signed = (x: number, digits = 3) => `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;
export const when = (iso: string) => new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
/** `bot:ann` → `ann`, with its kind as a tag. */
export const kindOf = (player: string) => player.slice(0, Math.max(0, player.indexOf(":")));
export const nameOf = (player: string) => player.slice(player.indexOf(":") + 1);

/** Each row's interval drawn to the scale of the whole table: where the point is, and how sure. */
function Interval(props: { ci: readonly [number, number]; rating: number; low: number; high: number }) {
  const at = (x: number) => `${(100 * (x - props.low)) / Math.max(1, props.high - props.low)}%`;
  return (
    <>
      <span class="interval" title={`[${props.ci[0]}, ${props.ci[1]}]`}>
        <span
          class="interval-bar"
          style={{ left: at(props.ci[0]), width: `calc(${at(props.ci[1])} - ${at(props.ci[0])})` }}
        />
        <span class="interval-point" style={{ left: at(props.rating) }} />
      </span>
      <span class="interval-text">{props.ci[0].toFixed(0)}–{props.ci[1].toFixed(0)}</span>
    </>
  );
}

const span = (rows: readonly { ci: readonly [number, number] }[]) => ({
  low: Math.min(...rows.map((r) => r.ci[0])),
  high: Math.max(...rows.map((r) => r.ci[1])),
});

/** The value of the board selector that shows the pooled board. */
const POOLED = "pooled";

export function LeaguePage(props: { query: URLSearchParams }) {
  const games = useGames();
  const game = props.query.get("game") ?? "kuhn-poker";
  const [board, setBoard] = useState<Board | null>(null);
  const [tournaments, setTournaments] = useState<TournamentInfo[] | null>(null);
  const [evolutions, setEvolutions] = useState<EvolutionInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void league.evolutions().then(setEvolutions, (e: Error) => setError(e.message)), []);
  useEffect(() => {
    let current = true;
    setBoard(null);
    setError(null);
    league.ratings(game === POOLED ? undefined : game).then(
      (b) => current && setBoard(b),
      (e: Error) => current && setError(e.message),
    );
    return () => void (current = false);
  }, [game]);
  useEffect(() => void league.tournaments().then(setTournaments, (e: Error) => setError(e.message)), []);
  const title = (id: string) => games.find((g) => g.id === id)?.title ?? id;
  const pooled = game === POOLED;
  const scale = board && board.ratings.length ? span(board.ratings) : { low: 0, high: 1 };
  // The online scale's own order (by its conservative μ − 3σ, as the queue sees it), shown beside each rating.
  const onlineRank = new Map(
    (board?.ratings ?? []).filter((r) => r.skill).sort((a, b) => b.skill!.ordinal - a.skill!.ordinal)
      .map((r, i) => [r.player, i + 1]),
  );
  return (
    <div class="panel league">
      <h1>League</h1>
      <p>
        <a href="/league/players">Everyone who has played</a> — people, bots, LLMs, policies and built-ins.
      </p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Board
          <select
            value={game}
            onChange={(e) =>
              navigate(`/league?game=${encodeURIComponent((e.currentTarget as HTMLSelectElement).value)}`)}
          >
            <option value={POOLED}>All games, pooled</option>
            {games.map((g) => <option key={g.id} value={g.id}>{g.title}</option>)}
          </select>
        </label>
      </form>
      {error && <div class="notice error" role="alert">Could not load the league: {error}</div>}
      <h2>Leaderboard</h2>
      {!board && !error && <p class="muted">Loading…</p>}
      {board && board.ratings.length === 0 && (
        <p class="muted">
          No rated match{" "}
          {pooled ? "yet" : `of ${title(game)} yet`}: the public queue's matches and tournaments are rated.
        </p>
      )}
      {board && board.ratings.length > 0 && (
        <>
          <dl class="muted scales">
            <dt>Rating</dt>
            <dd>
              ranks the board: Bradley–Terry fitted on {board.matches} rated match(es)
              {pooled ? ` of ${board.games.length} game(s), each game counting alike` : ""}, each scored by its margin
              (the chips or points won), on the Elo scale (1500 the board's average), with its 95 % bootstrap interval.
              Rows tagged provisional wait for their interval to tighten.
            </dd>
            {!pooled && (
              <>
                <dt>Online</dt>
                <dd>
                  the rating the public queue pairs by: OpenSkill's μ ± 3σ (± 3σ spans about 99.7 % of where the true
                  skill may lie), moved as each rated match ends by who finished ahead, not by how much. A player who
                  often wins by a little and loses by a lot ranks higher here than by its rating. The rank shown first
                  is this scale's own, by μ − 3σ (how good a player is at the least).
                </dd>
              </>
            )}
          </dl>
          <div class="scroll-x">
            <table class="list leaderboard">
              <thead>
                <tr>
                  <th>#</th>
                  <th>Player</th>
                  <th>Rating</th>
                  <th>95% interval</th>
                  <th>Matches</th>
                  {!pooled && <th>Online (rank, μ ± 3σ)</th>}
                </tr>
              </thead>
              <tbody>
                {board.ratings.map((r, i) => (
                  <tr key={r.player} data-player={r.player} class={r.provisional ? "provisional" : ""}>
                    <td>{i + 1}</td>
                    <td>
                      <a
                        href={`/league/players/${encodeURIComponent(r.player)}${
                          pooled ? "" : `?game=${encodeURIComponent(game)}`
                        }`}
                      >
                        {nameOf(r.player)}
                      </a>{" "}
                      <span class="tag">{kindOf(r.player)}</span>
                      {r.provisional && <span class="tag provisional-tag">provisional</span>}
                    </td>
                    <td class="rating">{r.rating.toFixed(0)}</td>
                    <td class="interval-cell">
                      <Interval ci={r.ci} rating={r.rating} {...scale} />
                    </td>
                    <td>{r.matches}</td>
                    {!pooled && (
                      <td class="online">
                        {r.skill
                          ? (
                            <>
                              <span class="online-rank">#{onlineRank.get(r.player)}</span> {two(r.skill.mu)} ±{" "}
                              {two(3 * r.skill.sigma)}
                            </>
                          )
                          : "—"}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <h2>Tournaments</h2>
      {tournaments && tournaments.length === 0 && (
        <p class="muted">
          None yet. Run one with <code>ludus tournament --game {pooled ? "kuhn-poker" : game} --players a,b,c</code>.
        </p>
      )}
      {tournaments && tournaments.length > 0 && (
        <div class="scroll-x">
          <table class="list tournament-list">
            <thead>
              <tr>
                <th>Game</th>
                <th>Format</th>
                <th>Players</th>
                <th>Started</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tournaments.map((t) => (
                <tr key={t.id} data-tournament={t.id}>
                  <td>
                    {title(t.game)} <span class="tag">{t.variant}</span>
                  </td>
                  <td>{format(t)}</td>
                  <td>{t.players.length}</td>
                  <td>{when(t.createdAt)}</td>
                  <td>
                    <a href={`/league/tournaments/${t.id}`}>{t.endedAt ? "Standings" : "Live"}</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {evolutions && evolutions.length > 0 && (
        <>
          <h2>Donor Game evolutions</h2>
          <div class="scroll-x">
            <table class="list evolution-list">
              <thead>
                <tr>
                  <th>Generations</th>
                  <th>Runs</th>
                  <th>First generation</th>
                  <th>Started</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {evolutions.map((e) => (
                  <tr key={e.id} data-evolution={e.id}>
                    <td>{e.generations}</td>
                    <td>{e.seeds}</td>
                    <td>{e.population.join(", ")}</td>
                    <td>{when(e.createdAt)}</td>
                    <td>
                      <a href={`/league/evolutions/${e.id}`}>{e.endedAt ? "Curve" : "Live"}</a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

const format = (t: TournamentInfo) =>
  `${t.format}${t.duplicate && t.format !== "duplicate" ? ", duplicate deals" : ""}`;

/**
 * A stored run fetched again every LIVE_MS until it has ended (and, after a failure, a little later: the server may
 * be away for a moment). The latest answer and the latest error, if the last fetch failed.
 */
function useLive<T>(id: string, load: (id: string) => Promise<T>, ended: (value: T) => boolean) {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fetch = () =>
      load(id).then((v) => {
        if (!current) return;
        setValue(v);
        setError(null);
        if (!ended(v)) timer = setTimeout(fetch, LIVE_MS);
      }, (e: Error) => {
        if (!current) return;
        setError(e.message);
        timer = setTimeout(fetch, LIVE_MS * 5);
      });
    fetch();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [id]);
  return { value, error };
}

/** What a page shows until its run first arrives: that it loads, or why it could not. */
function Pending(props: { what: string; error: string | null }) {
  return (
    <div class="panel">
      {props.error
        ? <div class="notice error" role="alert">Could not load {props.what}: {props.error}</div>
        : <p class="muted">Loading…</p>}
    </div>
  );
}

export function TournamentPage(props: { id: string }) {
  const games = useGames();
  const { value: standings, error } = useLive(props.id, league.tournament, (s) => s.tournament.endedAt !== null);
  if (!standings) return <Pending what={`tournament ${props.id}`} error={error} />;
  const t = standings.tournament;
  const { planned, completed, failed } = standings.slots;
  const scale = span(standings.standings);
  return (
    <div class="panel tournament" data-tournament={t.id} data-live={t.endedAt ? "false" : "true"}>
      <h1>
        {games.find((g) => g.id === t.game)?.title ?? t.game} {format(t)} · {t.players.length} players ·{" "}
        {when(t.createdAt)}
      </h1>
      <p>
        <span class="tag">{t.variant}</span> {t.matches}{" "}
        match(es) a pairing{t.rounds ? ` in each of ${t.rounds} rounds` : ""} · seed {t.seed} ·{" "}
        <span class="muted">
          tournament <code>{t.id}</code>
        </span>
      </p>
      <p class="progress-line">
        <progress max={planned} value={completed} /> {completed} of {planned} matches
        {failed ? `, ${failed} failed` : ""}
        {t.endedAt ? ` · finished ${when(t.endedAt)}` : " · live"}
      </p>
      {error && <div class="notice error" role="alert">Lost the server for a moment: {error}</div>}
      <div class="scroll-x">
        <table class="list standings">
          <thead>
            <tr>
              <th>#</th>
              <th>Player</th>
              <th title="Bradley–Terry on the Elo scale">Rating</th>
              <th>95% interval</th>
              {t.format === "swiss" && <th>Points</th>}
              <th>W-D-L</th>
              <th>Mean return</th>
              {standings.alphaRank && <th title="the share of α-Rank's stationary mass">α-Rank</th>}
            </tr>
          </thead>
          <tbody>
            {standings.standings.map((r) => (
              <tr key={r.player} data-player={r.player}>
                <td>{r.rank}</td>
                <td>
                  {r.id
                    ? (
                      <a href={`/league/players/${encodeURIComponent(r.id)}?game=${t.game}&variant=${t.variant}`}>
                        {r.player}
                      </a>
                    )
                    : r.player}
                </td>
                <td>{r.rating.toFixed(0)}</td>
                <td class="interval-cell">
                  <Interval ci={r.ci} rating={r.rating} {...scale} />
                </td>
                {t.format === "swiss" && <td>{r.points}</td>}
                <td>{r.wins}-{r.draws}-{r.losses}</td>
                <td>{signed(r.meanReturn)} ± {r.meanReturnCi95.toFixed(3)}</td>
                {standings.alphaRank && <td class="alpha-rank">{(r.alphaRank ?? 0).toFixed(3)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Payoffs</h2>
      <p class="muted">The row player's mean return per match against the column player, both seats, ± 95 %.</p>
      <div class="scroll-x">
        <table class="payoff-matrix">
          <thead>
            <tr>
              <th />
              {standings.payoff.players.map((p) => <th key={p}>{p}</th>)}
            </tr>
          </thead>
          <tbody>
            {standings.payoff.players.map((p, i) => (
              <tr key={p}>
                <th>{p}</th>
                {standings.payoff.cells[i].map((c, j) => (
                  <td key={j} class={c === null ? "muted" : c.mean > 0 ? "gain" : c.mean < 0 ? "loss" : ""}>
                    {c === null ? "—" : `${signed(c.mean)} ± ${c.ci95.toFixed(3)}`}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">
        Ratings: Bradley–Terry with 95 % bootstrap intervals; {standings.scoring}. {standings.alphaRank
          ? `α-Rank: each player's share of the stationary mass of an evolving population (α = ${standings.alphaRank.alpha}), which needs no transitivity.`
          : `α-Rank: not computed (${standings.alphaRankWhyNot}).`}
      </p>
    </div>
  );
}

/** `/league/evolutions/<id>`: the Donor Game's cultural evolution, generation by generation, run by run. */
export function EvolutionPage(props: { id: string }) {
  const { value: report, error } = useLive(props.id, league.evolution, (r) => r.evolution.endedAt !== null);
  if (!report) return <Pending what={`evolution ${props.id}`} error={error} />;
  const e = report.evolution;
  const runs = Map.groupBy(report.generations, (g) => g.run);
  return (
    <div class="panel evolution" data-evolution={e.id} data-live={e.endedAt ? "false" : "true"}>
      <h1>
        Donor Game evolution · {e.generations} generations × {e.seeds} run(s) · {when(e.createdAt)}
      </h1>
      <p>
        Mutation {e.mutation} · seed {e.seed} · first generation {e.population.join(", ")} ·{" "}
        <span class="muted">
          evolution <code>{e.id}</code>
        </span>
      </p>
      <p class="muted">
        Each generation plays one match; the better half by resources survives and each new agent copies a survivor's
        strategy, its argument moved a little. Mean over runs; the resources axis is logarithmic.
      </p>
      {report.curve.length > 0 && <EvolutionChart curve={report.curve} />}
      <div class="scroll-x">
        <table class="list evolution-table">
          <thead>
            <tr>
              <th>Run</th>
              <th>Generation</th>
              <th>Mean resources</th>
              <th>Donated</th>
              <th>Survivors</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {[...runs].flatMap(([run, gs]) =>
              gs.map((g) => (
                <tr key={`${run}/${g.generation}`} data-run={run} data-generation={g.generation}>
                  <td>{run}</td>
                  <td>{g.generation}</td>
                  <td>{g.meanResources.toFixed(2)}</td>
                  <td>{(100 * g.donationFraction).toFixed(1)} %</td>
                  <td class="strategies">{g.agents.filter((a) => a.survived).map((a) => a.strategy).join(", ")}</td>
                  <td>
                    <a href={`/replays/${g.matchId}`}>Replay</a>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** Mean resources (log scale) and the share donated, per generation (two axes). */
function EvolutionChart(props: { curve: EvolutionReport["curve"] }) {
  const { curve } = props;
  return (
    <Chart
      class="evolution-chart"
      label="Mean resources and the share donated, per generation"
      options={{
        scales: { x: { time: false }, resources: { distr: 3 }, share: { range: [0, 100] } },
        axes: [
          { label: "generation" },
          { scale: "resources", label: "mean resources" },
          { scale: "share", side: 1, label: "donated %", grid: { show: false } },
        ],
        series: [
          { label: "generation" },
          { label: "mean resources", scale: "resources", stroke: "#2f6fde", width: 2 },
          { label: "donated %", scale: "share", stroke: "#1f7a3a", width: 2, dash: [6, 4] },
        ],
      }}
      data={useMemo(() => [
        curve.map((c) => c.generation),
        curve.map((c) => Math.max(1e-3, c.meanResources)),
        curve.map((c) => 100 * c.donationFraction),
      ], [curve])}
    />
  );
}
