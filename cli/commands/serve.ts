import { type Command, InvalidArgumentError } from "commander";
import { games } from "../../games/registry.ts";
import { strategiesFor } from "../../policies/baselines/index.ts";
import { GATEWAY_PATH } from "../../protocol/frames.ts";
import { DEFAULT_FILL_AFTER_MS, DEFAULT_FILL_STRATEGY, startServer } from "../../server/app.ts";
import { DEFAULT_CONDUCT } from "../../server/match/conduct.ts";
import process from "node:process";
import { DEFAULT_GROUP_COMMIT } from "../../db/group-commit.ts";
import type { Io } from "../io.ts";
import { integerIn } from "../options.ts";

interface ServeFlags {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  commitWindow: number;
  fillAfter: number;
  fillStrategy: string;
  hold: number;
}

function postgresUrl(value: string): string {
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new InvalidArgumentError("it is a PostgreSQL URL: postgres://user[:password]@host[:port]/database.");
  }
  return value;
}

/** A strategy every game has, since it fills seats of any game. */
function universalStrategy(value: string): string {
  const name = value.split(":")[0];
  if (!games.every((g) => strategiesFor(g.id).some((s) => s.name === name))) {
    const common = strategiesFor(games[0].id).filter((s) => games.every((g) => strategiesFor(g.id).includes(s)));
    throw new InvalidArgumentError(
      `it fills seats of every game; strategies every game has: ${common.map((s) => s.name).join(", ")}.`,
    );
  }
  return value;
}

export function registerServe(program: Command, io: Io): void {
  program
    .command("serve")
    .description(
      `run the Ludus server: the HTTP API (GET /health, GET /games), the bot gateway (ws ${GATEWAY_PATH}) and the browser rooms (Colyseus)`,
    )
    .option("--port <n>", "TCP port to listen on (0 picks a free one)", integerIn(0, 65535), 2567)
    .option("--host <address>", "address to listen on", "0.0.0.0")
    .option("--data-dir <dir>", "where bot tokens and the embedded replay store (PGlite) are kept", "data")
    .option(
      "--database-url <url>",
      "record matches in this PostgreSQL database instead of the embedded store (default: $DATABASE_URL)",
      postgresUrl,
      process.env.DATABASE_URL || undefined,
    )
    .option(
      "--commit-window <ms>",
      "how long a write waits for others to share its commit (0 = the next event-loop turn)",
      integerIn(0, 100),
      DEFAULT_GROUP_COMMIT.windowMs,
    )
    .option(
      "--fill-after <ms>",
      "a player alone in the queue gets built-in opponents after this wait (0 = never)",
      integerIn(0, 86_400_000),
      DEFAULT_FILL_AFTER_MS,
    )
    .option(
      "--fill-strategy <name>",
      "the built-in strategy that fills empty seats",
      universalStrategy,
      DEFAULT_FILL_STRATEGY,
    )
    .option(
      "--hold <s>",
      "seconds a dropped seat is held for its player to resume",
      integerIn(1, 3600),
      DEFAULT_CONDUCT.holdMs / 1000,
    )
    .action(async (flags: ServeFlags) => {
      const server = await startServer({
        port: flags.port,
        host: flags.host,
        dataDir: flags.dataDir,
        databaseUrl: flags.databaseUrl,
        groupCommit: { windowMs: flags.commitWindow },
        fillAfterMs: flags.fillAfter === 0 ? null : flags.fillAfter,
        fillStrategy: flags.fillStrategy,
        conduct: { holdMs: flags.hold * 1000 },
      });
      const ws = server.url.replace(/^http/, "ws");
      io.err(
        `ludus: serving on ${server.url} — people: ${server.url}/ (the web app), bots: ${ws}${GATEWAY_PATH} (games: ${
          games.map((g) => g.id).join(", ")
        })\n`,
      );
      const { restored, failed } = server.restored;
      io.err(
        [
          ...failed.map((f) => `ludus: match ${f.id} could not be restored and was closed: ${f.error}\n`),
          ...(restored.length
            ? [`ludus: restored ${restored.length} unfinished matches from the store (seats held for their players)\n`]
            : []),
          `ludus: replay store: ${server.store.backend} at ${server.store.where}\n`,
        ].join(""),
      );
      await new Promise<void>((resolve) => {
        // The listeners stay until exit: a second signal during shutdown must not kill the process before
        // the replay store has written what it holds.
        let stopping = false;
        const stop = () => {
          if (stopping) return;
          stopping = true;
          io.err("ludus: shutting down\n");
          server.close().then(resolve);
        };
        Deno.addSignalListener("SIGINT", stop);
        Deno.addSignalListener("SIGTERM", stop);
      });
    });
}
