import type { Command } from "commander";
import { games } from "../../games/registry.ts";
import { startHttpServer } from "../../server/http.ts";
import type { Io } from "../io.ts";
import { integerIn } from "../options.ts";

export function registerServe(program: Command, io: Io): void {
  program
    .command("serve")
    .description("run the Ludus server (HTTP API: GET /health, GET /games, GET /games/:id)")
    .option("--port <n>", "TCP port to listen on (0 picks a free one)", integerIn(0, 65535), 2567)
    .option("--host <address>", "address to listen on", "0.0.0.0")
    .action(async (flags: { port: number; host: string }) => {
      const server = await startHttpServer({ port: flags.port, host: flags.host });
      io.err(`ludus: serving on ${server.url} (games: ${games.map((g) => g.id).join(", ")})\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          Deno.removeSignalListener("SIGINT", stop);
          Deno.removeSignalListener("SIGTERM", stop);
          io.err("ludus: shutting down\n");
          server.close().then(resolve);
        };
        Deno.addSignalListener("SIGINT", stop);
        Deno.addSignalListener("SIGTERM", stop);
      });
    });
}
