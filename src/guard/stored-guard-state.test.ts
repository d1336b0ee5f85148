import { describe, expect, it } from 'vitest';
import { resetUsageWarning } from '../meter/usage-warning.js';
import { withSum } from '../record-sum.js';
import {
  decodeGuardState,
  decodeUsageWarning,
  encodeGuardState,
  encodeUsageWarning,
} from './stored-guard-state.js';

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

describe("the usage_high warning's state kept beside a conversation", () => {
  const fired = { warned: true, compactedSinceWarning: true, budget: 8_000 };

  it('reads back what was kept, in the generation it was kept in', () => {
    expect(decodeUsageWarning(JSON.parse(JSON.stringify(encodeUsageWarning(fired, 'e1'))), 'e1')).toEqual(
      fired,
    );
    expect(decodeUsageWarning(encodeUsageWarning(resetUsageWarning(), null), null)).toEqual(
      resetUsageWarning(),
    );
    // Kept for a history since replaced: as if none was kept.
    expect(decodeUsageWarning(encodeUsageWarning(fired, 'e1'), 'e2')).toBe('absent');
    expect(decodeUsageWarning(undefined, 'e1')).toBe('absent');
  });

  it('refuses a state whose sum does not hold or is missing, or a field out of its kind', () => {
    const kept = encodeUsageWarning(fired, 'e1');
    expect(decodeUsageWarning({ ...kept, warned: false }, 'e1')).toBe('unreadable');
    const { sum: _, ...unsummed } = kept;
    expect(decodeUsageWarning(unsummed, 'e1')).toBe('unreadable');
    for (const bad of [
      { warned: 'yes' },
      { compactedSinceWarning: 1 },
      { budget: -5 },
      { budget: 1.5 },
      { epoch: 3 },
    ]) {
      expect(decodeUsageWarning(withSum({ ...unsummed, ...bad }), 'e1')).toBe('unreadable');
    }
  });
});
