import type { GameTable } from "./types.ts";

/**
 * Each game's table, by game id: a game's folder holds its table (games/<id>/table.tsx, exporting `table`), so
 * no list here names a game. The bundler takes in every games/<id>/table.tsx through the one pattern below (an
 * esbuild glob import, inlined into the bundle), and `loadTables` fills this for the ids the server's registry
 * publishes (`GET /games`) before the app first renders, so a page reads it at once.
 */
export const TABLES: Record<string, GameTable> = {};

/** Loads the table of each of `ids`; a game whose folder has no table is left out (its page shows no board). */
export async function loadTables(ids: readonly string[]): Promise<void> {
  await Promise.all(ids.map(async (id) => {
    try {
      const module: { table: GameTable } = await import(`../../../games/${id}/table.tsx`);
      TABLES[id] = module.table;
    } catch (error) {
      console.warn(`no table for ${id}:`, error);
    }
  }));
}
