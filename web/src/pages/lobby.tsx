/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";
import { api, type GameInfo, type LiveMatch, type PolicyInfo } from "../api.ts";

/**
 * The lobby: every registered game with its rules summary, a variant and an opponent to choose (a built-in
 * strategy or one of the game's registered policies), and three ways to play (that opponent now, the public
 * queue with bots and people, a private match to share); below, the matches being played now, to watch.
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
          Sit at any table against a built-in strategy or a trained policy, join the public queue with bots, language
          models and other people, or open a private match and send its link.
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

/** An opponent to choose: `value` is what `/play/new`'s `vs` takes, a strategy's name or a policy's seat spec. */
interface Opponent {
  readonly value: string;
  readonly label: string;
  readonly title: string;
}

/** Per policy name: its latest version (the newest when the match starts), then each version, newest first. */
function policyOpponents(policies: readonly PolicyInfo[]): Opponent[] {
  const sorted = [...policies].sort((a, b) => a.name.localeCompare(b.name) || b.version - a.version);
  return sorted.flatMap((p, i) => [
    ...(sorted[i - 1]?.name === p.name ? [] : [{
      value: `policy:${p.name}`,
      label: `${p.name} (latest)`,
      title: `the newest version of ${p.name} when the match starts`,
    }]),
    {
      value: `policy:${p.name}@${p.version}`,
      label: `${p.name}@${p.version} (policy)`,
      title: `trained on ${p.variant}${p.notes ? `: ${p.notes}` : ""}`,
    },
  ]);
}

function GameCard({ game }: { game: GameInfo }) {
  const [variant, setVariant] = useState(game.defaultVariant);
  const [opponent, setOpponent] = useState(game.strategies[0]?.name ?? "random");
  // The game's registered policies; undefined while loading, null when they could not be listed.
  const [policies, setPolicies] = useState<Opponent[] | null | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    api.policies(game.id).then(
      (found) => !stopped && setPolicies(policyOpponents(found)),
      () => !stopped && setPolicies(null),
    );
    return () => void (stopped = true);
  }, [game.id]);
  const chosen = policies?.find((p) => p.value === opponent)?.label ?? opponent;
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
          value={opponent}
          data-policies={policies === undefined ? "loading" : policies === null ? "unlisted" : "listed"}
          onChange={(e) => setOpponent((e.currentTarget as HTMLSelectElement).value)}
        >
          <optgroup label="Built-in strategies">
            {game.strategies.map((s) => <option key={s.name} value={s.name} title={s.description}>{s.name}</option>)}
          </optgroup>
          {policies && policies.length > 0 && (
            <optgroup label="Registered policies">
              {policies.map((p) => <option key={p.value} value={p.value} title={p.title}>{p.label}</option>)}
            </optgroup>
          )}
        </select>
      </div>
      {policies === null && <p class="muted policy-note">Policies could not be listed.</p>}
      <p class="muted variant-note">{game.variants[variant]?.description}</p>
      <div class="buttons">
        <a
          class="button primary"
          href={`/play/new/${game.id}?${query}&vs=${encodeURIComponent(opponent)}`}
          data-action="vs-builtin"
        >
          Play vs {chosen}
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
