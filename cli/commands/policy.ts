import { readFileSync } from "node:fs";
import process from "node:process";
import { type Command, Option } from "commander";
import { games } from "../../games/registry.ts";
import { type PolicyRecord, PolicyRegistryError } from "../../db/policies.ts";
import { PolicyError } from "../../policies/onnx/network.ts";
import { type PolicyUpload, registerPolicy } from "../../policies/onnx/register.ts";
import type { Io } from "../io.ts";
import { integerIn, jsonObject, storeFlags, storeLocation } from "../options.ts";
import { openStoreOrServer } from "../server-call.ts";
import { serverRegistry } from "../server-policies.ts";

/**
 * `ludus policy add|list|show|remove`: the policy registry, in a store opened as `ludus export` opens it,
 * or through a running server (`--server`, which holds its embedded store; adding and removing there takes
 * an admin token).
 */

interface StoreFlags {
  dataDir: string;
  databaseUrl?: string;
  server?: URL;
  token?: string;
  json?: boolean;
}

interface AddFlags extends StoreFlags {
  game: string;
  name: string;
  variant?: string;
  config?: Record<string, unknown>;
  versionNumber?: number;
  parent?: string;
  run?: string;
  cursor?: string;
  notes?: string;
}

/** The registry's answer to one request, from the store or from a server. */
interface Registry {
  add(upload: PolicyUpload, model: Uint8Array): Promise<PolicyRecord>;
  list(filter: { game?: string; name?: string }): Promise<PolicyRecord[]>;
  get(ref: string): Promise<PolicyRecord | undefined>;
  remove(ref: string): Promise<PolicyRecord>;
}

async function withStore<T>(flags: StoreFlags, command: Command, work: (registry: Registry) => Promise<T>): Promise<T> {
  if (flags.server) return await work(serverRegistry(flags.server, flags.token ?? process.env.LUDUS_TOKEN));
  const opened = await openStoreOrServer(storeLocation(flags, command));
  if ("server" in opened) return await work(serverRegistry(opened.server, opened.token));
  const { store } = opened;
  try {
    return await work({
      add: (upload, model) => registerPolicy(store.policies, upload, model),
      list: (filter) => store.policies.list(filter),
      get: (ref) => store.policies.get(ref),
      remove: (ref) => store.policies.remove(ref),
    });
  } finally {
    await store.close();
  }
}

const label = (r: PolicyRecord) => `${r.name}@${r.version}`;
const shape = (dims: readonly (number | string)[]) => `[${dims.join(", ")}]`;
const kb = (bytes: number) => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);

function details(r: PolicyRecord): string {
  return [
    `${label(r)}  (${r.id})`,
    `  game      ${r.game} v${r.gameVersion} (${r.variant}), encoder v${r.encoderVersion}`,
    `  shapes    input ${shape(r.inputShape)}, output ${shape(r.outputShape)}`,
    `  model     ${kb(r.bytes)}, sha256 ${r.sha256}`,
    `  created   ${r.createdAt.toISOString()}`,
    ...(r.parent ? [`  parent    ${r.parent}`] : []),
    ...(r.run ? [`  run       ${r.run}`] : []),
    ...(r.datasetCursor ? [`  cursor    ${r.datasetCursor}`] : []),
    ...(r.notes ? [`  notes     ${r.notes}`] : []),
  ].join("\n") + "\n";
}

/** The store flags every subcommand takes. */
function storeOptions(command: Command): Command {
  return storeFlags(
    command,
    "through a running server instead (it holds its embedded store), e.g. http://127.0.0.1:2567",
  )
    .option("--token <token>", "with --server: an admin token, to add or remove (default: $LUDUS_TOKEN)")
    .option("--json", "print JSON");
}

export function registerPolicyCommands(program: Command, io: Io): void {
  const policy = program.command("policy").description("register, list, show and remove ONNX policies");
  storeOptions(
    policy.command("add <file>")
      .description("check an ONNX model against a game's numeric face and register it as the name's next version")
      .addOption(new Option("--game <id>", "the game it plays").choices(games.map((g) => g.id)).makeOptionMandatory())
      .requiredOption("--name <name>", "the policy's name (1-64 letters, digits, '_', '.', '-')")
      .option("--variant <name>", "the variant it plays (default: the game's default variant)")
      .option("--config <json>", "config overrides as a JSON object, or @file.json", jsonObject)
      .option("--version-number <n>", "a fixed version (default: the name's next)", integerIn(1, 2 ** 31 - 1))
      .option("--parent <ref>", "the policy it was trained from: an id, a name (latest) or name@version")
      .option("--run <id>", "the trainer run that made it")
      .option("--cursor <cursor>", "the dataset cursor it was trained up to")
      .option("--notes <text>", "free notes"),
  ).action(async (file: string, flags: AddFlags, command: Command) => {
    let model: Uint8Array;
    try {
      model = readFileSync(file);
    } catch (error) {
      throw new PolicyError(`cannot read ${file}: ${(error as Error).message}`);
    }
    const upload: PolicyUpload = {
      name: flags.name,
      game: flags.game,
      variant: flags.variant,
      config: flags.config,
      version: flags.versionNumber,
      parent: flags.parent,
      run: flags.run,
      datasetCursor: flags.cursor,
      notes: flags.notes,
    };
    const record = await withStore(flags, command, (registry) => registry.add(upload, model));
    if (flags.json) return io.out(JSON.stringify(record) + "\n");
    io.out(`registered ${details(record)}`);
    io.err(`ludus: seat it with policy:${record.name} (its latest version) or policy:${label(record)}\n`);
  });
  storeOptions(
    policy.command("list")
      .description("list the registered policies, by name and version")
      .option("--game <id>", "only policies for this game")
      .option("--name <name>", "only this name's versions"),
  ).action(async (flags: StoreFlags & { game?: string; name?: string }, command: Command) => {
    const records = await withStore(flags, command, (r) => r.list({ game: flags.game, name: flags.name }));
    if (flags.json) return io.out(JSON.stringify(records) + "\n");
    if (records.length === 0) return io.err("ludus: no policy is registered; `ludus policy add` registers one\n");
    for (const r of records) {
      io.out(
        `${label(r).padEnd(24)}  ${r.id}  ${r.game} (${r.variant})  ${shape(r.inputShape)} → ${shape(r.outputShape)}  ${
          kb(r.bytes)
        }  ${r.createdAt.toISOString()}${r.parent ? `  parent ${r.parent}` : ""}\n`,
      );
    }
  });
  storeOptions(
    policy.command("show <ref>").description("one policy's record and lineage: an id, a name (latest) or name@version"),
  ).action(async (ref: string, flags: StoreFlags, command: Command) => {
    const record = await withStore(flags, command, (r) => r.get(ref));
    if (!record) throw new PolicyRegistryError("unknown_policy", `no registered policy ${ref}; \`ludus policy list\``);
    io.out(flags.json ? JSON.stringify(record) + "\n" : details(record));
  });
  storeOptions(
    policy.command("remove <ref>").description("remove one version (refused while a live match seats it)"),
  ).action(async (ref: string, flags: StoreFlags, command: Command) => {
    const removed = await withStore(flags, command, (r) => r.remove(ref));
    if (flags.json) return io.out(JSON.stringify(removed) + "\n");
    io.err(`ludus: removed ${label(removed)} (${removed.id})\n`);
  });
  for (const sub of policy.commands) {
    sub.configureOutput({ writeOut: io.out, writeErr: io.err }).showHelpAfterError(
      `(run \`ludus policy ${sub.name()} --help\` for usage)`,
    ).exitOverride();
  }
}
