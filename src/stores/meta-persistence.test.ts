import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory.js';
import { metaPersistence } from './meta-persistence.js';

describe('metaPersistence', () => {
  it('keeps values in one metadata field, beside the others, and loses no concurrent write', async () => {
    const store = new MemoryStore();
    await store.setMeta('c', { plan: { v: 1 } });
    const p = metaPersistence(store, 'c', 'calibration');
    await Promise.all(Array.from({ length: 20 }, (_, i) => p.set(`k${String(i).padStart(2, '0')}`, { i })));
    expect(await p.list('k')).toHaveLength(20);
    expect(await p.get('k07')).toEqual({ i: 7 });
    expect(await p.has('nope')).toBe(false);
    await p.delete('k07');
    expect(await p.get('k07')).toBeNull();
    expect((await store.getMeta('c')).value?.plan).toEqual({ v: 1 });
  });
});
