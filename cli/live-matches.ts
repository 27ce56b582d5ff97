import { randomBytes } from "node:crypto";
import type { ReplayStore, StoreOptions } from "../db/store.ts";
import { GATEWAY_PATH } from "../protocol/frames.ts";
import type { PolicyRuntime } from "../policies/onnx/runtime.ts";
import { startServer } from "../server/app.ts";
import type { LiveMatches } from "../server/match/live-matches.ts";
import { withPolicies } from "./policies.ts";

/** The bot gateway of a run's own server, for the model clients that play its LLM seats. */
export interface RunGateway {
  /** e.g. ws://127.0.0.1:PORT/bot */
  readonly url: string;
  /**
   * An LLM token for the run, revoked when it ends. Its name is the run's, never a player's (the seats it plays are
   * named by whoever creates them), so a run resumed after SIGKILL never collides with the one it interrupted.
   */
  token(): Promise<{ readonly token: string; readonly id: string }>;
}

/**
 * Runs `work` with live matches on the store: in-process ones for built-ins and policies (`inProcess` makes them),
 * or, when `serve`, a server on a free loopback port whose gateway the run's model clients connect to.
 */
export async function withLiveMatches<T>(
  location: StoreOptions,
  serve: boolean,
  inProcess: (store: ReplayStore, policies: PolicyRuntime) => LiveMatches,
  work: (store: ReplayStore, live: LiveMatches, gateway?: RunGateway) => Promise<T>,
): Promise<T> {
  if (!serve) return withPolicies(location, (policies, store) => work(store, inProcess(store, policies)));
  const server = await startServer({ ...location, port: 0, host: "127.0.0.1", fillAfterMs: null });
  const made: string[] = [];
  const gateway: RunGateway = {
    url: `${server.url.replace(/^http/, "ws")}${GATEWAY_PATH}`,
    token: async () => {
      const name = `run-${randomBytes(6).toString("hex")}`;
      const { token, record } = await server.tokens.create(name, "llm", 100_000, { player: false });
      made.push(record.id);
      return { token, id: record.id };
    },
  };
  try {
    return await work(server.store, server.matches, gateway);
  } finally {
    for (const id of made) await server.tokens.revoke(id);
    await server.close({ drainMs: 5_000 });
  }
}
