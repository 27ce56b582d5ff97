import process from "node:process";
import type { Command } from "commander";
import { DEFAULT_MAX_MATCHES, TOKEN_KINDS, TokenError, type TokenKind, type TokenRecord } from "../../db/tokens.ts";
import type { Io } from "../io.ts";
import { integerIn, oneOf, storeFlags, storeLocation } from "../options.ts";
import { openStoreOrServer, serverCaller } from "../server-call.ts";

/**
 * `ludus token create|list|revoke`: tokens, stored hashed in the store a server uses — opened here (the data
 * directory's embedded store while no server holds it, or a PostgreSQL store at any time), or through a running
 * server with an admin token (`--server`).
 */

interface Flags {
  dataDir: string;
  databaseUrl?: string;
  server?: URL;
  token?: string;
  json?: boolean;
}

type Listed = Omit<TokenRecord, "hash">;

/** The three requests, answered by a store or by a server. */
interface Tokens {
  create(name: string, kind: TokenKind, maxMatches: number): Promise<{ token: string; record: Listed }>;
  list(): Promise<Listed[]>;
  revoke(nameOrId: string): Promise<boolean>;
}

async function withTokens<T>(flags: Flags, command: Command, work: (tokens: Tokens) => Promise<T>): Promise<T> {
  if (flags.server) return await work(serverTokens(flags.server, flags.token ?? process.env.LUDUS_TOKEN));
  const opened = await openStoreOrServer(storeLocation(flags, command));
  if ("server" in opened) return await work(serverTokens(opened.server, opened.token));
  const { store } = opened;
  try {
    return await work({
      create: (name, kind, maxMatches) => store.tokens.create(name, kind, maxMatches),
      list: () => store.tokens.list(),
      revoke: (nameOrId) => store.tokens.revoke(nameOrId),
    });
  } finally {
    await store.close();
  }
}

function serverTokens(server: URL, admin: string | undefined): Tokens {
  const call = serverCaller(server, admin, (status, code, message) => {
    if (code === "bad_token_request" || status === 404) return new TokenError(message);
  });
  return {
    create: async (name, kind, maxMatches) =>
      (await call(`tokens?${new URLSearchParams({ name, kind, maxMatches: String(maxMatches) })}`, {
        method: "POST",
      })) as { token: string; record: Listed },
    list: async () => ((await call("tokens")) as { tokens: Listed[] }).tokens,
    revoke: async (nameOrId) => {
      await call(`tokens/${encodeURIComponent(nameOrId)}`, { method: "DELETE" });
      return true;
    },
  };
}

const storeOptions = (command: Command) =>
  storeFlags(command, "through a running server instead (it holds its embedded store), e.g. http://127.0.0.1:2567")
    .option("--token <token>", "with --server: an admin token (default: $LUDUS_TOKEN)");

export function registerToken(program: Command, io: Io): void {
  const token = program.command("token").description("create, list and revoke bot tokens");
  storeOptions(
    token
      .command("create")
      .description("create a token for a bot and print it (only its hash is stored: keep it)")
      .requiredOption("--name <bot>", "the bot's name, shown to opponents and in replays")
      .option(
        "--kind <kind>",
        "what uses it: bot or llm (a player), or admin (registers policies and tokens over HTTP; never plays)",
        oneOf(TOKEN_KINDS),
        "bot",
      )
      .option("--max-matches <n>", "live matches it may sit in at once", integerIn(1, 100_000), DEFAULT_MAX_MATCHES),
  ).action(async (flags: Flags & { name: string; kind: TokenKind; maxMatches: number }, command: Command) => {
    const { token, record } = await withTokens(
      flags,
      command,
      (t) => t.create(flags.name, flags.kind, flags.maxMatches),
    );
    io.out(`${token}\n`);
    io.err(`ludus: token ${record.id} for ${record.name} (${record.kind}) stored\n`);
  });
  storeOptions(
    token
      .command("list")
      .description("list the tokens (names, ids, kinds; never the secrets)")
      .option("--json", "print JSON"),
  ).action(async (flags: Flags, command: Command) => {
    const records = (await withTokens(flags, command, (t) => t.list())).map((
      { hash: _, ...r }: Listed & { hash?: string },
    ) => r);
    if (flags.json) return io.out(JSON.stringify(records, null, 2) + "\n");
    for (const r of records) {
      io.out(`${r.id}  ${r.name}  ${r.kind}  max ${r.maxMatches}  ${r.createdAt}${r.revoked ? "  revoked" : ""}\n`);
    }
  });
  storeOptions(
    token
      .command("revoke <name-or-id>")
      .description("revoke a token; bots using it can no longer connect"),
  ).action(async (nameOrId: string, flags: Flags, command: Command) => {
    if (!(await withTokens(flags, command, (t) => t.revoke(nameOrId)))) {
      throw new TokenError(`no live token named or with id ${nameOrId}`);
    }
    io.err(`ludus: revoked ${nameOrId}\n`);
  });
  for (const sub of token.commands) {
    sub.configureOutput({ writeOut: io.out, writeErr: io.err }).showHelpAfterError(
      `(run \`ludus token ${sub.name()} --help\` for usage)`,
    ).exitOverride();
  }
}
