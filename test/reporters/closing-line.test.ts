import { describe, expect, it } from 'vitest';
import { skipLines } from './closing-line.js';

describe('the closing report of skipped tests', () => {
  it('lists each reason once, largest first, with its count and files', () => {
    const groups = new Map([
      ['no Chromium at /usr/bin/chromium', { count: 7, files: new Set(['test/report/browser.test.ts']) }],
      [
        'no Redis: nothing answered',
        { count: 46, files: new Set(['src/stores/redis.test.ts', 'test/stores/corruption.test.ts']) },
      ],
      ['many files', { count: 5, files: new Set(['e.ts', 'a.ts', 'c.ts', 'b.ts', 'd.ts']) }],
    ]);
    expect(skipLines(groups, 58)).toEqual([
      'skipped 58 tests:',
      '  46 in src/stores/redis.test.ts, test/stores/corruption.test.ts: no Redis: nothing answered',
      '  7 in test/report/browser.test.ts: no Chromium at /usr/bin/chromium',
      '  5 in a.ts, b.ts, c.ts and 2 more: many files',
    ]);
  });

  it('says nothing when nothing was skipped', () => {
    expect(skipLines(new Map(), 0)).toEqual([]);
  });
});
