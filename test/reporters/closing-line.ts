import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends every run with the plain line CI reads, `N passed, N failed, N skipped`, counted over test
 * cases. A module that failed to load, or an unhandled error, counts as a failure.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let cases = 0;
      for (const test of mod.children.allTests()) {
        cases++;
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (cases === 0 && mod.state() === 'failed') failed++;
      else if (mod.errors().length > 0) failed++;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
