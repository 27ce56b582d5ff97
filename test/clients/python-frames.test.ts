import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { projectPython, ROOT } from "../support/python.ts";

/**
 * The Python client's frame types (clients/python/ludus/frames.py) are kept by hand after protocol/frames.ts: this
 * keeps them equal. Every interface of the protocol has a TypedDict of its name with the same fields, the same ones
 * optional (`NotRequired`), the same `type` literal; every union of string literals is the same Literal.
 */

interface Shape {
  fields: Record<string, "required" | "optional">;
  type?: string;
}

/** The protocol's interfaces (their top-level fields) and string-literal unions, read from its source. */
function protocolShapes(): { interfaces: Record<string, Shape>; literals: Record<string, string[]> } {
  const source = readFileSync(`${ROOT}protocol/frames.ts`, "utf8");
  const interfaces: Record<string, Shape> = {};
  for (const [, name, body] of source.matchAll(/^export interface (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const shape: Shape = { fields: {} };
    for (const [, field, optional, type] of body.matchAll(/^ {2}readonly (\w+)(\?)?: ([^;\n]*)/gm)) {
      shape.fields[field] = optional ? "optional" : "required";
      if (field === "type") shape.type = JSON.parse(type);
    }
    interfaces[name] = shape;
  }
  const literals: Record<string, string[]> = {};
  for (const [, name, union] of source.matchAll(/^export type (\w+) =\s*([^;]*);/gm)) {
    const members = union.split("|").map((m) => m.trim()).filter(Boolean);
    if (members.every((m) => /^"[^"]*"$/.test(m))) literals[name] = members.map((m) => JSON.parse(m)).sort();
  }
  return { interfaces, literals };
}

const SCRIPT = `
import json, typing
from ludus import frames
shapes, literals = {}, {}
for name in dir(frames):
    value = getattr(frames, name)
    if isinstance(value, type) and typing.is_typeddict(value):
        # The module's annotations are strings (from __future__ import annotations), which TypedDict's own
        # required and optional keys do not read: NotRequired is found in the evaluated hints.
        hints = typing.get_type_hints(value, include_extras=True)
        optional = lambda k: k in value.__optional_keys__ or typing.get_origin(hints[k]) is frames.NotRequired
        fields = {k: "optional" if optional(k) else "required" for k in hints}
        shape = {"fields": fields}
        hints = typing.get_type_hints(value)
        if "type" in hints and typing.get_origin(hints["type"]) is typing.Literal:
            shape["type"] = typing.get_args(hints["type"])[0]
        shapes[name] = shape
    elif typing.get_origin(value) is typing.Literal and all(isinstance(a, str) for a in typing.get_args(value)):
        literals[name] = sorted(typing.get_args(value))
print(json.dumps({"interfaces": shapes, "literals": literals}))
`;

/** Fields the Python client adds to frames it hands a policy, never sent by the server (frames.py says so). */
const CLIENT_ADDITIONS: Record<string, Record<string, "optional">> = { TurnFrame: { error: "optional" } };

const { python, ready, suite } = projectPython(["ludus"], "the Python client's frame types");

describe.skipIf(!ready)(suite, () => {
  it("match protocol/frames.ts: every interface's fields and optional ones, every literal union", () => {
    // From the client's folder: its source, not a copy installed in the environment earlier, is what is checked.
    const run = spawnSync(python, ["-c", SCRIPT], { cwd: `${ROOT}clients/python`, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const py = JSON.parse(run.stdout) as ReturnType<typeof protocolShapes>;
    const ts = protocolShapes();
    expect(Object.keys(ts.interfaces).length).toBeGreaterThan(20); // the reader above still finds the protocol
    for (const [name, shape] of Object.entries(ts.interfaces)) {
      expect(py.interfaces[name], `frames.py has no TypedDict ${name}`).toBeDefined();
      const fields = { ...shape.fields, ...CLIENT_ADDITIONS[name] };
      expect(py.interfaces[name], `frames.py's ${name}`).toEqual({ ...shape, fields });
    }
    for (const [name, members] of Object.entries(ts.literals)) {
      expect(py.literals[name], `frames.py's ${name}`).toEqual(members);
    }
  });
});
