/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import { api, type GameInfo, type LiveMatch } from "../api.ts";

/**
 * The lobby: every registered game with its rules summary, a variant and an opponent to choose, and three
 * ways to play (a built-in strategy now, the public queue with bots and people, a private match to share);
 * below, the matches being played now, to watch.
 */
export function Lobby() {
  const [games, setGames] = useState<readonly GameInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.games().then(setGames, (e: Error) => setError(e.message));
  }, []);
  return (
    <div class="lobby">
      <section>
        <h1>Play</h1>
        <p class="muted">
          Sit at any table against a built-in strategy, join the public queue with bots, language models and other
          people, or open a private match and send its link.
        </p>
        {error && <div class="notice error" role="alert">Could not load the games: {error}</div>}
        {!games && !error && <p class="muted">Loading the games…</p>}
        <div class="game-grid">
          {games?.map((game) => <GameCard key={game.id} game={game} />)}
        </div>
      </section>
      <LiveList />
    </div>
  );
}

function GameCard({ game }: { game: GameInfo }) {
  const [variant, setVariant] = useState(game.defaultVariant);
  const [strategy, setStrategy] = useState(game.strategies[0]?.name ?? "random");
  const seats = game.variants[variant]?.seats ?? game.seats.min;
  const query = `variant=${encodeURIComponent(variant)}`;
  return (
    <article class="panel game-card" data-game={game.id}>
      <h2>{game.title}</h2>
      <div>
        <span class="tag">{seats} players</span>
        <span class="tag">{Object.keys(game.variants).length} variants</span>
      </div>
      <p class="summary">{game.summary}</p>
      <div class="choices">
        <label for={`${game.id}-variant`}>Variant</label>
        <select
          id={`${game.id}-variant`}
          value={variant}
          onChange={(e) => setVariant((e.currentTarget as HTMLSelectElement).value)}
        >
          {Object.entries(game.variants).map(([name, v]) => (
            <option key={name} value={name} title={v.description}>{name}</option>
          ))}
        </select>
        <label for={`${game.id}-vs`}>Opponent</label>
        <select
          id={`${game.id}-vs`}
          value={strategy}
          onChange={(e) => setStrategy((e.currentTarget as HTMLSelectElement).value)}
        >
          {game.strategies.map((s) => <option key={s.name} value={s.name} title={s.description}>{s.name}</option>)}
        </select>
      </div>
      <p class="muted variant-note">{game.variants[variant]?.description}</p>
      <div class="buttons">
        <a
          class="button primary"
          href={`/play/new/${game.id}?${query}&vs=${encodeURIComponent(strategy)}`}
          data-action="vs-builtin"
        >
          Play vs {strategy}
        </a>
        <a class="button" href={`/play/queue/${game.id}?${query}`} data-action="queue">Public queue</a>
        <a class="button" href={`/play/private/${game.id}?${query}`} data-action="private">Private match</a>
      </div>
    </article>
  );
}

function LiveList() {
  const [live, setLive] = useState<readonly LiveMatch[] | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () => api.live().then((m) => !stopped && setLive(m), () => {});
    load();
    const timer = setInterval(load, 3000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  const playing = live?.filter((m) => m.phase === "playing") ?? [];
  return (
    <section class="panel live" aria-label="Live matches">
      <h2>Being played now</h2>
      {playing.length === 0 ? <p class="muted">No match is being played right now.</p> : (
        <table class="list">
          <thead>
            <tr>
              <th>Game</th>
              <th>Players</th>
              <th>Steps</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {playing.map((m) => (
              <tr key={m.id} data-match={m.id}>
                <td>
                  {m.title} <span class="tag">{m.variant}</span>
                </td>
                <td>{m.participants.map((p) => p.name).join(" · ")}</td>
                <td>{m.steps}</td>
                <td>
                  <a href={`/watch/${m.id}`}>Watch</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
