import process from "node:process";
import { type Command, Option } from "commander";
import type { TournamentFormat } from "../../db/league.ts";
import { games } from "../../games/registry.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import { OnlineRatings } from "../../server/league/online-ratings.ts";
import type { Standings } from "../../server/league/tournament/standings.ts";
import { FORMATS } from "../../server/league/tournament/schedule.ts";
import {
  checkTournament,
  isBotPlayer,
  isLlmPlayer,
  type RemotePlayers,
  runTournament,
  TournamentError,
  tournamentStandings,
} from "../../server/league/tournament/run.ts";
import { ModelPlayer } from "../../clients/llm/index.ts";
import { type ReplayStore, StoreInUseError } from "../../db/store.ts";
import { readRuntimeFile } from "../../server/runtime-file.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import type { RunGateway } from "../live-matches.ts";
import type { Io } from "../io.ts";
import { integerIn, jsonObject, nameList, serverUrl, storeLocation } from "../options.ts";
import { serverCaller } from "../server-call.ts";
import { modelsOption, type ModelSpec } from "../model-options.ts";
import { withLiveMatches } from "../live-matches.ts";
import { resumeOrStart } from "../resumable.ts";
import { LlmRunError } from "./llm.ts";
import { cliWebSocket } from "./bot.ts";

interface TournamentFlags {
  game: string;
  variant?: string;
  config?: Record<string, unknown>;
  format: TournamentFormat;
  duplicate?: boolean;
  players?: string[];
  matches: number;
  rounds?: number;
  seed: string;
  concurrency: number;
  models?: Record<string, ModelSpec>;
  server?: URL;
  token?: string;
  resume?: string;
  dataDir: string;
  databaseUrl?: string;
  json?: boolean;
}

const signed = (x: number, digits: number) => `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;

function table(s: Standings): string {
  const t = s.tournament;
  const swiss = t.format === "swiss";
  const header = [
    "rank",
    "player",
    "rating",
    "95% interval",
    ...(swiss ? ["points"] : []),
    "matches",
    "W-D-L",
    "mean return",
    ...(s.alphaRank ? ["α-Rank"] : []),
  ];
  const rows = s.standings.map((r) => [
    String(r.rank),
    r.player,
    r.rating.toFixed(0),
    `[${r.ci[0].toFixed(0)}, ${r.ci[1].toFixed(0)}]`,
    ...(swiss ? [String(r.points)] : []),
    String(r.matches),
    `${r.wins}-${r.draws}-${r.losses}`,
    `${signed(r.meanReturn, 3)} ± ${r.meanReturnCi95.toFixed(3)}`,
    ...(s.alphaRank ? [(r.alphaRank ?? 0).toFixed(3)] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  const kind = `${t.format}${t.duplicate && t.format !== "duplicate" ? " of duplicate deals" : ""}`;
  return [
    `tournament ${t.id}: ${t.game} (${t.variant}), ${kind}, ${t.players.length} players, ${t.matches} match(es) a ` +
    `pairing${swiss ? ` in each of ${t.rounds} rounds` : ""}, seed ${t.seed}`,
    `${s.slots.completed} of ${s.slots.planned} matches counted${s.slots.failed ? `, ${s.slots.failed} failed` : ""}`,
    line(header),
    ...rows.map(line),
    `ratings: Bradley–Terry on the Elo scale, 95% bootstrap intervals; ${s.scoring}`,
    s.alphaRank
      ? `α-Rank: each player's share of the stationary mass (α = ${s.alphaRank.alpha}, population ${s.alphaRank.populationSize})`
      : `α-Rank: not computed (${s.alphaRankWhyNot})`,
  ].join("\n") + "\n";
}

/** Progress on stderr: a bar redrawn in place on a terminal, otherwise a line every tenth of the matches. */
function progress(io: Io): (done: number, total: number) => void {
  const terminal = Deno.stderr.isTerminal();
  let shown = -1;
  return (done, total) => {
    if (terminal) {
      const width = 30;
      const filled = total ? Math.round((width * done) / total) : width;
      io.err(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} matches`);
      if (done === total) io.err("\n");
      return;
    }
    const tenth = total ? Math.floor((10 * done) / total) : 10;
    if (tenth === shown) return;
    shown = tenth;
    io.err(`played ${done}/${total} matches\n`);
  };
}

export function registerTournament(program: Command, io: Io): void {
  program
    .command("tournament")
    .description(
      "play a tournament of built-in strategies and registered policies, store it, and print standings with " +
        "ratings and their confidence intervals",
    )
    .addOption(new Option("--game <id>", "the game to play").choices(games.map((g) => g.id)))
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .option("--config <json>", "config overrides as a JSON object, or @file.json", jsonObject)
    .addOption(
      new Option(
        "--format <format>",
        "how players are paired: every pair, Swiss rounds, the first player against " +
          "the field, or every pair on duplicate deals",
      ).choices(FORMATS).default("round-robin"),
    )
    .option("--duplicate", "play each deal twice with the seats swapped (any format; always so for duplicate)")
    .option(
      "--players <players>",
      "built-in strategies (name or name:arg), registered policies (policy:<name>[@v][:greedy]) and models " +
        "(llm:<name>, named in --models), comma-separated",
      nameList,
    )
    .option(
      "--matches <n>",
      "matches per pairing (Swiss: per pairing in each round), seats alternating",
      integerIn(1, 1_000_000),
      100,
    )
    .option("--rounds <n>", "Swiss rounds (default: ⌈log₂ players⌉)", integerIn(1, 1000))
    .option("--seed <seed>", "the tournament's seed: it fixes every match's seed", "1")
    .option("--concurrency <n>", "matches played at once", integerIn(1, 4096), 64)
    .option(
      "--models <json>",
      'the models of the llm:<name> players, as JSON or @file.json: {"<name>": {"model": "...", "baseUrl": ' +
        '"http://...", "apiKey"?, "temperature"?, "maxTokens"?, "renderer"?}}',
      modelsOption,
    )
    .addOption(
      new Option(
        "--server <url>",
        "have a running server play it (its connected bots as bot:<name> players), e.g. http://127.0.0.1:2567; " +
          "a server holding --data-dir's embedded store plays it without this flag",
      ).argParser(serverUrl).conflicts(["models", "databaseUrl"]),
    )
    .option("--token <token>", "with --server: an admin token (default: $LUDUS_TOKEN)")
    .option("--resume <id>", "go on with a stored tournament an interruption stopped (its other flags are stored)")
    .option("--data-dir <dir>", "the data directory whose store records the tournament", "data")
    .option("--database-url <url>", "a PostgreSQL store instead (default: $DATABASE_URL)")
    .option("--json", "print exactly one JSON object on stdout")
    .action(async (flags: TournamentFlags, command: Command) => {
      if (!flags.resume && (!flags.game || !flags.players)) {
        throw new TournamentError("a tournament needs --game and --players (or --resume <id> to go on with one)");
      }
      if (flags.server) {
        const result = await onServer(flags, io);
        return io.out(flags.json ? JSON.stringify(result) + "\n" : table(result));
      }
      const bots = (flags.players ?? []).filter(isBotPlayer);
      if (bots.length) {
        throw new TournamentError(`${bots.join(", ")}: connected bots play in a server's tournaments: give --server`);
      }
      const models = flags.models ?? {};
      const unnamed = (flags.players ?? []).filter((p) => isLlmPlayer(p) && !(p.slice(4) in models));
      if (unnamed.length) throw new TournamentError(`${unnamed.join(", ")}: name each model in --models`);
      const inProcess = (store: ReplayStore, policies: PolicyRuntime) =>
        new LiveMatches({ store, policies, lingerMs: 0, ratings: new OnlineRatings(store) });
      const location = storeLocation(flags, command);
      const serve = Object.keys(models).length > 0;
      const result = await withLiveMatches(location, serve, inProcess, async (store, live, gateway) => {
        const tournament = await resumeOrStart(io, {
          noun: "tournament",
          resume: flags.resume,
          where: store.where,
          find: (id) => store.league.tournament(id),
          latest: () => store.league.tournaments(5),
          refuse: (message) => new TournamentError(message),
          start: () =>
            store.league.createTournament(checkTournament({
              game: flags.game,
              variant: flags.variant,
              config: flags.config,
              format: flags.format,
              duplicate: flags.duplicate,
              players: flags.players!,
              matches: flags.matches,
              rounds: flags.rounds,
              seed: flags.seed,
            }, live)),
        });
        if (tournament.endedAt) return await tournamentStandings(store, tournament);
        const named = tournament.players.filter(isLlmPlayer);
        const missing = named.filter((p) => !(p.slice(4) in models));
        if (missing.length) throw new TournamentError(`${missing.join(", ")}: name each model in --models`);
        const players = gateway && await connectModels(gateway, named, models, io);
        try {
          return await runTournament(store, live, tournament, {
            concurrency: flags.concurrency,
            onProgress: progress(io),
            ...(players && { remote: players.llm }),
          });
        } finally {
          await players?.close();
        }
      }).catch(async (error) => {
        // An embedded store is its server's alone: that server plays the tournament, as with --server.
        const running = !serve && error instanceof StoreInUseError ? readRuntimeFile(error.dataDir) : undefined;
        if (!running) throw error;
        return await onServer({ ...flags, server: new URL(running.url), token: running.token }, io);
      });
      io.out(flags.json ? JSON.stringify(result) + "\n" : table(result));
    });
}

/** One connection per model of the tournament, each with a token of its own, seating its player's matches. */
async function connectModels(
  gateway: RunGateway,
  players: readonly string[],
  models: Record<string, ModelSpec>,
  io: Io,
): Promise<{ llm: RemotePlayers; close: () => Promise<void> }> {
  const connected = new Map<string, ModelPlayer>();
  try {
    for (const player of players) {
      const name = player.slice("llm:".length);
      const { token, id } = await gateway.token();
      const spec = models[name];
      connected.set(
        player,
        await ModelPlayer.connect({
          url: gateway.url,
          token,
          tokenId: id,
          name,
          agent: { ...spec, maxInFlight: 64, log: (line) => io.err(`ludus: ${line}\n`) },
          WebSocket: cliWebSocket,
        }),
      );
    }
  } catch (error) {
    for (const model of connected.values()) await model.close();
    throw error;
  }
  return {
    llm: {
      participant: (player) => {
        const model = connected.get(player)!;
        // A model whose endpoint failed for good plays no more: stop, and let --resume go on once it is mended.
        if (model.failure) throw new LlmRunError(`${player}'s model endpoint failed: ${model.failure.message}`);
        return model.participant;
      },
      seat: (player, match) => connected.get(player)!.seat(match),
    },
    close: async () => {
      for (const model of connected.values()) await model.close();
    },
  };
}

/** How often a tournament a server plays is asked how far it got. */
const FOLLOW_MS = 1_000;

/** Has the server play the tournament (POST /tournaments), following its standings until it ends. */
async function onServer(flags: TournamentFlags, io: Io): Promise<Standings> {
  const call = serverCaller(flags.server!, flags.token ?? process.env.LUDUS_TOKEN, (status, code, message) => {
    if (status === 400 && code === "bad_tournament") return new TournamentError(message);
  });
  const body = flags.resume ? { resume: flags.resume, concurrency: flags.concurrency } : {
    game: flags.game,
    variant: flags.variant,
    config: flags.config,
    format: flags.format,
    duplicate: flags.duplicate,
    players: flags.players,
    matches: flags.matches,
    rounds: flags.rounds,
    seed: flags.seed,
    concurrency: flags.concurrency,
  };
  const { tournament } = (await call("tournaments", {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  })) as { tournament: { id: string } };
  io.err(`ludus: tournament ${tournament.id} is being played on ${flags.server!.origin}\n`);
  const shown = progress(io);
  for (;;) {
    const standings = (await call(`tournaments/${tournament.id}`)) as Standings;
    shown(standings.slots.completed + standings.slots.failed, standings.slots.planned);
    if (standings.tournament.endedAt) return standings;
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_MS));
  }
}
