import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { clientFrameFields } from "../server/gateway/client-frames.ts";
import { ROOT } from "./support/python.ts";

/**
 * docs/protocol.md's table of client frames is what a bot author writes a bot from: every frame type the server reads,
 * with its fields and which may be absent (`?`), as the schemas the server parses with say.
 */

/** The table under "### Client → server": each type's fields, `?` marking those that may be absent. */
function documented(): Record<string, Record<string, "required" | "optional">> {
  const doc = readFileSync(`${ROOT}docs/protocol.md`, "utf8");
  const table = doc.slice(doc.indexOf("### Client → server")).split("\n\n")[1];
  const rows = table.split("\n").slice(2).map((line) => line.split("|").map((cell) => cell.trim()));
  return Object.fromEntries(rows.map(([, type, cell]) => {
    const fields = cell.replace(/\([^)]*\)/g, "");
    // `action` or `actionId`: the frame has one of the two, so each alone may be absent.
    const either = new Set([...fields.matchAll(/`(\w+)` or `(\w+)`/g)].flatMap(([, a, b]) => [a, b]));
    const named = [...fields.matchAll(/`(\w+)(\?)?`/g)].map(([, field, optional]) =>
      [field, optional || either.has(field) ? "optional" : "required"] as const
    );
    return [type.replaceAll("`", ""), Object.fromEntries([["type", "required"], ...named])];
  }));
}

describe("docs/protocol.md", () => {
  it("lists every client frame with the fields the server reads, the optional ones marked", () => {
    expect(documented()).toEqual(clientFrameFields());
  });
});
