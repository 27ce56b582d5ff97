import type { Command } from "commander";
import { DEFAULT_MAX_MATCHES, TOKEN_KINDS, TokenError, type TokenKind, TokenStore } from "../../server/auth/tokens.ts";
import type { Io } from "../io.ts";
import { integerIn, oneOf } from "../options.ts";

/** `ludus token create|list|revoke`: bot tokens, stored hashed in the data directory. */
export function registerToken(program: Command, io: Io): void {
  const token = program.command("token").description("create, list and revoke bot tokens");
  token
    .command("create")
    .description("create a token for a bot and print it (only its hash is stored: keep it)")
    .requiredOption("--name <bot>", "the bot's name, shown to opponents and in replays")
    .option(
      "--kind <kind>",
      "what uses it: bot or llm (a player), or admin (registers policies over HTTP; never plays)",
      oneOf(TOKEN_KINDS),
      "bot",
    )
    .option("--max-matches <n>", "live matches it may sit in at once", integerIn(1, 100_000), DEFAULT_MAX_MATCHES)
    .option("--data-dir <dir>", "the server's data directory", "data")
    .action((flags: { name: string; kind: TokenKind; maxMatches: number; dataDir: string }) => {
      const { token } = new TokenStore(flags.dataDir).create(flags.name, flags.kind, flags.maxMatches);
      io.out(`${token}\n`);
      io.err(`ludus: token for ${flags.name} (${flags.kind}) stored in ${flags.dataDir}/tokens.json\n`);
    });
  token
    .command("list")
    .description("list the tokens (names, ids, kinds; never the secrets)")
    .option("--data-dir <dir>", "the server's data directory", "data")
    .option("--json", "print JSON")
    .action((flags: { dataDir: string; json?: boolean }) => {
      const records = new TokenStore(flags.dataDir).list().map(({ hash: _, ...r }) => r);
      if (flags.json) return io.out(JSON.stringify(records, null, 2) + "\n");
      for (const r of records) {
        io.out(`${r.id}  ${r.name}  ${r.kind}  max ${r.maxMatches}  ${r.createdAt}${r.revoked ? "  revoked" : ""}\n`);
      }
    });
  token
    .command("revoke <name-or-id>")
    .description("revoke a token; bots using it can no longer connect")
    .option("--data-dir <dir>", "the server's data directory", "data")
    .action((nameOrId: string, flags: { dataDir: string }) => {
      if (!new TokenStore(flags.dataDir).revoke(nameOrId)) {
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
