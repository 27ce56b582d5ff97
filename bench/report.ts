/**
 * Runs a benchmark the way every one here ends: its one JSON object on stdout, and `cleanUp` (stop the
 * servers it started, remove their data) run once however the run ends, Ctrl-C and SIGTERM included.
 */
export async function report(bench: () => Promise<unknown>, cleanUp: () => Promise<void>): Promise<void> {
  let cleaning: Promise<void> | undefined;
  const once = () => (cleaning ??= cleanUp());
  const interrupted = () => once().finally(() => Deno.exit(130));
  Deno.addSignalListener("SIGINT", interrupted);
  Deno.addSignalListener("SIGTERM", interrupted);
  try {
    console.log(JSON.stringify(await bench(), null, 2));
  } finally {
    await once();
    Deno.removeSignalListener("SIGINT", interrupted);
    Deno.removeSignalListener("SIGTERM", interrupted);
  }
}
