import { checkParams, limitParam } from "../../db/query.ts";
import {
  DEFAULT_MAX_MATCHES,
  TOKEN_KINDS,
  TokenError,
  type TokenKind,
  type TokenRecord,
  type TokenStore,
} from "../../db/tokens.ts";
import { type ApiRoute, pathSegment, type Refusal, refuseMethod, respond, send } from "../http.ts";
import { checkAdmin, Refused } from "./admin.ts";

/**
 * Tokens over HTTP, for an admin (docs/protocol.md): how tokens are made where the store cannot be opened
 * beside the server (an embedded store is the running server's alone). Never a secret but the one just made.
 */

const PATH = /^\/tokens(?:\/([^/]+))?$/;
const MAX_TOKENS = 100_000;

const view = ({ hash: _, ...record }: TokenRecord) => record;

function refusal(cause: unknown): Refusal | undefined {
  if (cause instanceof TokenError) {
    return {
      status: /already has a token/.test(cause.message) ? 409 : 400,
      code: "bad_token_request",
      message: cause.message,
    };
  }
  if (cause instanceof Refused) return cause;
}

export function tokenRoutes(tokens: TokenStore): ApiRoute {
  return {
    describe: "GET /tokens, POST /tokens?name=&kind=&maxMatches=, DELETE /tokens/:name-or-id (admin)",
    methods: ["POST", "DELETE"],
    handle(req, res, url) {
      const found = PATH.exec(url.pathname.replace(/\/+$/, ""));
      if (!found) return false;
      if (refuseMethod(req, res, url, found[1] === undefined ? ["GET", "POST"] : ["DELETE"])) return true;
      const method = req.method === "HEAD" ? "GET" : req.method!;
      const ref = found[1] === undefined ? undefined : pathSegment(res, found[1]);
      if (found[1] !== undefined && ref === undefined) return true;
      respond(res, async () => {
        await checkAdmin(req, tokens, "managing tokens");
        if (ref !== undefined) {
          checkParams(url.searchParams, []);
          if (!(await tokens.revoke(ref))) {
            throw new Refused(404, "unknown_token", `no live token named or with id ${ref}`);
          }
          return { revoked: ref };
        }
        if (method === "GET") {
          checkParams(url.searchParams, []);
          return { tokens: (await tokens.list()).map(view) };
        }
        const params = Object.fromEntries(checkParams(url.searchParams, ["name", "kind", "maxMatches"]));
        if (params.name === undefined) throw new TokenError("`name` is required: the bot's name, shown to opponents");
        const kind = (params.kind ?? "bot") as TokenKind;
        if (!TOKEN_KINDS.includes(kind)) {
          throw new TokenError(`\`kind\` is one of ${TOKEN_KINDS.join(", ")}, got "${params.kind}"`);
        }
        const maxMatches = params.maxMatches === undefined
          ? DEFAULT_MAX_MATCHES
          : limitParam(params.maxMatches, DEFAULT_MAX_MATCHES, MAX_TOKENS, "maxMatches");
        const { token, record } = await tokens.create(params.name, kind, maxMatches);
        send(res, 201, { token, record: view(record) });
      }, refusal);
      return true;
    },
  };
}
