import type { IncomingMessage } from "node:http";
import type { TokenStore } from "../../db/tokens.ts";
import type { Refusal } from "../http.ts";

/** A request refused with its HTTP status, code and message. */
export class Refused extends Error implements Refusal {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** Only an admin token does `what`: 401 without a valid one, 403 for a player's token. */
export async function checkAdmin(req: IncomingMessage, tokens: TokenStore, what: string): Promise<void> {
  const header = req.headers.authorization ?? "";
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  const record = token === undefined ? undefined : await tokens.verify(token);
  if (!record) {
    throw new Refused(
      401,
      "unauthorized",
      `${what} takes an admin token (\`Authorization: Bearer <token>\`): create one with ` +
        "`ludus token create --kind admin --name <name>` and the `--data-dir` or `--database-url` the server uses",
    );
  }
  if (record.kind !== "admin") {
    throw new Refused(
      403,
      "forbidden",
      `${record.name}'s token is a ${record.kind} token; ${what} takes an admin token`,
    );
  }
}
