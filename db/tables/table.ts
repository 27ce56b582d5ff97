/**
 * A table of the replay store defined once: each column's SQL name and type, the record field it holds and how a
 * value goes in (a row of `json_to_recordset`, a line of COPY) and comes back out. The write path's statements, the
 * readers' SELECT lists and the exports' SQL are all derived from it, so a column is named in one place besides the
 * migrations (test/db/tables.test.ts checks it against the migrated schema).
 */

/** The SQL types the store's columns have, spelled as their CREATE TABLE spells them. */
export type SqlType = "text" | "integer" | "bigint" | "real" | "boolean" | "json" | "jsonb" | "timestamptz";

/** How one column is written and read. `R`: the record, `W`: what its writer adds (its id, its owner). */
export interface ColumnSpec<R, W, V> {
  readonly name: string;
  readonly type: SqlType;
  /**
   * Its value in a written row; `false` for a column the database fills (a trigger's sequence). By default the
   * record's field of the same key, or null.
   */
  readonly write?: ((record: R, by: W) => unknown) | false;
  /** Its record field's value from the stored one; by default the stored value, or null. `false`: never read back. */
  readonly read?: ((stored: unknown) => V) | false;
  /** Read back only by the readers that name it (a capability, never served): left out of `selected`. */
  readonly restricted?: true;
}

/**
 * The columns of a table, keyed by their record field (every field of `R` has one), and by `Extra` for those
 * holding what the writer adds rather than the record (never read back into it).
 */
export type ColumnSpecs<R, W, Extra extends string> =
  & { readonly [K in keyof R]-?: ColumnSpec<R, W, R[K]> }
  & {
    readonly [K in Extra]: ColumnSpec<R, W, never> & {
      readonly write: (record: R, by: W) => unknown;
      readonly read: false;
    };
  };

/** A column with its derived codecs. */
export interface Column<R, W> {
  readonly key: string;
  readonly name: string;
  readonly type: SqlType;
  /** Its value in a `json_to_recordset` row; undefined for a column the database fills. */
  readonly param?: (record: R, by: W) => unknown;
  /** Its value as a field of a COPY text line; undefined for a column the database fills. */
  readonly copy?: (record: R, by: W) => string;
  /** Its record field's value from the stored one; undefined for a column never read back. */
  readonly read?: (stored: unknown) => unknown;
  readonly restricted: boolean;
}

export interface Table<R, W, K extends string> {
  readonly name: string;
  /** Every column in definition order. */
  readonly columns: readonly Column<R, W>[];
  /** The SQL name of each column, by key: for SQL that names a column (`${STEPS.column.latencyMs}`). */
  readonly column: { readonly [key in K]: string };
  /** The written columns' names, for an INSERT or COPY column list. */
  readonly written: string;
  /** The written columns as `json_to_recordset`'s column definitions (`name type, ...`). */
  readonly recordset: string;
  /** The columns read back into a record, for a SELECT list (less the restricted ones). */
  readonly selected: string;
  /** A record as a row of `json_to_recordset` (keyed by column name). */
  row(record: R, by: W): Record<string, unknown>;
  /** A record as one line of COPY's text format over `written`, newline included. */
  copyLine(record: R, by: W): string;
  /** The record from a row read back (a restricted field only where the row has its column). */
  record(row: Record<string, unknown>): R;
}

/**
 * JSON that holds a NUL or a surrogate as an escape: a `json` column takes it through COPY, but the batch statement
 * (which reads it as text) refuses it, as every reader that does the same would.
 */
const ESCAPED_UNSTORABLE = /\\u(0000|d[89a-f])/i;

/** A row COPY must not write: the batch statement writes it, or refuses it, instead. */
export class NotCopyable extends Error {}

const NULL = "\\N";

/** A JSON value in COPY's text format: `\N` for null, backslashes doubled (JSON holds no raw tab or newline). */
function copyJson(value: unknown): string {
  if (value === null || value === undefined) return NULL;
  const json = JSON.stringify(value);
  if (ESCAPED_UNSTORABLE.test(json)) throw new NotCopyable();
  return json.replaceAll("\\", "\\\\");
}

const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** Each type's value in COPY's text format. */
const COPY_TEXT: Record<SqlType, (value: unknown) => string> = {
  text: (v) => (v === null || v === undefined ? NULL : (v as string).replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c])),
  integer: (v) => (v === null || v === undefined ? NULL : String(v)),
  bigint: (v) => (v === null || v === undefined ? NULL : String(v)),
  real: (v) => (v === null || v === undefined ? NULL : String(v)),
  boolean: (v) => (v === null || v === undefined ? NULL : v ? "t" : "f"),
  json: copyJson,
  jsonb: copyJson,
  timestamptz: (v) => (v === null || v === undefined ? NULL : (v as Date).toISOString()),
};

const orNull = (value: unknown) => value ?? null;

/** The table `name` of `specs`, in their order, with everything derived from them (once, at module load). */
export function defineTable<R, W, Extra extends string = never>(
  name: string,
  specs: ColumnSpecs<R, W, Extra>,
): Table<R, W, Extract<keyof R, string> | Extra> {
  const columns: Column<R, W>[] = Object.entries(specs as Record<string, ColumnSpec<R, W, unknown>>).map(
    ([key, spec]) => {
      const param = spec.write === false
        ? undefined
        : spec.write ?? ((record: R) => (record as Record<string, unknown>)[key] ?? null);
      const text = COPY_TEXT[spec.type];
      return {
        key,
        name: spec.name,
        type: spec.type,
        param,
        copy: param && ((record: R, by: W) => text(param(record, by))),
        read: spec.read === false ? undefined : spec.read ?? orNull,
        restricted: spec.restricted === true,
      };
    },
  );
  const written = columns.filter((c) => c.param !== undefined);
  const read = columns.filter((c) => c.read !== undefined);
  const params = written.map((c) => [c.name, c.param!] as const);
  const copies = written.map((c) => c.copy!);
  const fields = read.map((c) => [c.key, c.name, c.read!, c.restricted] as const);
  return {
    name,
    columns,
    column: Object.fromEntries(columns.map((c) => [c.key, c.name])) as Table<R, W, Extract<keyof R, string> | Extra>[
      "column"
    ],
    written: written.map((c) => c.name).join(", "),
    recordset: written.map((c) => `${c.name} ${c.type}`).join(", "),
    selected: read.filter((c) => !c.restricted).map((c) => c.name).join(", "),
    row(record, by) {
      const row: Record<string, unknown> = {};
      for (const [column, param] of params) row[column] = param(record, by);
      return row;
    },
    copyLine(record, by) {
      let line = copies[0](record, by);
      for (let i = 1; i < copies.length; i++) line += "\t" + copies[i](record, by);
      return line + "\n";
    },
    record(row) {
      const record: Record<string, unknown> = {};
      for (const [field, column, read, restricted] of fields) {
        if (!restricted || column in row) record[field] = read(row[column]);
      }
      return record as R;
    },
  };
}

/** A timestamp as read back: a Date (postgres.js, PGlite) or its text. */
export const storedDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
