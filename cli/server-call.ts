import { StoreError } from "../db/store.ts";

/** A server's refusal as the error a command throws for it; undefined for a generic one. */
export type Refusal = (status: number, code: string, message: string) => Error | undefined;

/**
 * Requests to a running server's HTTP API with an optional bearer token: the JSON answer, or the server's
 * refusal (its code and message) as `refuse` makes it, else as a StoreError that names the server.
 */
export function serverCaller(server: URL, token: string | undefined, refuse: Refusal) {
  const base = server.href.endsWith("/") ? server.href : `${server.href}/`;
  return async (path: string, init: RequestInit = {}): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(new URL(path, base), {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...init.headers },
      });
    } catch (cause) {
      throw new StoreError(`cannot reach ${server.origin}: ${(cause as Error).message}`);
    }
    const body = await response.json().catch(() => ({}));
    if (response.ok) return body;
    const { code = "error", message = response.statusText } = (body as { error?: Record<string, string> }).error ?? {};
    throw refuse(response.status, code, message) ??
      new StoreError(`${server.origin} answered ${response.status} (${code}): ${message}`);
  };
}
