import { ReplayStore, StoreError, StoreInUseError, type StoreOptions } from "../db/store.ts";
import { readRuntimeFile, removeRuntimeFile } from "../server/runtime-file.ts";

/** A server's refusal as the error a command throws for it; undefined for a generic one. */
export type Refusal = (status: number, code: string, message: string) => Error | undefined;

/**
 * Requests to a running server's HTTP API with an optional bearer token: the JSON answer (the bytes, with `bytes`), or
 * the server's refusal (its code and message) as `refuse` makes it, else as a StoreError that names the server.
 */
export function serverCaller(server: URL, token: string | undefined, refuse: Refusal) {
  const base = server.href.endsWith("/") ? server.href : `${server.href}/`;
  return async (path: string, init: RequestInit = {}, bytes = false): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(new URL(path, base), {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...init.headers },
      });
    } catch (cause) {
      throw new StoreError(`cannot reach ${server.origin}: ${(cause as Error).message}`);
    }
    if (response.ok && bytes) return new Uint8Array(await response.arrayBuffer());
    const body = await response.json().catch(() => ({}));
    if (response.ok) return body;
    const { code = "error", message = response.statusText } = (body as { error?: Record<string, string> }).error ?? {};
    throw refuse(response.status, code, message) ??
      new StoreError(`${server.origin} answered ${response.status} (${code}): ${message}`);
  };
}

/**
 * Opens the store a command names, or, when a running server holds that embedded store, says where that server
 * answers and with which admin token (its runtime file): store commands then go through it, as with `--server`.
 */
export async function openStoreOrServer(
  location: StoreOptions,
): Promise<{ readonly store: ReplayStore } | { readonly server: URL; readonly token: string }> {
  try {
    const store = await ReplayStore.open(location);
    // Holding the embedded store, no server holds it: a runtime file there was left by one killed outright.
    if (store.backend === "pglite") removeRuntimeFile(location.dataDir);
    return { store };
  } catch (error) {
    const runtime = error instanceof StoreInUseError ? readRuntimeFile(error.dataDir) : undefined;
    if (!runtime) throw error;
    return { server: new URL(runtime.url), token: runtime.token };
  }
}
