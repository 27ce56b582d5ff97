import { ReplayStore, type StoreOptions } from "../db/store.ts";
import { PolicyRuntime } from "../policies/onnx/runtime.ts";
import { isPolicySpec } from "../policies/onnx/spec.ts";

/** Runs `work` with the policies of the store at `location`, closing both after. */
export async function withPolicies<T>(
  location: StoreOptions,
  work: (policies: PolicyRuntime, store: ReplayStore) => Promise<T>,
): Promise<T> {
  const store = await ReplayStore.open(location);
  try {
    const policies = await PolicyRuntime.open(store.policies);
    try {
      return await work(policies, store);
    } finally {
      await policies.close();
    }
  } finally {
    await store.close();
  }
}

/** Runs `work` with the store's policies when one of `specs` names a policy, else without opening a store. */
export function withPoliciesIfNamed<T>(
  specs: readonly string[],
  location: () => StoreOptions,
  work: (policies?: PolicyRuntime) => Promise<T>,
): Promise<T> {
  return specs.some(isPolicySpec) ? withPolicies(location(), work) : work();
}
