import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';

/** Where a skipped test's reason is: its own meta, or the nearest enclosing suite's. */
function skipReason(test: TestCase): string | undefined {
  const result = test.result();
  if (result.state === 'skipped' && result.note) return result.note;
  let node: TestCase | TestCase['parent'] = test;
  for (;;) {
    const reason = node.meta().skipReason;
    if (reason) return reason;
    if (node.type === 'module') return undefined;
    node = node.parent;
  }
}

/** The skipped tests of one reason: how many, and in which files. */
interface SkipGroup {
  count: number;
  files: Set<string>;
}

/**
 * The lines that list what was skipped and why, one per reason, largest first. A test skipped
 * with no recorded reason (a bare `it.skip`, or a `skipIf` that does not use
 * `test/support/requirements.ts`) is listed by file, so nothing skips unmentioned.
 */
export function skipLines(groups: ReadonlyMap<string, SkipGroup>, total: number): string[] {
  if (total === 0) return [];
  const lines = [`skipped ${total} test${total === 1 ? '' : 's'}:`];
  const sorted = [...groups].sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]));
  for (const [reason, group] of sorted) {
    const files = [...group.files].sort();
    const where =
      files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;
    lines.push(`  ${group.count} in ${where}: ${reason}`);
  }
  return lines;
}

/**
 * Ends every run by listing what was skipped and why, then the plain line CI reads,
 * `N passed, N failed, N skipped`, counted over test cases, always last. A module that failed to
 * load, or an unhandled error, counts as a failure.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const groups = new Map<string, SkipGroup>();
    for (const mod of testModules) {
      let cases = 0;
      const file = relative(process.cwd(), mod.moduleId);
      for (const test of mod.children.allTests()) {
        cases++;
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else {
          skipped++;
          const reason =
            skipReason(test) ??
            'not run, no reason recorded (it.skip, a skipIf without a reason, or left out by -t or .only)';
          const group = groups.get(reason) ?? { count: 0, files: new Set<string>() };
          group.count++;
          group.files.add(file);
          groups.set(reason, group);
        }
      }
      if (cases === 0 && mod.state() === 'failed') failed++;
      else if (mod.errors().length > 0) failed++;
    }
    failed += unhandledErrors.length;
    const listed = skipLines(groups, skipped);
    process.stdout.write(
      `\n${listed.length > 0 ? `${listed.join('\n')}\n` : ''}${passed} passed, ${failed} failed, ${skipped} skipped\n`,
    );
  }
}
