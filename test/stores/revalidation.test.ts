/**
 * Revalidation (issue 15 item 9): what a store returns is validated once, when it is taken in.
 * A tampered row (`role: "wizard"`, `content: [1, 2]`) is an `InvalidStoredMessageError` naming
 * its seq, with nothing stored changed, or, under `invalidStored: 'skip'`, left out with a
 * `context:warn`: never silently. On every store; the rows are written with the store's own
 * `append`, which checks only the entry's shape, as a tampering hand or an older writer would.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { InvalidStoredMessageError, StoreError } from '../../src/errors.js';
import { ContextManager } from '../../src/manager.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore, NewEntry } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const CONVERSATION = 'tampered';
const T = '2025-01-01T00:00:00.000Z';
const raw = (message: unknown): NewEntry => ({
  message: message as NewEntry['message'],
  metadata: { timestamp: T },
});

const ROWS: NewEntry[] = [
  raw({ role: 'user', content: 'fine before' }),
  raw({ role: 'wizard', content: 'abracadabra' }),
  raw({ role: 'user', content: [1, 2] }),
  raw({ role: 'assistant', content: 'fine after' }),
];

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

function scenarios(open: () => Promise<ConversationStore>) {
  it('refuses to load a tampered row: InvalidStoredMessageError with its seq, on every call, nothing changed', async () => {
    const store = await open();
    await store.append(CONVERSATION, ROWS);
    const before = await store.read(CONVERSATION);
    const ctx = new ContextManager({ store, conversationId: CONVERSATION });
    const error = await ctx.getMessages().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidStoredMessageError);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ seq: 1, code: 'invalid_stored_message', conversationId: CONVERSATION });
    expect((error as Error).message).toMatch(/stored entry 1 .*role/);
    // Not once and then silently: every operation says so, and nothing is appended meanwhile.
    await expect(ctx.addMessage({ role: 'user', content: 'more' })).rejects.toBeInstanceOf(
      InvalidStoredMessageError,
    );
    await expect(ctx.getMessagesForRequest()).rejects.toBeInstanceOf(InvalidStoredMessageError);
    expect(await store.read(CONVERSATION)).toStrictEqual(before);
    await ctx.close();
  });

  it("names the content row's seq once the role row is gone", async () => {
    const store = await open();
    await store.append(CONVERSATION, [ROWS[0] as NewEntry, ROWS[2] as NewEntry]);
    const ctx = new ContextManager({ store, conversationId: CONVERSATION });
    const error = await ctx.getMessages().catch((e: unknown) => e);
    expect(error).toMatchObject({ seq: 1 });
    expect((error as Error).message).toMatch(/stored entry 1\.content/);
    await ctx.close();
  });

  it("skips them under invalidStored: 'skip', with a warning per row naming its seq", async () => {
    const store = await open();
    await store.append(CONVERSATION, ROWS);
    const ctx = new ContextManager({ store, conversationId: CONVERSATION, invalidStored: 'skip' });
    const warnings: Array<{ code: string; message: string }> = [];
    ctx.on('context:warn', (w) => warnings.push({ code: w.code, message: w.message }));
    expect((await ctx.getMessages()).map((m) => m.content)).toEqual(['fine before', 'fine after']);
    expect(warnings.map((w) => w.code)).toEqual(['invalid_stored_message', 'invalid_stored_message']);
    expect(warnings[0]?.message).toMatch(/stored entry 1 .*skipped/);
    expect(warnings[1]?.message).toMatch(/stored entry 2\.content.*skipped/);
    // The view is built from valid messages only, and appends continue after the stored rows.
    expect((await ctx.getMessagesForRequest()).map((m) => m.content)).toEqual(['fine before', 'fine after']);
    await ctx.addMessage({ role: 'user', content: 'next' });
    expect((await store.read(CONVERSATION)).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    await ctx.close();
  });

  it('checks rows another writer appended, when sync() or an append takes them in', async () => {
    const store = await open();
    const ctx = new ContextManager({ store, conversationId: CONVERSATION });
    await ctx.addMessage({ role: 'user', content: 'mine' });
    await store.append(CONVERSATION, [ROWS[1] as NewEntry]);
    await expect(ctx.sync()).rejects.toMatchObject({ seq: 1, code: 'invalid_stored_message' });
    expect((await ctx.getMessages()).map((m) => m.content)).toEqual(['mine']);
    // An append meets it too (its own message is stored after it); the next one is refused
    // before anything is stored.
    await expect(ctx.addMessage({ role: 'user', content: 'second' })).rejects.toMatchObject({ seq: 1 });
    await expect(ctx.addMessage({ role: 'user', content: 'third' })).rejects.toMatchObject({ seq: 1 });
    expect((await store.read(CONVERSATION)).map((e) => e.message.content)).toEqual([
      'mine',
      'abracadabra',
      'second',
    ]);
    await ctx.close();
  });
}

describe('revalidation: memory', () => {
  scenarios(async () => new MemoryStore());
});

for (const driver of sharedDrivers(cleanups, [CONVERSATION])) {
  describe(`revalidation: ${driver.name}`, skipFor(driver.missing), () => {
    scenarios(async () => openSpec(await driver.spec()));
  });
}
