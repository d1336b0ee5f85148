import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../errors.js';
import { MemoryStore } from '../stores/memory.js';
import { History } from './history.js';

const clock = () => new Date('2026-01-02T03:04:05.000Z');

describe('History', () => {
  it('stores a frozen copy of the message and its metadata; the caller’s objects stay its own', async () => {
    const history = new History({ store: null, conversationId: 'c', now: clock });
    const metadata = { tags: ['a'], nested: { n: 1 } };
    const message = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
    const { entry } = await history.add(message, { metadata, pinned: true });
    metadata.tags.push('b');
    metadata.nested.n = 2;
    (message.content[0] as { text: string }).text = 'changed';
    expect(entry.metadata).toMatchObject({
      tags: ['a'],
      nested: { n: 1 },
      pinned: true,
      timestamp: clock().toISOString(),
    });
    expect(entry.message).toEqual({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
    expect(Object.isFrozen(entry.metadata)).toBe(true);
    expect(Object.isFrozen(metadata.tags)).toBe(false);
  });

  it('refuses metadata that is not plain data, storing nothing', async () => {
    const store = new MemoryStore();
    const history = new History({ store, conversationId: 'c', now: clock });
    const error = await history
      .add({ role: 'user', content: 'hi' }, { metadata: { callback: () => 1 } as never })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as Error).message).toMatch(/^messages\[0\]\.metadata: expected a plain JSON object/);
    expect(history.entries).toHaveLength(0);
    expect(await store.head('c')).toBe(0);
  });

  it('loads what the store holds, and a replace or clear changes its generation', async () => {
    const store = new MemoryStore();
    const first = new History({ store, conversationId: 'c', now: clock });
    await first.add({ role: 'user', content: 'one' });
    const second = new History({ store, conversationId: 'c', now: clock });
    await second.load();
    expect(second.loadedFromStore).toBe(true);
    expect(second.messages()).toEqual([{ role: 'user', content: 'one' }]);
    const generation = second.generation;
    expect(await second.replace([{ role: 'user', content: 'two' }])).toBe(false);
    expect(await second.replace([{ role: 'user', content: 'two' }], { replace: true })).toBe(true);
    expect(second.generation).toBeGreaterThan(generation);
    expect(await store.read('c')).toHaveLength(1);
    await second.clear();
    expect(second.entries).toHaveLength(0);
    expect(await store.head('c')).toBe(0);
  });
});
