import { createHash, randomBytes } from "node:crypto";
import type { Sql } from "./sql.ts";
import { unstorable } from "./storable.ts";
import { MATCHES } from "./tables/matches.ts";

/** A registered policy: one version of a name, without its ONNX bytes (`PolicyRegistry.model` reads those). */
export interface PolicyRecord {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  /** The game, version, variant and config it was trained on. */
  readonly game: string;
  readonly gameVersion: number;
  readonly variant: string;
  readonly config: unknown;
  /** The numeric face's encoding its inputs follow. */
  readonly encoderVersion: number;
  /** ONNX shapes: a dimension is a number or a symbolic name (`["batch", 11]`). */
  readonly inputShape: readonly (number | string)[];
  readonly outputShape: readonly (number | string)[];
  /** Of the ONNX bytes, hex. */
  readonly sha256: string;
  readonly bytes: number;
  readonly createdAt: Date;
  /** The policy id it was trained from. */
  readonly parent: string | null;
  /** The trainer's run id. */
  readonly run: string | null;
  /** The export cursor the trainer had read up to. */
  readonly datasetCursor: string | null;
  readonly notes: string | null;
}

type Optional = "parent" | "run" | "datasetCursor" | "notes";

/** What `add` takes: the record less what the registry assigns; the lineage and notes may be left out. */
export type NewPolicy =
  & Omit<PolicyRecord, "id" | "version" | "sha256" | "bytes" | "createdAt" | Optional>
  & Partial<Pick<PolicyRecord, Optional>>
  & { readonly version?: number };

export type PolicyRegistryErrorCode = "duplicate" | "unknown_policy" | "in_use" | "bad_policy";

/** A registry request refused, with what was wrong and what is allowed. */
export class PolicyRegistryError extends Error {
  constructor(readonly code: PolicyRegistryErrorCode, message: string) {
    super(message);
    this.name = "PolicyRegistryError";
  }
}

const M = MATCHES.column;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Ids look like `pol_` and 12 base64url characters; names may not, so a reference is never both. */
const ID_PREFIX = "pol_";
const MAX_INT = 2 ** 31 - 1;
/** postgres.js sends bytea as hex text in one string: past this it would near V8's longest string. */
const MAX_MODEL_BYTES = 128 * 1024 * 1024;
/** The two-key advisory lock space of policy names (the migrations lock a single key). */
const NAME_LOCK = 7415282;

// Every column but `model`: listings and lookups never read the bytes.
const COLUMNS = `id, name, version, game, game_version, variant, config, encoder_version, input_shape, output_shape,
  sha256, bytes, created_at, parent, run, dataset_cursor, notes`;

type Row = Record<string, unknown>;

function toPolicy(r: Row): PolicyRecord {
  return {
    id: r.id as string,
    name: r.name as string,
    version: r.version as number,
    game: r.game as string,
    gameVersion: r.game_version as number,
    variant: r.variant as string,
    config: r.config,
    encoderVersion: r.encoder_version as number,
    inputShape: r.input_shape as (number | string)[],
    outputShape: r.output_shape as (number | string)[],
    sha256: r.sha256 as string,
    bytes: r.bytes as number,
    createdAt: r.created_at instanceof Date ? r.created_at : new Date(String(r.created_at)),
    parent: (r.parent ?? null) as string | null,
    run: (r.run ?? null) as string | null,
    datasetCursor: (r.dataset_cursor ?? null) as string | null,
    notes: (r.notes ?? null) as string | null,
  };
}

const bad = (message: string) => new PolicyRegistryError("bad_policy", message);

function checkName(name: unknown): string {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw bad(
      `policy name ${JSON.stringify(name)} is not allowed: a name is 1-64 characters, letters, digits, '_', '.' ` +
        "and '-', starting with a letter or digit (no ':' or '@')",
    );
  }
  if (name.startsWith(ID_PREFIX)) {
    throw bad(`policy name ${JSON.stringify(name)} is not allowed: names starting with ${ID_PREFIX} are policy ids`);
  }
  return name;
}

function checkInteger(field: string, value: unknown, min: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > MAX_INT) {
    throw bad(`\`${field}\` is ${JSON.stringify(value)}: it must be an integer from ${min} to ${MAX_INT}`);
  }
  return value as number;
}

function checkText(field: string, value: unknown, nullable: boolean): string | null {
  if (nullable && (value === undefined || value === null)) return null;
  if (typeof value !== "string" || (!nullable && value === "")) {
    throw bad(
      `\`${field}\` must be a ${nullable ? "string or null" : "non-empty string"}, not ${JSON.stringify(value)}`,
    );
  }
  const why = unstorable(value, field);
  if (why) throw bad(why);
  return value;
}

function checkShape(field: string, value: unknown): readonly (number | string)[] {
  const dimension = (d: unknown) =>
    (Number.isInteger(d) && (d as number) >= 1 && (d as number) <= MAX_INT) ||
    (typeof d === "string" && d !== "" && !unstorable(d));
  if (!Array.isArray(value) || value.length === 0 || !value.every(dimension)) {
    throw bad(
      `\`${field}\` is ${JSON.stringify(value)}: a shape is a non-empty array of dimensions, each a positive ` +
        'integer or a symbolic name ("batch")',
    );
  }
  return value;
}

/** The policy's fields checked one by one, each refusal naming the field and what it may be. */
function checkPolicy(policy: NewPolicy, model: Uint8Array) {
  if (!(model instanceof Uint8Array) || model.byteLength === 0 || model.byteLength > MAX_MODEL_BYTES) {
    throw bad(
      `the model must be the ONNX file's bytes, 1 byte to ${MAX_MODEL_BYTES / 1024 / 1024} MiB` +
        (model instanceof Uint8Array ? `, not ${model.byteLength} bytes` : ""),
    );
  }
  const configProblem = unstorable(policy.config, "config");
  if (policy.config === undefined || configProblem) {
    throw bad(configProblem ?? "`config` is missing: the game config the policy was trained on, as JSON");
  }
  return {
    name: checkName(policy.name),
    version: policy.version === undefined ? undefined : checkInteger("version", policy.version, 1),
    game: checkText("game", policy.game, false)!,
    gameVersion: checkInteger("gameVersion", policy.gameVersion, 1),
    variant: checkText("variant", policy.variant, false)!,
    config: policy.config,
    encoderVersion: checkInteger("encoderVersion", policy.encoderVersion, 0),
    inputShape: checkShape("inputShape", policy.inputShape),
    outputShape: checkShape("outputShape", policy.outputShape),
    parent: checkText("parent", policy.parent, true),
    run: checkText("run", policy.run, true),
    datasetCursor: checkText("datasetCursor", policy.datasetCursor, true),
    notes: checkText("notes", policy.notes, true),
  };
}

/** A reference as `get` reads it: an id, a name (its latest version) or `name@version`. */
function parseRef(ref: string): { id: string } | { name: string; version?: number } | undefined {
  if (typeof ref !== "string") return undefined;
  if (ref.startsWith(ID_PREFIX)) return { id: ref };
  const at = ref.indexOf("@");
  if (at < 0) return { name: ref };
  const version = Number(ref.slice(at + 1));
  if (!/^\d+$/.test(ref.slice(at + 1)) || version < 1 || version > MAX_INT) return undefined;
  return { name: ref.slice(0, at), version };
}

const REF_FORMS = "a policy id (pol_...), a name (its latest version) or name@version";

type Query = Pick<Sql, "query">;

async function lookup(sql: Query, ref: string): Promise<PolicyRecord | undefined> {
  const parsed = parseRef(ref);
  if (!parsed) return undefined;
  const rows = "id" in parsed
    ? await sql.query<Row>(`SELECT ${COLUMNS} FROM policies WHERE id = $1`, [parsed.id])
    : parsed.version === undefined
    ? await sql.query<Row>(`SELECT ${COLUMNS} FROM policies WHERE name = $1 ORDER BY version DESC LIMIT 1`, [
      parsed.name,
    ])
    : await sql.query<Row>(`SELECT ${COLUMNS} FROM policies WHERE name = $1 AND version = $2`, [
      parsed.name,
      parsed.version,
    ]);
  return rows.length ? toPolicy(rows[0]) : undefined;
}

/**
 * The policy registry: trained ONNX policies by name and version, with the game they play, the shapes they
 * take and their lineage, in the replay store beside the matches that seat them.
 */
export class PolicyRegistry {
  constructor(private readonly sql: Sql) {}

  /**
   * Registers `model` as a version of `policy.name`: the next one when `version` is left out (1 for a new
   * name), else exactly `version`, refused when it exists. Adds of one name are serialised by a lock on the
   * name, so two at once get two versions.
   */
  async add(policy: NewPolicy, model: Uint8Array): Promise<PolicyRecord> {
    const p = checkPolicy(policy, model);
    const sha256 = createHash("sha256").update(model).digest("hex");
    const id = ID_PREFIX + randomBytes(9).toString("base64url");
    return await this.sql.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [NAME_LOCK, p.name]);
      // The unique index answers both from its end: a long-trained name (tens of thousands of versions) costs
      // no more to add to than a new one.
      const [{ latest }] = await tx.query<{ latest: number | null }>(
        "SELECT max(version) AS latest FROM policies WHERE name = $1",
        [p.name],
      );
      const next = (latest ?? 0) + 1;
      if (
        p.version !== undefined &&
        (await tx.query("SELECT 1 FROM policies WHERE name = $1 AND version = $2", [p.name, p.version])).length
      ) {
        const taken = (await tx.query<{ version: number }>(
          "SELECT version FROM policies WHERE name = $1 ORDER BY version",
          [p.name],
        )).map((r) => r.version);
        throw new PolicyRegistryError(
          "duplicate",
          `policy ${p.name} already has version ${p.version} (versions ${taken.join(", ")}); ` +
            `the next free version is ${next}, which leaving the version out takes`,
        );
      }
      if (p.parent !== null) {
        const [parent] = await tx.query("SELECT 1 FROM policies WHERE id = $1", [p.parent]);
        if (!parent) {
          throw bad(`\`parent\` ${JSON.stringify(p.parent)} is not a registered policy id: give a policy's id or null`);
        }
      }
      const [row] = await tx.query<Row>(
        `INSERT INTO policies (id, name, version, game, game_version, variant, config, encoder_version, input_shape,
           output_shape, sha256, bytes, model, parent, run, dataset_cursor, notes)
         VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8, $9::text::jsonb, $10::text::jsonb, $11, $12, $13::bytea,
           $14, $15, $16, $17)
         RETURNING ${COLUMNS}`,
        [
          id,
          p.name,
          p.version ?? next,
          p.game,
          p.gameVersion,
          p.variant,
          JSON.stringify(p.config),
          p.encoderVersion,
          JSON.stringify(p.inputShape),
          JSON.stringify(p.outputShape),
          sha256,
          model.byteLength,
          model,
          p.parent,
          p.run,
          p.datasetCursor,
          p.notes,
        ],
      );
      return toPolicy(row);
    });
  }

  /** Every registered version, by name and then newest version first; only a game's, or a name's, if asked. */
  async list(filter: { readonly game?: string; readonly name?: string } = {}): Promise<PolicyRecord[]> {
    const clauses: string[] = [];
    const params: unknown[] = [];
    for (const [column, value] of [["game", filter.game], ["name", filter.name]] as const) {
      if (value === undefined) continue;
      params.push(value);
      clauses.push(`${column} = $${params.length}`);
    }
    const where = clauses.length ? ` WHERE ${clauses.join(" AND ")}` : "";
    const rows = await this.sql.query<Row>(
      `SELECT ${COLUMNS} FROM policies${where} ORDER BY name, version DESC`,
      params,
    );
    return rows.map(toPolicy);
  }

  /** The policy `ref` names: an id, a name (its latest version) or `name@version`; undefined when none. */
  get(ref: string): Promise<PolicyRecord | undefined> {
    return lookup(this.sql, ref);
  }

  /** The ONNX bytes of policy `id`, exactly as added. */
  async model(id: string): Promise<Uint8Array | undefined> {
    const [row] = await this.sql.query<{ model: Uint8Array }>("SELECT model FROM policies WHERE id = $1", [id]);
    if (!row) return undefined;
    // postgres.js gives a Buffer, PGlite a Uint8Array: both backends hand back the same type.
    return row.model.constructor === Uint8Array ? row.model : new Uint8Array(row.model);
  }

  /**
   * Removes the version `ref` names (as `get` reads it) and returns its record. Refused while an unfinished
   * match seats it: that match would have nothing to restore the seat from.
   */
  async remove(ref: string): Promise<PolicyRecord> {
    return await this.sql.transaction(async (tx) => {
      const policy = await lookup(tx, ref);
      if (!policy) {
        throw new PolicyRegistryError(
          "unknown_policy",
          `no registered policy is ${JSON.stringify(ref)}; name one by ${REF_FORMS}`,
        );
      }
      const seated = await tx.query<{ id: string }>(
        `SELECT ${M.id} AS id FROM matches WHERE ${M.endedAt} IS NULL
           AND ${M.seats} @> jsonb_build_array(jsonb_build_object('policyId', $1::text)) ORDER BY ${M.createdAt}, ${M.id}`,
        [policy.id],
      );
      if (seated.length) {
        const ids = seated.slice(0, 5).map((m) => m.id).join(", ") + (seated.length > 5 ? ", ..." : "");
        throw new PolicyRegistryError(
          "in_use",
          `policy ${policy.name}@${policy.version} (${policy.id}) seats ${seated.length} unfinished ` +
            `match${seated.length === 1 ? "" : "es"} (${ids}); it can be removed once they end`,
        );
      }
      await tx.query("DELETE FROM policies WHERE id = $1", [policy.id]);
      return policy;
    });
  }
}
