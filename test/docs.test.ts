import { describe, expect, it } from 'vitest';
import { documentAll, staleness } from '../scripts/docs.js';

describe('the API reference', () => {
  it('documents every export of every public entry point', async () => {
    const { entries, sections, missing } = await documentAll();
    expect(entries.map((e) => e.specifier)).toContain('contextkit');
    expect(missing).toEqual([]);
    expect(sections.reduce((n, s) => n + s.items.length, 0)).toBeGreaterThan(100);
  });

  it('--check finds the first line where docs/api.md differs from what the source gives', () => {
    expect(staleness('# API\n\nsame\n', '# API\n\nsame\n')).toBeUndefined();
    expect(staleness(undefined, '# API\n')).toBe('it does not exist');
    expect(staleness('# API\n\nold text\n', '# API\n\nnew text\n')).toBe(
      'line 3 is "old text" where the source gives "new text"',
    );
    expect(staleness('# API\n', '# API\n\nmore\n')).toBe(
      'line 3 is (end of file) where the source gives "more"',
    );
  });
});
