import { run } from "../../cli/main.ts";

/** Runs the CLI in-process and captures what it prints. */
export async function ludus(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}
