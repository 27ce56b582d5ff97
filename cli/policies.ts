import { ReplayStore, type StoreOptions } from "../db/store.ts";
import { PolicyRuntime, type PolicySource } from "../policies/onnx/runtime.ts";
import { isPolicySpec, parsePolicySpec } from "../policies/onnx/spec.ts";
import { openStoreOrServer } from "./server-call.ts";
import { serverPolicySource } from "./server-policies.ts";

async function withRuntime<T>(source: PolicySource, work: (policies: PolicyRuntime) => Promise<T>): Promise<T> {
  const policies = await PolicyRuntime.open(source);
  try {
    return await work(policies);
  } finally {
    await policies.close();
  }
}

/** Runs `work` with the policies of the store at `location`, closing both after. */
export async function withPolicies<T>(
  location: StoreOptions,
  work: (policies: PolicyRuntime, store: ReplayStore) => Promise<T>,
): Promise<T> {
  const store = await ReplayStore.open(location);
  try {
    return await withRuntime(store.policies, (policies) => work(policies, store));
  } finally {
    await store.close();
  }
}

/**
 * Runs `work` with the registered policies, played in this process: those of `server` (its registry over HTTP) when
 * given; else the store's at `location`, or, while a running server holds that embedded store, that server's.
 */
export async function withRegisteredPolicies<T>(
  location: StoreOptions,
  server: URL | undefined,
  work: (policies: PolicyRuntime) => Promise<T>,
): Promise<T> {
  if (server) return await withRuntime(serverPolicySource(server, undefined), work);
  const opened = await openStoreOrServer(location);
  if ("server" in opened) return await withRuntime(serverPolicySource(opened.server, opened.token), work);
  try {
    return await withRuntime(opened.store.policies, work);
  } finally {
    await opened.store.close();
  }
}

/** Runs `work` with the registered policies when one of `specs` names a policy, else without opening a store. */
export function withPoliciesIfNamed<T>(
  specs: readonly string[],
  location: () => StoreOptions,
  server: URL | undefined,
  work: (policies?: PolicyRuntime) => Promise<T>,
): Promise<T> {
  const named = specs.filter(isPolicySpec);
  if (named.length === 0) return work();
  // A misspelt seat is explained before any store is opened: the store may be in use, or of another version.
  named.forEach((spec) => parsePolicySpec(spec));
  return withRegisteredPolicies(location(), server, work);
}
