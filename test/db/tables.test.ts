import { afterEach, describe, expect, it } from "vitest";
import { MATCHES } from "../../db/tables/matches.ts";
import { STEPS } from "../../db/tables/steps.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

/**
 * The one definition of each table (db/tables/) against the schema the migrations make: every column the database
 * has is defined, with its type, and every defined column exists. A migration that adds a column fails here until
 * the definition has it, so the writer, the readers and the exports never miss it.
 */
for (const backend of BACKENDS) {
  describe(`the table definitions (${backend})`, () => {
    let open: TestStore | undefined;
    afterEach(async () => {
      await open?.close();
      open = undefined;
    });

    it("name every column of steps and matches, with the migrated schema's types", async () => {
      open = await openTestStore(backend);
      const { sql } = open.store;
      for (const table of [STEPS, MATCHES]) {
        const schema = await sql.query<{ name: string; type: string }>(
          `SELECT column_name AS name, data_type AS type FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = $1`,
          [table.name],
        );
        // The definition's types as the database names them (timestamptz is "timestamp with time zone").
        const defined = await Promise.all(
          table.columns.map(async (c) => {
            const [{ type }] = await sql.query<{ type: string }>("SELECT $1::regtype::text AS type", [c.type]);
            return { name: c.name, type };
          }),
        );
        const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
        expect(schema.length, table.name).toBeGreaterThan(0);
        expect(defined.sort(byName), table.name).toEqual(
          schema.map((c) => ({ name: c.name, type: c.type })).sort(byName),
        );
      }
    });
  });
}

describe("the table definitions' derived SQL", () => {
  it("write every column but those the database fills, and read back every one the record holds", () => {
    expect(STEPS.written.split(", ")).toEqual(STEPS.columns.map((c) => c.name));
    expect(STEPS.selected.split(", ")).not.toContain(STEPS.column.writer);
    expect(MATCHES.written.split(", ")).not.toContain(MATCHES.column.endSeq);
    // Capabilities are read only where named: never in the API's or the exports' SELECT.
    for (const secret of [MATCHES.column.invite, MATCHES.column.seatKeys, MATCHES.column.owner]) {
      expect(MATCHES.selected.split(", ")).not.toContain(secret);
    }
  });
});
