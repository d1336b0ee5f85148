/**
 * Stale writers (issue 15 item 3): a manager whose conversation another writer replaced or
 * cleared notices on its next operation, takes in the new history, says so with
 * `context:warn` (`history_replaced`), and carries on: it never keeps sending the old history,
 * never appends behind the new one silently and never sticks in `ConflictError`. On every store,
 * with the other writer in this process and in another one.
 */

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import { MemoryStore } from '../../src/stores/memory.js';
import type { ConversationStore } from '../../src/stores/types.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec, type StoreSpec } from './fixtures/open-store.js';

const CONVERSATION = 'stale writers';
const REPLACER = join(import.meta.dirname, 'fixtures', 'manager-replace.ts');

const user = (content: string): Message => ({ role: 'user', content });
const texts = (messages: readonly Message[]) => messages.map((m) => m.content);

/** A manager on `store` that records its warnings. */
function manager(store: ConversationStore): { ctx: ContextManager; warnings: string[] } {
  const ctx = new ContextManager({ store, conversationId: CONVERSATION });
  const warnings: string[] = [];
  ctx.on('context:warn', (w) => warnings.push(w.code));
  return { ctx, warnings };
}

/** Replaces (or clears) the conversation from another process, through its own manager. */
function replaceElsewhere(spec: StoreSpec, messages: Message[] | 'clear'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        REPLACER,
        JSON.stringify(spec),
        CONVERSATION,
        messages === 'clear' ? 'clear' : JSON.stringify(messages),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`replacer exited ${code}:\n${stderr}`)),
    );
  });
}

/** Two ways the other writer acts: a manager in this process, or one in a child process. */
interface Other {
  replace(messages: Message[]): Promise<void>;
  clear(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** The stale-writer scenarios, given A's store and the other writer. */
function scenarios(
  open: () => Promise<{ a: ConversationStore; other: Other; read: () => Promise<string[]> }>,
) {
  it('a same-length replace: the stale manager takes in the new history before appending, and warns', async () => {
    const { a, other, read } = await open();
    const { ctx, warnings } = manager(a);
    try {
      await ctx.addMessage(user('old 1'));
      await ctx.addMessage(user('old 2'));
      await other.replace([user('new 1'), user('new 2')]);
      await ctx.addMessage(user('after'));
      expect(texts(await ctx.getMessages())).toEqual(['new 1', 'new 2', 'after']);
      expect(await read()).toEqual(['new 1', 'new 2', 'after']);
      expect(warnings).toContain('history_replaced');
      // What it sends is the new history, not the old one.
      const view = await ctx.getMessagesForRequest();
      expect(texts(view)).toEqual(['new 1', 'new 2', 'after']);
    } finally {
      await ctx.close();
    }
  });

  it('a shorter log after clear: the next addMessage works (no ConflictError), and so does sync()', async () => {
    const { a, other, read } = await open();
    const { ctx, warnings } = manager(a);
    try {
      for (const t of ['x1', 'x2', 'x3']) await ctx.addMessage(user(t));
      await other.clear();
      await ctx.addMessage(user('fresh'));
      expect(texts(await ctx.getMessages())).toEqual(['fresh']);
      expect(await read()).toEqual(['fresh']);
      expect(warnings).toContain('history_replaced');
      await other.replace([user('r1')]);
      warnings.length = 0;
      await ctx.sync();
      expect(texts(await ctx.getMessages())).toEqual(['r1']);
      expect(warnings).toEqual(['history_replaced']);
      await ctx.addMessage(user('r2'));
      expect(await read()).toEqual(['r1', 'r2']);
    } finally {
      await ctx.close();
    }
  });

  it('a request after a replace is built from the new history, with a warning', async () => {
    const { a, other } = await open();
    const { ctx, warnings } = manager(a);
    try {
      await ctx.addMessage(user('stale 1'));
      await ctx.addMessage(user('stale 2'));
      await other.replace([user('now 1'), user('now 2')]);
      expect(texts(await ctx.getMessagesForRequest())).toEqual(['now 1', 'now 2']);
      expect(warnings).toContain('history_replaced');
      expect(texts(await ctx.getMessages())).toEqual(['now 1', 'now 2']);
    } finally {
      await ctx.close();
    }
  });

  it('a longer replace is taken in by sync() as a replacement, not as a tail', async () => {
    const { a, other, read } = await open();
    const { ctx, warnings } = manager(a);
    try {
      await ctx.addMessage(user('only'));
      await other.replace([user('l1'), user('l2'), user('l3')]);
      await ctx.sync();
      expect(texts(await ctx.getMessages())).toEqual(['l1', 'l2', 'l3']);
      expect(warnings).toContain('history_replaced');
      await ctx.addMessage(user('l4'));
      expect(await read()).toEqual(['l1', 'l2', 'l3', 'l4']);
    } finally {
      await ctx.close();
    }
  });
}

describe('stale writers: memory, both managers in this process', () => {
  scenarios(async () => {
    const store = new MemoryStore();
    const b = new ContextManager({ store, conversationId: CONVERSATION });
    return {
      a: store,
      other: {
        replace: (messages) => b.setMessages(messages, { replace: true }),
        clear: () => b.clear(),
      },
      read: async () => (await store.read(CONVERSATION)).map((e) => String(e.message.content)),
    };
  });
});

for (const driver of sharedDrivers(cleanups, [CONVERSATION])) {
  for (const where of ['this process', 'another process'] as const) {
    describe(`stale writers: ${driver.name}, the other writer in ${where}`, {
      ...skipFor(driver.missing),
      timeout: 60_000,
    }, () => {
      scenarios(async () => {
        const spec = await driver.spec();
        const a = await openSpec(spec);
        const reader = await openSpec(spec);
        const bStore = await openSpec(spec);
        const b = new ContextManager({ store: bStore, conversationId: CONVERSATION });
        cleanups.unshift(async () => {
          await reader.close();
          await b.close();
        });
        const other: Other =
          where === 'this process'
            ? {
                replace: async (messages) => {
                  await b.sync();
                  await b.setMessages(messages, { replace: true });
                },
                clear: () => b.clear(),
              }
            : {
                replace: (messages) => replaceElsewhere(spec, messages),
                clear: () => replaceElsewhere(spec, 'clear'),
              };
        return {
          a,
          other,
          read: async () => (await reader.read(CONVERSATION)).map((e) => String(e.message.content)),
        };
      });
    });
  }
}
