import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { documentEntry, entryPoints } from '../scripts/docs.js';

describe('the API reference', () => {
  it('documents every export of every public entry point', async () => {
    const entries = await entryPoints();
    expect(entries.map((e) => e.specifier)).toContain('contextkit');
    const program = ts.createProgram(
      entries.map((e) => e.file),
      {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        skipLibCheck: true,
        noEmit: true,
      },
    );
    const missing: string[] = [];
    let documented = 0;
    for (const entry of entries) {
      const { items, undocumented } = documentEntry(program, entry);
      documented += items.length;
      missing.push(...undocumented.map((u) => `${entry.specifier}: ${u}`));
    }
    expect(missing).toEqual([]);
    expect(documented).toBeGreaterThan(100);
  });
});
