import { existsSync, readFileSync, statSync } from "node:fs";
import { LudusError } from "../clients/sdk/index.ts";

/**
 * Where `ludus bot --policy` gets its network: an ONNX file, or a policy registered on the server the bot plays
 * on, fetched over HTTP (`GET /policies/<ref>` describes it, `GET /policies/<id>/model` gives its bytes).
 */

/** A registered policy as the server describes it. */
export interface PolicyMeta {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly game: string;
  readonly gameVersion?: number;
  readonly variant?: string;
  readonly config?: unknown;
  readonly inputShape?: readonly number[];
  readonly outputShape?: readonly number[];
}

/** A `--policy` that names nothing playable (no such file or registered policy): the user's to fix. */
export class PolicyRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyRefError";
  }
}

/** Whether `--policy` names a file: a path ending in `.onnx`, or any file that exists. */
export function isModelFile(ref: string): boolean {
  return ref.endsWith(".onnx") || (existsSync(ref) && statSync(ref).isFile());
}

export function readModel(path: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (error) {
    throw new PolicyRefError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** The HTTP address of the server behind a gateway URL (`ws://host:2567/bot` → `http://host:2567`). */
export function httpBase(gatewayUrl: string): string {
  const url = new URL(gatewayUrl);
  return `${url.protocol === "wss:" ? "https:" : "http:"}//${url.host}`;
}

/** A policy reference as a path segment: `name@version` keeps its `@`, anything else is escaped. */
const segment = (ref: string) => encodeURIComponent(ref).replaceAll("%40", "@");

/** A registered policy (a name, name@version or id) and its model, from the server at `gatewayUrl`. */
export async function fetchPolicy(gatewayUrl: string, ref: string): Promise<{ meta: PolicyMeta; model: Uint8Array }> {
  const base = httpBase(gatewayUrl);
  const described = await get(`${base}/policies/${segment(ref)}`, ref, base);
  const meta = await described.json().catch(() => null) as PolicyMeta | null;
  if (
    typeof meta?.id !== "string" || typeof meta.name !== "string" || typeof meta.version !== "number" ||
    typeof meta.game !== "string"
  ) {
    throw new LudusError(
      "connection_failed",
      `${base}/policies/${segment(ref)} did not describe a policy (an object with id, name, version and game)`,
    );
  }
  // By id: the version just described, even if another is registered meanwhile.
  const model = await get(`${base}/policies/${segment(meta.id)}/model`, ref, base);
  return { meta, model: new Uint8Array(await model.arrayBuffer()) };
}

async function get(url: string, ref: string, base: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new LudusError("connection_failed", `cannot reach ${url}: ${(error as Error).message}`);
  }
  if (response.ok) return response;
  const body = await response.json().catch(() => null) as { error?: { message?: unknown } } | null;
  if (response.status === 404) {
    throw new PolicyRefError(
      `no policy named \`${ref}\` on ${base}; \`ludus policy list\` shows the policies registered there ` +
        "(or give a .onnx file)",
    );
  }
  const why = typeof body?.error?.message === "string" ? `: ${body.error.message}` : "";
  throw new LudusError("connection_failed", `${url} answered HTTP ${response.status}${why}`);
}
