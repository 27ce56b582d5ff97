import { type Command, Option } from "commander";
import { configure } from "../../games/core/config.ts";
import { games, getGame } from "../../games/registry.ts";
import { Boards } from "../../server/league/board.ts";
import { OnlineRatings } from "../../server/league/online-ratings.ts";
import { type LeagueMember, LeagueScheduler, type Weighting, WEIGHTINGS } from "../../server/league/scheduler.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import type { Io } from "../io.ts";
import { integerIn, nameList, numberIn, storeLocation } from "../options.ts";
import { withPolicies } from "../policies.ts";

interface LeagueFlags {
  game: string;
  variant?: string;
  main: string[];
  mainExploiters?: string[];
  leagueExploiters?: string[];
  fixed?: string[];
  live: number;
  matches?: number;
  rate?: number;
  minutes?: number;
  weighting: Weighting;
  selfPlay: number;
  refits: number;
  seed: string;
  dataDir: string;
  databaseUrl?: string;
  json?: boolean;
}

/** The board refitted at one point of a run: how many matches it was fitted on, how sure it was, how far it moved. */
interface Refit {
  readonly matches: number;
  readonly meanIntervalWidth: number;
  /** The largest change of any player's rating since the refit before (null for the first). */
  readonly largestMove: number | null;
}

const round1 = (x: number) => Number(x.toFixed(1));

export function registerLeague(program: Command, io: Io): void {
  program
    .command("league")
    .description(
      "keep a population's matches running (AlphaStar's roles, prioritised fictitious self-play), rated into the " +
        "store, then print the game's board",
    )
    .addOption(new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)).makeOptionMandatory())
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .requiredOption(
      "--main <players>",
      "main agents: built-ins (name[:arg]) and policies (policy:<name>[@v])",
      nameList,
    )
    .option("--main-exploiters <players>", "main exploiters: they meet only the main agents (unrated)", nameList)
    .option("--league-exploiters <players>", "league exploiters: they meet everyone (unrated)", nameList)
    .option("--fixed <players>", "the co-player pool: met, never choosing (built-ins, past snapshots)", nameList)
    .option("--live <n>", "matches kept running at once", integerIn(1, 100_000), 64)
    .option("--matches <n>", "stop after this many matches", integerIn(1, 1_000_000_000))
    .option(
      "--rate <n>",
      "at most this many new matches a second (default: as fast as --live allows)",
      numberIn(0.01, 1e6),
    )
    .option("--minutes <m>", "stop after this long (default: 1 minute unless --matches)", numberIn(0.01, 100_000))
    .addOption(
      new Option("--weighting <rule>", "how main agents and league exploiters choose: f_hard, f_var or uniform")
        .choices(WEIGHTINGS).default("hard"),
    )
    .option("--self-play <share>", "the share of a main agent's matches against itself", numberIn(0, 1), 0)
    .option(
      "--refits <n>",
      "refit the board this many times during the run and report how far it moved each time (convergence)",
      integerIn(0, 1000),
      0,
    )
    .option("--seed <seed>", "the scheduler's seed: who meets whom, and every match's seed", "league")
    .option("--data-dir <dir>", "the data directory whose store records the matches", "data")
    .option("--database-url <url>", "a PostgreSQL store instead (default: $DATABASE_URL)")
    .option("--json", "print exactly one JSON object on stdout")
    .action(async (flags: LeagueFlags, command: Command) => {
      const members: LeagueMember[] = [
        ...flags.main.map((player) => ({ player, role: "main" as const })),
        ...(flags.mainExploiters ?? []).map((player) => ({ player, role: "main-exploiter" as const })),
        ...(flags.leagueExploiters ?? []).map((player) => ({ player, role: "league-exploiter" as const })),
        ...(flags.fixed ?? []).map((player) => ({ player, role: "fixed" as const })),
      ];
      const result = await withPolicies(storeLocation(flags, command), async (policies, store) => {
        const ratings = new OnlineRatings(store);
        const live = new LiveMatches({ store, policies, lingerMs: 0, ratings });
        const league = new LeagueScheduler(live, {
          game: flags.game,
          variant: flags.variant,
          members,
          live: flags.live,
          weighting: flags.weighting,
          selfPlayShare: flags.selfPlay,
          seed: flags.seed,
          matches: flags.matches,
          ratePerSecond: flags.rate,
        });
        const limitMs = (flags.minutes ?? (flags.matches ? Infinity : 1)) * 60_000;
        const { variant } = configure(getGame(flags.game), {}, flags.variant);
        const boards = new Boards(store, { refitMs: 0 });
        const refits: Refit[] = [];
        let last: Map<string, number> | undefined;
        const refit = async () => {
          const board = await boards.board({ game: flags.game, variant });
          const now = new Map(board.ratings.map((r) => [r.player, r.rating]));
          const moved = last ? [...now].map(([p, r]) => Math.abs(r - (last!.get(p) ?? r))) : [];
          refits.push({
            matches: board.matches,
            meanIntervalWidth: round1(board.ratings.reduce((w, r) => w + r.ci[1] - r.ci[0], 0) / board.ratings.length),
            largestMove: moved.length ? round1(Math.max(...moved)) : null,
          });
          io.err(`league: board at ${board.matches} rated matches, ${JSON.stringify(refits.at(-1))}\n`);
          last = now;
          return board;
        };
        await ratings.catchUp();
        const started = performance.now();
        league.start();
        const report = setInterval(() => {
          const seconds = (performance.now() - started) / 1000;
          io.err(`league: ${league.ended} matches in ${seconds.toFixed(0)} s (${league.rated} rated)\n`);
        }, 10_000);
        const timer = Number.isFinite(limitMs) ? setTimeout(() => league.stop(), limitMs) : undefined;
        const every = Number.isFinite(limitMs) && flags.refits > 0 ? limitMs / (flags.refits + 1) : 0;
        let refitting = Promise.resolve();
        const refitTimer = every
          ? setInterval(() => (refitting = refitting.then(() => ratings.flush()).then(refit).then(() => {})), every)
          : undefined;
        await league.finished();
        clearTimeout(timer);
        clearInterval(report);
        clearInterval(refitTimer);
        await league.stop();
        await refitting;
        await ratings.flush();
        const seconds = (performance.now() - started) / 1000;
        const board = await refit();
        return {
          game: flags.game,
          members,
          matches: league.ended,
          rated: league.rated,
          seconds: Number(seconds.toFixed(1)),
          matchesPerSecond: Number((league.ended / seconds).toFixed(1)),
          pairings: league.pairings(),
          refits,
          board,
        };
      });
      if (flags.json) return io.out(JSON.stringify(result) + "\n");
      const rows = result.board.ratings.map((r, i) =>
        `${String(i + 1).padStart(3)}  ${r.player.padEnd(28)} ${r.rating.toFixed(0).padStart(5)}  [${
          r.ci[0].toFixed(0)
        }, ${r.ci[1].toFixed(0)}]  ${String(r.matches).padStart(7)}${r.provisional ? "  provisional" : ""}`
      );
      io.out(
        [
          `${result.game}: ${result.matches} matches (${result.rated} rated) in ${result.seconds} s, ` +
          `${result.matchesPerSecond} a second; the board (Bradley–Terry, 95 % intervals, every rated match of the game):`,
          ...rows,
        ].join("\n") + "\n",
      );
    });
}
