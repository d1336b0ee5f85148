/**
 * Any store URL in the constructor (issue 13): `new ContextManager({ store: 'sqlite:…' })` and
 * `redis://…` connect on first use and then behave as the opened store: messages persist, a second
 * manager resumes them, and SQLite's full-text index serves recall. (Postgres URLs open the same
 * way; its tests use a schema of their own, which a URL cannot name, so they pass the store.)
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import { openStore } from '../../src/stores/resolve.js';
import { missing, REDIS_URL, skipFor } from '../support/requirements.js';

const dir = mkdtempSync(join(tmpdir(), 'ck-url-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function roundTrip(url: string, conversationId: string): Promise<void> {
  const first = new ContextManager({ store: url, conversationId, recall: true });
  await first.addMessage({ role: 'user', content: 'the lighthouse keeper logs the storm' });
  await first.addMessage({ role: 'assistant', content: 'noted' });
  await first.close();
  const second = new ContextManager({ store: url, conversationId, recall: true });
  try {
    expect((await second.getMessages()).map((m) => m.content)).toEqual([
      'the lighthouse keeper logs the storm',
      'noted',
    ]);
    const hits = await second.recall('lighthouse');
    expect(hits.length).toBeGreaterThan(0);
    await second.addMessage({ role: 'user', content: 'and again' });
    expect(await second.getTokenCount()).toBeGreaterThan(0);
  } finally {
    await second.clear();
    await second.close();
  }
}

describe('a store URL in the ContextManager constructor', () => {
  it('sqlite:PATH opens on first use, persists, resumes and searches', async () => {
    const path = join(dir, 'agents.db');
    await roundTrip(`sqlite:${path}`, 'c');
    const store = await openStore(`sqlite:${path}`);
    expect(store.search).toBeDefined();
    await store.close();
  });

  it('redis:// opens on first use, persists and resumes', skipFor(missing.redis), async () => {
    await roundTrip(REDIS_URL as string, `ck-url-test-${process.pid}-${randomBytes(4).toString('hex')}`);
  });
});
