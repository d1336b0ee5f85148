import { describe, expect, it } from 'vitest';
import { withSum } from '../record-sum.js';
import { decodeGuardState, encodeGuardState } from './stored-guard-state.js';

describe('the guard state kept beside a conversation', () => {
  it('reads back what was kept', () => {
    const kept = { level: 'urgent' as const, usage: 0.87, compacted: 6_886 };
    expect(decodeGuardState(encodeGuardState(kept))).toEqual(kept);
    const none = { level: null, usage: null, compacted: null };
    expect(decodeGuardState(JSON.parse(JSON.stringify(encodeGuardState(none))))).toEqual(none);
  });

  it('is absent where none was kept', () => {
    expect(decodeGuardState(undefined)).toBe('absent');
    expect(decodeGuardState(null)).toBe('absent');
  });

  it('refuses a state whose sum does not hold or is missing', () => {
    const kept = encodeGuardState({ level: 'healthy', usage: 0.57, compacted: 6_886 });
    expect(decodeGuardState({ ...kept, compacted: null })).toBe('unreadable');
    const { sum: _, ...unsummed } = kept;
    expect(decodeGuardState(unsummed)).toBe('unreadable');
    expect(decodeGuardState('damaged')).toBe('unreadable');
    expect(decodeGuardState([kept])).toBe('unreadable');
  });

  it('refuses each field out of its kind, its sum holding', () => {
    const base = { level: 'healthy', usage: 0.5, compacted: 100 };
    const wrong: Array<Record<string, unknown>> = [
      { level: 'calm' },
      { level: 3 },
      { usage: -0.1 },
      { usage: Number.NaN },
      { usage: '0.5' },
      { compacted: 1.5 },
      { compacted: -1 },
      { compacted: '100' },
    ];
    for (const field of wrong) expect(decodeGuardState(withSum({ ...base, ...field }))).toBe('unreadable');
  });
});
