import type { AnyGame } from "../../games/core/game.ts";
import { policyStream, Rng, type Seed } from "../../games/core/rng.ts";
import type { Seat } from "../../games/core/seat.ts";
import { encoderVersion, getGame, numericInfo } from "../../games/registry.ts";
import { type PolicyRecord, type PolicyRegistry, PolicyRegistryError } from "../../db/policies.ts";
import { StrategyError } from "../strategy.ts";
import { type BatcherOptions, type LogitSource, PolicyBatcher } from "./batcher.ts";
import { HostedNetwork, NetworkReleasedError, PolicyBudgetError } from "./hosted.ts";
import { type PolicyDevice, PolicyNetwork } from "./network.ts";
import { checkDevice } from "./probe.ts";
import { type PolicyUpload, registerPolicy } from "./register.ts";
import { policySeat } from "./seat.ts";
import { parsePolicySpec, policySeatName } from "./spec.ts";

/**
 * The registered policies a server plays: which version a seat's spec names (from an index of the registry,
 * so creating a match never waits on the store), one onnxruntime session and batcher per version (loaded on
 * first use, shared by every match that seats it), and which versions live matches hold, so none of those
 * is removed under them. A version registered here is seated by the next match that names its policy.
 */

export interface RuntimeOptions extends BatcherOptions {
  /** Where inference runs (default cpu); cuda is checked when the runtime opens. */
  readonly device?: PolicyDevice;
  /** onnxruntime intra-op threads per session (default 1). */
  readonly threads?: number;
  /**
   * The most one inference batch (and a registration's trial batch) may take, in ms (default 1000). A version
   * over it is quarantined: no match seats it again, and those that seat it end in error.
   */
  readonly batchMs?: number;
  /** The memory limit of each version's inference process, in MiB (default 1024; 0: none). */
  readonly memoryMb?: number;
  /**
   * Whether each version plays in a process of its own, within the budgets (default true). Only a runtime whose
   * models are all its own caller's may run them in this process: `ludus train`'s, playing what its trainer wrote,
   * where a process per version would cost more than the learning step (a trainer registers versions every step).
   */
  readonly isolated?: boolean;
  /**
   * Re-read the registry this often (ms), for versions other processes register (a shared PostgreSQL
   * store); absent: only what is registered through this runtime is seen.
   */
  readonly refreshMs?: number;
}

/** The registry a runtime reads and registers through: the store's, or a running server's over its HTTP API. */
export type PolicySource = Pick<PolicyRegistry, "add" | "get" | "list" | "model" | "remove">;

/** A registered version, ready to sit: what a record keeps of it, and its seat in any match. */
export interface PolicyPlayer {
  /** `policy:<name>@<version>[:greedy]`: the exact version. */
  readonly name: string;
  readonly policy: { readonly id: string; readonly version: number; readonly greedy: boolean };
  /** Its seat `seat` in a match seeded `seed`, sampling from that seat's own stream of the seed. */
  seatFor(seed: Seed, seat: number): Seat;
}

/** A policy in a seat: what the record keeps of it, and the seat itself. */
export interface PolicySeat {
  readonly name: string;
  readonly policy: PolicyPlayer["policy"];
  readonly seat: Seat;
}

export class PolicyRuntime {
  private byId = new Map<string, PolicyRecord>();
  /** Each name's versions, ascending. */
  private byName = new Map<string, PolicyRecord[]>();
  private readonly loaded = new Map<string, Promise<PolicyBatcher>>();
  private readonly uses = new Map<string, number>();
  private timer?: ReturnType<typeof setInterval>;
  /** Registrations and removals made through this runtime, so a slower refresh never undoes one. */
  private changes = 0;
  private readonly listeners = new Set<(record: PolicyRecord) => void>();
  /** Versions that went over their budget here, and why: never seated again by this process. */
  private readonly quarantined = new Map<string, string>();
  private readonly quarantineListeners = new Set<(id: string, why: string) => Promise<void>>();

  private constructor(readonly registry: PolicySource, private readonly options: RuntimeOptions) {}

  static async open(registry: PolicySource, options: RuntimeOptions = {}): Promise<PolicyRuntime> {
    if (options.device === "cuda") await checkDevice("cuda");
    const runtime = new PolicyRuntime(registry, options);
    await runtime.refresh();
    if (options.refreshMs) {
      runtime.timer = setInterval(() => runtime.refresh().catch(() => {}), options.refreshMs);
      Deno.unrefTimer(runtime.timer);
    }
    return runtime;
  }

  /** Re-reads the registry's index (never the models). */
  async refresh(): Promise<void> {
    const changes = this.changes;
    const records = await this.registry.list();
    // A version registered or removed here meanwhile is newer than this read: the next refresh sees it.
    if (changes === this.changes) this.index(records);
  }

  private index(records: readonly PolicyRecord[]): void {
    this.byId = new Map(records.map((r) => [r.id, r]));
    this.byName = new Map();
    for (const r of [...records].sort((a, b) => a.version - b.version)) {
      const versions = this.byName.get(r.name) ?? [];
      versions.push(r);
      this.byName.set(r.name, versions);
    }
  }

  /**
   * The version `spec` names, checked against the game config it is to play: the same game and encoder,
   * the same tensor shape and action count. A StrategyError (a `bad_strategy` refusal) says what is wrong.
   */
  resolve(spec: string, game: AnyGame, config: unknown): { record: PolicyRecord; greedy: boolean } {
    const { ref, version, greedy } = parsePolicySpec(spec);
    const byId = version === undefined ? this.byId.get(ref) : undefined;
    const versions = this.byName.get(ref);
    const record = byId ?? (version === undefined ? versions?.at(-1) : versions?.find((r) => r.version === version));
    if (!record) {
      const mine = [...this.byName.entries()].filter(([, v]) => v[0].game === game.id).map(([name]) => name);
      const known = versions ? `; ${ref} has versions ${versions.map((r) => r.version).join(", ")}` : "";
      throw new StrategyError(
        `no registered policy ${ref}${version === undefined ? "" : `@${version}`}${known} (policies for ${game.id}: ${
          mine.length ? mine.join(", ") : "none; `ludus policy add` registers one"
        })`,
      );
    }
    const label = policySeatName(record.name, record.version, false);
    const why = this.quarantined.get(record.id);
    if (why !== undefined) {
      throw new StrategyError(`${label} is quarantined: ${why}; \`ludus policy remove\` removes it`);
    }
    if (record.game !== game.id) {
      throw new StrategyError(`${label} plays ${record.game}, not ${game.id}`);
    }
    if (record.encoderVersion !== encoderVersion(game)) {
      throw new StrategyError(
        `${label} reads ${game.id}'s tensors of encoder version ${record.encoderVersion}; this server encodes version ${
          encoderVersion(game)
        }`,
      );
    }
    const face = numericInfo(game, config);
    if ("numericFace" in face) {
      throw new StrategyError(`${label} cannot play this ${game.id} config: ${face.numericFace}`);
    }
    const shape = ["batch", ...face.observationShape];
    const output = ["batch", face.actionCount];
    if (JSON.stringify(shape) !== JSON.stringify(record.inputShape) || output[1] !== record.outputShape[1]) {
      throw new StrategyError(
        `${label} reads ${JSON.stringify(record.inputShape)} and answers ${
          JSON.stringify(record.outputShape)
        }; this ${game.id} config needs ${JSON.stringify(shape)} and ${JSON.stringify(output)}`,
      );
    }
    return { record, greedy };
  }

  /**
   * The seat `spec` names in a match of `config` seeded `seed`, sampling from the seat's own stream of
   * the seed (greedy draws nothing). Counts as a use of the version until `release`.
   */
  seat(spec: string, game: AnyGame, config: unknown, seed: Seed, seat: number): PolicySeat {
    const player = this.player(spec, game, config);
    this.uses.set(player.policy.id, this.usesOf(player.policy.id) + 1);
    return { name: player.name, policy: player.policy, seat: player.seatFor(seed, seat) };
  }

  /** The version `spec` names, for seats in many matches (headless runs: no use is counted). */
  player(spec: string, game: AnyGame, config: unknown): PolicyPlayer {
    const { record, greedy } = this.resolve(spec, game, config);
    const batcher = this.batcher(record);
    return {
      name: policySeatName(record.name, record.version, greedy),
      policy: { id: record.id, version: record.version, greedy },
      seatFor: (seed, seat) => policySeat(batcher, greedy ? undefined : new Rng(seed, policyStream(seat))),
    };
  }

  /**
   * A seat of version `id` let go (its match ended). A version no match seats any more that is not its name's
   * latest lets its session go too (a long training run registers hundreds); it loads again if seated again.
   */
  release(id: string): void {
    const left = (this.uses.get(id) ?? 0) - 1;
    if (left > 0) return void this.uses.set(id, left);
    this.uses.delete(id);
    this.unloadIfIdle(id);
  }

  /** Lets the session of version `id` go if no match seats it and a newer version of its name exists. */
  private unloadIfIdle(id: string): void {
    const record = this.byId.get(id);
    const loaded = this.loaded.get(id);
    if (!record || !loaded || this.usesOf(id) > 0 || this.byName.get(record.name)?.at(-1) === record) return;
    this.loaded.delete(id);
    loaded.then((b) => b.network.release(), () => {});
  }

  /** A session of its own for version `record` (exact evaluation), which the caller releases. */
  async network(record: PolicyRecord): Promise<PolicyNetwork> {
    const model = await this.registry.model(record.id);
    if (!model) throw new PolicyRegistryError("unknown_policy", `policy ${record.id} is no longer registered`);
    const { threads, device } = this.options;
    return await PolicyNetwork.load(model, getGame(record.game), record.config, { threads, device });
  }

  /** onnxruntime sessions held now (one per version some match has seated, until it is superseded and idle). */
  get sessions(): number {
    return this.loaded.size;
  }

  /** Live matches seating version `id` now. */
  usesOf(id: string): number {
    return this.uses.get(id) ?? 0;
  }

  /** The batcher of a version, loading its session on first use (a failed load is tried again next time). */
  batcher(record: PolicyRecord): Promise<PolicyBatcher> {
    let batcher = this.loaded.get(record.id);
    if (batcher) return batcher;
    batcher = this.load(record);
    this.loaded.set(record.id, batcher);
    batcher.catch(() => this.loaded.get(record.id) === batcher && this.loaded.delete(record.id));
    return batcher;
  }

  /**
   * A version's batcher over a network in a process of its own, within this runtime's budget. Any failure of
   * a batch (over its time or memory, a non-finite answer, an onnxruntime error) quarantines the version.
   */
  private async load(record: PolicyRecord): Promise<PolicyBatcher> {
    const { maxBatch, waitMs, threads, device, batchMs, memoryMb } = this.options;
    if (this.options.isolated === false) return new PolicyBatcher(await this.network(record), { maxBatch, waitMs });
    const model = await this.registry.model(record.id);
    if (!model) throw new PolicyRegistryError("unknown_policy", `policy ${record.id} is no longer registered`);
    const label = policySeatName(record.name, record.version, false);
    const network = await HostedNetwork.open(model, getGame(record.game, record.gameVersion), record.config, label, {
      threads,
      device,
      batchMs,
      memoryMb,
    }).catch((error) => {
      if (error instanceof PolicyBudgetError) this.quarantine(record.id, error.message);
      throw error;
    });
    const guarded: LogitSource = {
      size: network.size,
      actions: network.actions,
      logits: (observations, count) =>
        network.logits(observations, count).catch((error) => {
          // A batch asked just before its version was let go (see unloadIfIdle) is moot, not the model's fault.
          if (!(error instanceof NetworkReleasedError)) this.quarantine(record.id, (error as Error).message);
          throw error;
        }),
      release: () => network.release(),
    };
    return new PolicyBatcher(guarded, { maxBatch, waitMs });
  }

  /** Why version `id` is quarantined here, if it is. */
  quarantineOf(id: string): string | undefined {
    return this.quarantined.get(id);
  }

  /**
   * Takes version `id` out of play: no match seats it again, its process goes, and every listener (the live
   * matches) ends what seats it, in error.
   */
  quarantine(id: string, why: string): Promise<void> {
    if (this.quarantined.has(id)) return Promise.resolve();
    this.quarantined.set(id, why);
    const record = this.byId.get(id);
    console.error(
      `ludus: policy ${record ? policySeatName(record.name, record.version, false) : id} quarantined: ${why}`,
    );
    const loaded = this.loaded.get(id);
    this.loaded.delete(id);
    loaded?.then((b) => b.network.release(), () => {});
    return this.endSeatsOf(id, why);
  }

  private async endSeatsOf(id: string, why: string): Promise<void> {
    await Promise.all([...this.quarantineListeners].map((listener) => listener(id, why).catch(() => {})));
  }

  /** Hears every version quarantined (and resolves once the listener has ended what seats it); returns the unsubscribe. */
  onQuarantined(listener: (id: string, why: string) => Promise<void>): () => void {
    this.quarantineListeners.add(listener);
    return () => this.quarantineListeners.delete(listener);
  }

  /** Checks and registers a model; the next match that names its policy seats it. */
  async register(upload: PolicyUpload, model: Uint8Array): Promise<PolicyRecord> {
    const { threads, device, batchMs, memoryMb, isolated } = this.options;
    const record = await registerPolicy(this.registry, upload, model, { threads, device, batchMs, memoryMb, isolated });
    this.changes++;
    // Added in place, not re-indexed: a training run registers a version or two per step, tens of thousands in all.
    this.byId.set(record.id, record);
    const versions = [...this.versions(record.name), record].sort((a, b) => a.version - b.version);
    this.byName.set(record.name, versions);
    // The version it supersedes usually played its last match before this one was registered (a trainer
    // registers after its step's matches): its session goes now, or a long run would keep every version's.
    const superseded = versions.at(-2);
    if (superseded) this.unloadIfIdle(superseded.id);
    for (const listener of this.listeners) listener(record);
    return record;
  }

  /** Hears every version registered through this runtime; returns the unsubscribe. */
  onRegistered(listener: (record: PolicyRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The registered versions of `name`, oldest first. */
  versions(name: string): readonly PolicyRecord[] {
    return this.byName.get(name) ?? [];
  }

  /**
   * Removes a version no live match seats (refused with `in_use` otherwise), and lets its session go. A
   * quarantined version is removed all the same: the matches that seat it end in error first.
   */
  async remove(ref: string): Promise<PolicyRecord> {
    const found = this.byId.get(ref) ?? await this.registry.get(ref);
    const why = found && this.quarantined.get(found.id);
    if (found && why !== undefined && this.usesOf(found.id) > 0) await this.endSeatsOf(found.id, why);
    if (found && this.usesOf(found.id) > 0) {
      throw new PolicyRegistryError(
        "in_use",
        `${policySeatName(found.name, found.version, false)} plays in ${
          this.usesOf(found.id)
        } live match(es) here; remove it once they have ended`,
      );
    }
    // Out of the index first, so no match created while the store removes it can seat it.
    this.changes++;
    const rest = [...this.byId.values()].filter((r) => r.id !== found?.id);
    this.index(rest);
    let removed: PolicyRecord;
    try {
      removed = await this.registry.remove(found?.id ?? ref);
    } catch (error) {
      if (found) this.index([...this.byId.values(), found]);
      throw error;
    }
    const batcher = this.loaded.get(removed.id);
    this.loaded.delete(removed.id);
    await batcher?.then((b) => b.network.release(), () => {});
    return removed;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    const loaded = [...this.loaded.values()];
    this.loaded.clear();
    await Promise.all(loaded.map((b) => b.then((batcher) => batcher.network.release(), () => {})));
  }
}
