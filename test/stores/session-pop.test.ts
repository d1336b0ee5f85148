/**
 * `ContextkitSession.popItem()` against `addItems` from another session (another process's
 * store instance) on every store: the pop is one atomic step of the store, so an item added
 * meanwhile is either the one popped or kept, never acknowledged and then wiped.
 */

import type { AgentInputItem } from '@openai/agents';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextkitSession } from '../../src/integrations/openai-agents/session.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const SESSION = 'popped session';
const ROUNDS = 20;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const said = (text: string): AgentInputItem => ({ role: 'user', content: text });

async function race(first: ConversationStore, second: ConversationStore): Promise<void> {
  const a = new ContextkitSession({ store: first, conversationId: SESSION });
  const b = new ContextkitSession({ store: second, conversationId: SESSION });
  await a.addItems([said('seed')]);
  const popped: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [, item] = await Promise.all([
      a.addItems([said(`a${round}`)]),
      b.popItem(),
      b.addItems([said(`b${round}`)]),
    ]);
    if (item) popped.push(String((item as { content: unknown }).content));
  }
  const kept = (await a.getAllItems()).map((item) => String((item as { content: unknown }).content));
  const written = ['seed', ...Array.from({ length: ROUNDS }, (_, r) => [`a${r}`, `b${r}`]).flat()];
  expect(popped).toHaveLength(ROUNDS);
  expect([...kept, ...popped].sort()).toEqual(written.sort());
}

describe('ContextkitSession.popItem racing addItems loses nothing', () => {
  it('memory', async () => {
    const store = new MemoryStore();
    await race(store, store);
  });

  for (const driver of sharedDrivers(cleanups, [SESSION])) {
    it(driver.name, { ...skipFor(driver.missing), timeout: 60_000 }, async () => {
      const spec = await driver.spec();
      const first = await openSpec(spec);
      const second = await openSpec(spec);
      try {
        await race(first, second);
      } finally {
        await first.close();
        await second.close();
      }
    });
  }
});
