import { describe, expect, it } from 'vitest';
import { testStore } from '../../test/support/store-conformance.js';
import { MemoryStore } from './memory.js';

testStore('memory', async () => ({ store: new MemoryStore() }));

describe('MemoryStore', () => {
  it('keeps instances apart', async () => {
    const a = new MemoryStore();
    const b = new MemoryStore();
    await a.append('c', [{ message: { role: 'user', content: 'x' }, metadata: { timestamp: 't' } }]);
    expect(await b.head('c')).toBe(0);
    expect(a.kind).toBe('memory');
  });

  it('rejects a value it cannot copy, appending nothing', async () => {
    const store = new MemoryStore();
    const entry = {
      message: { role: 'user' as const, content: 'x' },
      metadata: { timestamp: 't', fn: () => 1 },
    };
    await expect(
      store.append('c', [{ message: { role: 'user', content: 'ok' }, metadata: { timestamp: 't' } }, entry]),
    ).rejects.toThrow(/cannot be copied/);
    expect(await store.head('c')).toBe(0);
  });
});
