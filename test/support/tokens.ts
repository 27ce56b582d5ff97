import { ReplayStore, type StoreOptions } from "../../db/store.ts";
import type { TokenKind } from "../../db/tokens.ts";

/**
 * Tokens made in a store no server holds yet (a server process started next, or one stopped for a while): the
 * way `ludus token create` makes them, one token per name.
 */
export async function createTokens(
  location: Pick<StoreOptions, "dataDir" | "databaseUrl">,
  names: readonly string[],
  kind: TokenKind = "bot",
  maxMatches?: number,
): Promise<string[]> {
  const store = await ReplayStore.open(location);
  try {
    const tokens: string[] = [];
    for (const name of names) tokens.push((await store.tokens.create(name, kind, maxMatches)).token);
    return tokens;
  } finally {
    await store.close();
  }
}
