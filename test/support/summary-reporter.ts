import type { Reporter, TestModule } from "vitest/node";
import { howToEnable, type Service, SERVICES, serviceUrl } from "./services.ts";

/**
 * Ends the run with one line for each service this machine did not offer (what was skipped, how to run it), then one
 * plain line, `N passed, N failed, N skipped`, that any CI log reader understands.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
      if (module.state() === "failed" && module.children.size === 0) counts.failed++;
    }
    for (const service of Object.keys(SERVICES) as Service[]) {
      if (!serviceUrl(service)) console.log(`\n${howToEnable(service)}.`);
    }
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
