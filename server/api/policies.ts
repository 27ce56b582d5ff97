import { ConfigError } from "../../games/core/config.ts";
import { NumericFaceError } from "../../games/core/game.ts";
import { UnknownGameError } from "../../games/registry.ts";
import { checkParams, QueryError } from "../../db/query.ts";
import { type PolicyRecord, PolicyRegistryError } from "../../db/policies.ts";
import { PolicyError } from "../../policies/onnx/network.ts";
import type { PolicyUpload } from "../../policies/onnx/register.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import type { TokenStore } from "../../db/tokens.ts";
import { type ApiRoute, pathSegment, readBody, type Refusal, refuseMethod, respond, send } from "../http.ts";
import { checkAdmin, Refused } from "./admin.ts";

/**
 * The policy registry over HTTP (docs/policies.md): anyone may list policies and fetch their models; only
 * an admin token registers (POST, the ONNX bytes as the body, the rest as query parameters) or removes one.
 */

/** The largest model an upload may carry. */
export const MAX_MODEL_BYTES = 128 * 1024 * 1024;

const UPLOAD_PARAMS = ["name", "game", "variant", "config", "version", "parent", "run", "cursor", "notes"];
const PATH = /^\/policies(?:\/([^/]+)(\/model)?)?$/;

const STATUS: Record<PolicyRegistryError["code"], number> = {
  duplicate: 409,
  in_use: 409,
  unknown_policy: 404,
  bad_policy: 400,
};

function refusal(cause: unknown): Refusal | undefined {
  if (cause instanceof PolicyRegistryError) {
    return { status: STATUS[cause.code], code: cause.code, message: cause.message };
  }
  if (cause instanceof UnknownGameError) return { status: 400, code: "unknown_game", message: cause.message };
  if (cause instanceof ConfigError) return { status: 400, code: "bad_config", message: cause.message };
  if (cause instanceof PolicyError || cause instanceof NumericFaceError) {
    return { status: 400, code: "bad_policy", message: cause.message };
  }
  if (cause instanceof Refused) return cause;
}

/** A record as JSON: where its model is, beside what it is. */
const view = (r: PolicyRecord) => ({ ...r, model: `/policies/${r.id}/model` });

/** The upload's fields from its query string, each checked. */
function uploadOf(url: URL): PolicyUpload {
  const params = Object.fromEntries(checkParams(url.searchParams, UPLOAD_PARAMS));
  for (const required of ["name", "game"]) {
    if (!params[required]) throw new QueryError(`\`${required}\` is required; parameters: ${UPLOAD_PARAMS.join(", ")}`);
  }
  let config: Record<string, unknown> | undefined;
  if (params.config !== undefined) {
    try {
      config = JSON.parse(params.config);
    } catch {
      throw new QueryError('`config` is a JSON object of config overrides, e.g. {"ante":2}');
    }
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new QueryError('`config` is a JSON object of config overrides, e.g. {"ante":2}');
    }
  }
  if (params.version !== undefined && !/^[1-9]\d{0,8}$/.test(params.version)) {
    throw new QueryError(`\`version\` is a whole number ≥ 1, got ${JSON.stringify(params.version)}`);
  }
  return {
    name: params.name,
    game: params.game,
    variant: params.variant,
    config,
    version: params.version === undefined ? undefined : Number(params.version),
    parent: params.parent,
    run: params.run,
    datasetCursor: params.cursor,
    notes: params.notes,
  };
}

export function policyRoutes(runtime: PolicyRuntime, tokens: TokenStore): ApiRoute {
  return {
    describe: "GET /policies, GET /policies/:ref, GET /policies/:ref/model, POST /policies, DELETE /policies/:ref",
    methods: ["POST", "DELETE"],
    handle(req, res, url) {
      const found = PATH.exec(url.pathname.replace(/\/+$/, ""));
      if (!found) return false;
      const [, rawRef, model] = found;
      const method = req.method === "HEAD" ? "GET" : req.method;
      if (refuseMethod(req, res, url, rawRef === undefined ? ["GET", "POST"] : model ? ["GET"] : ["GET", "DELETE"])) {
        return true;
      }
      const ref = rawRef === undefined ? undefined : pathSegment(res, rawRef);
      if (rawRef !== undefined && ref === undefined) return true;
      respond(res, async () => {
        if (ref === undefined && method === "POST") {
          await checkAdmin(req, tokens, "registering or removing a policy");
          const upload = uploadOf(url);
          const record = await runtime.register(
            upload,
            await readBody(
              req,
              MAX_MODEL_BYTES,
              () => new Refused(413, "too_large", `a model is at most ${MAX_MODEL_BYTES} bytes; this upload is larger`),
            ),
          );
          send(res, 201, view(record), { location: `/policies/${record.id}` });
          return;
        }
        if (ref === undefined) {
          const params = Object.fromEntries(checkParams(url.searchParams, ["game", "name"]));
          return { policies: (await runtime.registry.list(params)).map(view) };
        }
        checkParams(url.searchParams, []);
        if (method === "DELETE") {
          await checkAdmin(req, tokens, "registering or removing a policy");
          return { removed: view(await runtime.remove(ref)) };
        }
        const record = await runtime.registry.get(ref);
        if (!record) {
          throw new PolicyRegistryError("unknown_policy", `no registered policy ${ref}; GET /policies lists them`);
        }
        if (!model) return view(record);
        const bytes = await runtime.registry.model(record.id);
        if (!bytes) throw new PolicyRegistryError("unknown_policy", `policy ${ref} was removed`);
        res.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": bytes.length,
          "content-disposition": `attachment; filename="${record.name}@${record.version}.onnx"`,
          etag: `"${record.sha256}"`,
          "x-ludus-policy-id": record.id,
          "x-ludus-policy-version": String(record.version),
        });
        res.end(req.method === "HEAD" ? undefined : bytes);
      }, refusal);
      return true;
    },
  };
}
