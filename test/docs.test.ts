import { describe, expect, it } from 'vitest';
import { documentAll } from '../scripts/docs.js';

describe('the API reference', () => {
  it('documents every export of every public entry point', async () => {
    const { entries, sections, missing } = await documentAll();
    expect(entries.map((e) => e.specifier)).toContain('contextkit');
    expect(missing).toEqual([]);
    expect(sections.reduce((n, s) => n + s.items.length, 0)).toBeGreaterThan(100);
  });
});
