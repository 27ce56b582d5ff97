/// <reference lib="dom" />
import { render } from "preact";
import { useState } from "preact/hooks";
import { setDisplayName, useDisplayName } from "./name.ts";
import { EvolutionPage, LeaguePage, TournamentPage } from "./pages/league.tsx";
import { PlayerPage, PlayersPage } from "./pages/players.tsx";
import { Lobby } from "./pages/lobby.tsx";
import { ReplayList, ReplayViewer } from "./pages/replays.tsx";
import { InvitePage, NewMatch, QueuePage } from "./pages/start.tsx";
import { TablePage } from "./pages/table.tsx";
import { onLink, useLocation } from "./router.ts";
import { api } from "./api.ts";
import { loadTables } from "./tables/index.ts";

/** The Ludus web app: one page, routed by path (see server/web-app.ts for the paths the server answers with it). */

function Page({ url }: { url: URL }) {
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const q = url.searchParams;
  switch (parts[0]) {
    case undefined:
    case "lobby":
      return <Lobby />;
    case "play":
      if (parts[1] === "new" && parts[2]) return <NewMatch game={parts[2]} query={q} open={false} />;
      if (parts[1] === "private" && parts[2]) return <NewMatch game={parts[2]} query={q} open />;
      if (parts[1] === "queue" && parts[2]) {
        return <QueuePage game={parts[2]} variant={q.get("variant") ?? undefined} />;
      }
      if (parts[1]) return <TablePage key={`p${parts[1]}`} matchId={parts[1]} watch={false} />;
      break;
    case "watch":
      if (parts[1]) return <TablePage key={`w${parts[1]}`} matchId={parts[1]} watch />;
      break;
    case "invite":
      if (parts[1]) return <InvitePage code={parts[1]} />;
      break;
    case "replays":
      return parts[1] ? <ReplayViewer id={parts[1]} query={q} /> : <ReplayList query={q} />;
    case "league":
      if (parts[1] === undefined) return <LeaguePage query={q} />;
      if (parts[1] === "tournaments" && parts[2]) return <TournamentPage key={parts[2]} id={parts[2]} />;
      if (parts[1] === "players") {
        return parts[2] ? <PlayerPage key={parts[2]} player={parts[2]} query={q} /> : <PlayersPage query={q} />;
      }
      if (parts[1] === "evolutions" && parts[2]) return <EvolutionPage key={parts[2]} id={parts[2]} />;
      break;
  }
  return (
    <div class="panel">
      <h1>No such page</h1>
      <p>
        <a href="/">Go to the lobby</a>
      </p>
    </div>
  );
}

function NameBox() {
  const name = useDisplayName();
  const [draft, setDraft] = useState(name);
  return (
    <form
      class="who"
      onSubmit={(e) => {
        e.preventDefault();
        setDisplayName(draft);
        (document.activeElement as HTMLElement | null)?.blur();
      }}
    >
      <label for="display-name">Playing as</label>
      <input
        id="display-name"
        type="text"
        maxLength={40}
        value={draft}
        onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)}
        onBlur={() => setDisplayName(draft)}
      />
    </form>
  );
}

function App() {
  const url = useLocation();
  const section = url.pathname.split("/")[1] ?? "";
  const nav = (href: string, label: string, current: boolean) => (
    <a href={href} class={current ? "current" : ""} aria-current={current ? "page" : undefined}>{label}</a>
  );
  return (
    <div onClick={(e) => onLink(e as unknown as MouseEvent)}>
      <header class="topbar">
        <a class="brand" href="/">LUDUS</a>
        <nav>
          {nav("/", "Play", section === "" || section === "play" || section === "lobby")}
          {nav("/replays", "Replays", section === "replays")}
          {nav("/league", "League", section === "league")}
        </nav>
        <NameBox />
      </header>
      <main>
        <Page url={url} />
      </main>
    </div>
  );
}

// The tables of the games the server hosts, before any page draws one. A lobby without the registry still opens,
// and a slow registry holds the first page back a few seconds at most (tables loaded later show on the next render).
const tables = api.games().then((games) => loadTables(games.map((g) => g.id)), () => undefined);
await Promise.race([tables, new Promise((resolve) => setTimeout(resolve, 5_000))]);
render(<App />, document.getElementById("app")!);
