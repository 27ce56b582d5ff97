import { type PolicyRecord, PolicyRegistryError } from "../db/policies.ts";
import { PolicyError } from "../policies/onnx/network.ts";
import type { PolicyUpload } from "../policies/onnx/register.ts";
import type { PolicySource } from "../policies/onnx/runtime.ts";
import { serverCaller } from "./server-call.ts";

/** A registry's requests as a running server answers them: registering takes what `ludus policy add` sends. */
export interface ServerRegistry {
  add(upload: PolicyUpload, model: Uint8Array): Promise<PolicyRecord>;
  list(filter?: { game?: string; name?: string }): Promise<PolicyRecord[]>;
  get(ref: string): Promise<PolicyRecord | undefined>;
  model(id: string): Promise<Uint8Array | undefined>;
  remove(ref: string): Promise<PolicyRecord>;
}

/**
 * The policy registry of a running server, over its HTTP API (`GET /policies`, `/policies/:ref`, `/policies/:id/model`;
 * adding and removing take an admin `token`). A refusal keeps the server's code and message.
 */
export function serverRegistry(server: URL, token: string | undefined): ServerRegistry {
  const call = serverCaller(server, token, (status, code, message) => {
    if (status === 400 && code === "bad_policy") return new PolicyError(message);
    if (["duplicate", "unknown_policy", "in_use", "bad_policy"].includes(code)) {
      return new PolicyRegistryError(code as PolicyRegistryError["code"], message);
    }
  });
  const revive = (r: PolicyRecord) => ({ ...r, createdAt: new Date(r.createdAt) });
  return {
    async add(upload, model) {
      const query = new URLSearchParams();
      const fields: Record<string, unknown> = { ...upload, cursor: upload.datasetCursor, datasetCursor: undefined };
      for (const [key, value] of Object.entries(fields)) {
        if (value !== undefined) query.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
      }
      const body = await call(`policies?${query}`, {
        method: "POST",
        body: model as Uint8Array<ArrayBuffer>,
        headers: { "content-type": "application/octet-stream" },
      });
      return revive(body as PolicyRecord);
    },
    async list(filter = {}) {
      const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== undefined) as string[][]);
      return ((await call(`policies?${query}`)) as { policies: PolicyRecord[] }).policies.map(revive);
    },
    get: async (ref) =>
      await unlessUnknown(async () => revive((await call(`policies/${encodeURIComponent(ref)}`)) as PolicyRecord)),
    model: async (id) =>
      await unlessUnknown(async () => (await call(`policies/${encodeURIComponent(id)}/model`, {}, true)) as Uint8Array),
    async remove(ref) {
      return revive(
        ((await call(`policies/${encodeURIComponent(ref)}`, { method: "DELETE" })) as { removed: PolicyRecord })
          .removed,
      );
    },
  };
}

/** A lookup's answer, or undefined where the server has no such policy. */
async function unlessUnknown<T>(lookup: () => Promise<T>): Promise<T | undefined> {
  try {
    return await lookup();
  } catch (error) {
    if (error instanceof PolicyRegistryError && error.code === "unknown_policy") return undefined;
    throw error;
  }
}

/**
 * The server's registry as a policy runtime's source, so a command seats the policies of a server that holds the store
 * (an embedded store is its server's alone) in its own process.
 */
export function serverPolicySource(server: URL, token: string | undefined): PolicySource {
  const registry = serverRegistry(server, token);
  return {
    ...registry,
    add: (policy, model) =>
      registry.add({
        name: policy.name,
        game: policy.game,
        variant: policy.variant,
        config: policy.config as Record<string, unknown>,
        version: policy.version,
        parent: policy.parent ?? undefined,
        run: policy.run ?? undefined,
        datasetCursor: policy.datasetCursor ?? undefined,
        notes: policy.notes ?? undefined,
      }, model),
  };
}
