import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/support/global-setup.ts"],
    // The suite must pass on a machine several times slower than ours and under load: a test store or
    // server can take well over ten seconds to start there (PGlite alone took 8-14 s), so hooks get the
    // same generous bound as tests. Tests wait for events, never for fixed times.
    // Most files wait on servers, processes and stores rather than compute: two at a time on two cores took the
    // suite from 29 to 19-22 minutes (vitest ran one at a time here by default).
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
