/**
 * Recall with filters on every store (issue 25): the in-process index (memory, file, Redis) and
 * the stores' own full-text indexes (SQLite FTS5, Postgres) give hits that pass the filters and
 * find the turn asked for, in a history where the filter is what tells the turns apart.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextManager } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import type { RecallOptions } from '../../src/recall/recall-hit.js';
import { FileStore } from '../../src/stores/file.js';
import { MemoryStore } from '../../src/stores/memory.js';
import { openSqliteStore } from '../../src/stores/sqlite.js';
import type { ConversationStore, NewEntry } from '../../src/stores/types.js';
import { DATABASE_URL, missing, REDIS_URL, skipFor } from '../support/requirements.js';

const dir = mkdtempSync(join(tmpdir(), 'ck-recall-filters-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * 120 turns over four months, two speakers, a `weather` tool: the garden is talked about by both
 * speakers in every month, and the tool reports on it too; the filler says nothing of it.
 */
function chat(): Array<{ message: Message; timestamp: string }> {
  const out: Array<{ message: Message; timestamp: string }> = [];
  for (let i = 0; i < 120; i++) {
    const month = Math.floor(i / 30) + 1;
    const timestamp = new Date(Date.UTC(2024, month - 1, 1 + (i % 28), 12)).toISOString();
    const role = i % 2 === 0 ? 'user' : 'assistant';
    if (i % 10 === 3) {
      out.push({
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: `w${i}`, type: 'function', function: { name: 'weather', arguments: '{"place":"garden"}' } },
          ],
        },
        timestamp,
      });
      out.push({
        message: { role: 'tool', tool_call_id: `w${i}`, content: `garden frost report ${i}` },
        timestamp,
      });
      continue;
    }
    const text =
      i % 5 === 0
        ? `the garden roses in month ${month}, turn ${i}`
        : `small talk number ${i} about nothing much`;
    out.push({ message: { role, content: text }, timestamp });
  }
  return out;
}

interface Driver {
  name: string;
  skip?: string | undefined;
  open: () => Promise<ConversationStore>;
  cleanup?: () => Promise<void>;
}

const schema = `ck_test_recall_${process.pid}_${randomBytes(4).toString('hex')}`;
const drivers: Driver[] = [
  { name: 'memory', open: async () => new MemoryStore() },
  { name: 'file', open: async () => new FileStore(join(dir, 'file')) },
  { name: 'sqlite', open: () => openSqliteStore(join(dir, 'recall.db')) },
  {
    name: 'redis',
    skip: missing.redis,
    open: async () =>
      (await import('../../src/stores/redis.js')).openRedisStore(REDIS_URL as string, {
        keyPrefix: `ck-test-recall-${process.pid}-${randomBytes(4).toString('hex')}:`,
      }),
  },
  {
    name: 'postgres',
    skip: missing.postgres,
    open: async () =>
      (await import('../../src/stores/postgres.js')).openPostgresStore(DATABASE_URL as string, { schema }),
    cleanup: async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  },
];

const CASES: Array<{ options: RecallOptions; check: (message: Message, timestamp: string) => boolean }> = [
  { options: { role: 'user' }, check: (m) => m.role === 'user' },
  { options: { role: 'assistant' }, check: (m) => m.role === 'assistant' },
  { options: { role: 'tool' }, check: (m) => m.role === 'tool' },
  { options: { toolName: 'weather' }, check: (m) => m.role === 'tool' || 'tool_calls' in m },
  {
    options: { startDate: '2024-03-01', endDate: '2024-03-31' },
    check: (_, t) => t >= '2024-03-01' && t < '2024-04-01',
  },
  {
    options: { role: 'user', startDate: '2024-02-01', endDate: '2024-02-29' },
    check: (m, t) => m.role === 'user' && t >= '2024-02-01' && t < '2024-03-01',
  },
];

describe.each(drivers)('recall with filters on the $name store', (driver) => {
  it('gives only hits that pass the filters, and the turns they ask for', skipFor(driver.skip), async () => {
    const store = await driver.open();
    const conversationId = `filters-${randomBytes(4).toString('hex')}`;
    const ctx = new ContextManager({ model: 'gpt-4o', store, conversationId, recall: true });
    try {
      const turns = chat();
      for (const { message, timestamp } of turns) await ctx.addMessage(message, { metadata: { timestamp } });
      // A manager that reads the conversation back searches what the store indexed.
      const reader = new ContextManager({ model: 'gpt-4o', store, conversationId, recall: true });
      const entries = await reader.getEntries();
      for (const { options, check } of CASES) {
        const hits = await reader.recall('garden', { ...options, limit: 5, maxTokens: 4_000 });
        expect(hits.length, JSON.stringify(options)).toBeGreaterThan(0);
        for (const hit of hits) {
          const entry = entries[hit.seq]!;
          expect(
            check(entry.message, entry.metadata.timestamp),
            `${JSON.stringify(options)} #${hit.seq}`,
          ).toBe(true);
        }
      }
      // Pages of the same search never repeat a hit.
      const first = await reader.recall('garden', { role: 'user', limit: 3 });
      const second = await reader.recall('garden', { role: 'user', limit: 3, offset: 3 });
      expect(second.length).toBeGreaterThan(0);
      for (const hit of second) expect(first.map((h) => h.seq)).not.toContain(hit.seq);
      expect(await reader.recall('garden', { startDate: '2030-01-01' })).toEqual([]);
      expect(await reader.getMessages()).toEqual(turns.map((t) => t.message));
    } finally {
      await ctx.clear();
      await ctx.close();
      await driver.cleanup?.();
    }
  });
});

/**
 * Issue 31 item 4: 30,000 turns that all mention the word, the ones inside a narrow filter the
 * weakest matches (longest texts): a store's index asked for a capped list of candidates and
 * filtered afterwards found none of them (SQLite for the last ten turns, Postgres for the first
 * ten). The filter goes into the store's query, so each finds what the in-process index finds.
 */
const LONG_TURNS = 30_000;

function longChat(): NewEntry[] {
  const out: NewEntry[] = [];
  const filler = Array.from({ length: 60 }, (_, i) => `filler${i % 17}`).join(' ');
  for (let i = 0; i < LONG_TURNS; i++) {
    const edge = i < 10 || i >= LONG_TURNS - 10;
    const timestamp = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
    out.push({
      message: {
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: edge ? `garden note ${i}: ${filler}` : `garden ${i}`,
      },
      metadata: { timestamp },
    });
  }
  return out;
}

describe.each(drivers)('recall with a narrow filter past 20,000 turns on the $name store', (driver) => {
  it('finds the turns inside the filter however many turns outrank them', {
    ...skipFor(driver.skip),
    timeout: 300_000,
  }, async () => {
    const store = await driver.open();
    const conversationId = `narrow-${randomBytes(4).toString('hex')}`;
    try {
      const turns = longChat();
      for (let i = 0; i < turns.length; i += 2_000)
        await store.append(conversationId, turns.slice(i, i + 2_000));
      const reader = new ContextManager({ model: 'gpt-4o', store, conversationId, recall: true });
      const at = (i: number) => turns[i]!.metadata.timestamp;
      const cases: Array<{ options: RecallOptions; inside: (seq: number) => boolean }> = [
        { options: { fromSeq: LONG_TURNS - 10 }, inside: (s) => s >= LONG_TURNS - 10 },
        { options: { toSeq: 9 }, inside: (s) => s <= 9 },
        {
          options: { fromSeq: LONG_TURNS - 10, role: 'user' },
          inside: (s) => s >= LONG_TURNS - 10 && s % 2 === 0,
        },
        { options: { startDate: at(0), endDate: at(9) }, inside: (s) => s <= 9 },
        {
          options: { startDate: at(LONG_TURNS - 10), role: 'assistant' },
          inside: (s) => s >= LONG_TURNS - 10 && s % 2 === 1,
        },
      ];
      // The first call reads the history in (slices that yield); the calls measured are the next ones.
      await reader.recall('garden', { limit: 1 });
      for (const { options, inside } of cases) {
        const started = process.cpuUsage();
        const hits = await reader.recall('garden', { ...options, limit: 5, maxTokens: 20_000 });
        const used = process.cpuUsage(started);
        // No long synchronous stretch (SQLite's query runs on this thread): the whole call's CPU time bounds it.
        expect((used.user + used.system) / 1000, JSON.stringify(options)).toBeLessThan(50);
        expect(hits.length, JSON.stringify(options)).toBeGreaterThan(0);
        for (const hit of hits) expect(inside(hit.seq), `${JSON.stringify(options)} #${hit.seq}`).toBe(true);
      }
    } finally {
      await store.delete(conversationId);
      await store.close();
      await driver.cleanup?.();
    }
  });
});
