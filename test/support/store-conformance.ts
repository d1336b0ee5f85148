/**
 * The one test suite every `ConversationStore` driver passes. A driver's test file calls
 * `testStore('name', factory)` and adds only what is special to it.
 *
 * The factory is called before every test and must return an EMPTY store (a fresh directory,
 * database schema, key prefix…). `reopen`, when given, must close nothing itself and return a
 * new store over the same data (a new process would see the same); `cleanup` removes what the
 * factory created. Everything is asserted through the interface only.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, DuplicateMessageIdError, EpochConflictError, StoreError } from '../../src/errors.js';
import type { Message, MessageMetadata } from '../../src/messages/types.js';
import type { ConversationStore, NewEntry, StoredEntry, StoreSearch } from '../../src/stores/types.js';

/** What a driver's factory hands the suite. */
export interface StoreFixture {
  store: ConversationStore;
  /** A new store over the same data, as another process would open it. */
  reopen?: () => Promise<ConversationStore>;
  /** Removes what the factory created (temp dir, schema, keys). */
  cleanup?: () => Promise<void>;
}

const TIMESTAMP = '2025-01-02T03:04:05.678Z';

/** A user message whose text says which writer and step it came from. */
function entry(text: string, metadata: Partial<MessageMetadata> = {}): NewEntry {
  return { message: { role: 'user', content: text }, metadata: { timestamp: TIMESTAMP, ...metadata } };
}

function texts(entries: StoredEntry[]): string[] {
  return entries.map((e) => {
    const content = e.message.content;
    return typeof content === 'string' ? content : JSON.stringify(content);
  });
}

function seqs(entries: StoredEntry[]): number[] {
  return entries.map((e) => e.seq);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject, but it resolved');
}

async function listAll(
  store: ConversationStore,
  options: { prefix?: string; limit?: number } = {},
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list({ ...options, ...(cursor === undefined ? {} : { cursor }) });
    ids.push(...page.ids);
    cursor = page.cursor;
    pages++;
    if (pages > 10_000) throw new Error('list never ended');
  } while (cursor !== undefined);
  return { ids, pages };
}

/** Messages of both formats and shapes that exercise JSON: nesting, unicode, escapes, numbers. */
const VARIED: NewEntry[] = [
  {
    message: { role: 'system', content: 'You are careful.\nLine two "quoted" \\ back\tslash \u2028 sep' },
    metadata: { timestamp: TIMESTAMP, pinned: true, source: 'user' },
  },
  {
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
      ],
    },
    metadata: { timestamp: TIMESTAMP, critical: true, extra: { nested: [1, 2.5, -0.125, 1e21, null, true] } },
  },
  {
    message: {
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'Ünïcödé 🚀 \u0000 nul, emoji 👩‍👩‍👧, CJK 漢字',
    },
    metadata: { timestamp: TIMESTAMP, zKey: 'z', aKey: 'a' },
  },
  {
    message: {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: [{ type: 'text', text: 'ok' }],
          is_error: false,
        },
        { type: 'text', text: 'and then?' },
      ],
    },
    metadata: { timestamp: TIMESTAMP, ephemeral: false, source: 'import' },
  },
  {
    message: {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig==' },
        { type: 'tool_use', id: 'toolu_2', name: 'search', input: { q: 'x', n: 3, deep: { list: [] } } },
      ],
    },
    metadata: { timestamp: TIMESTAMP },
  },
];

/** Ids that break naive file names, keys or SQL. */
const HOSTILE_IDS: string[] = [
  '../x',
  '..',
  '.',
  'a/b',
  'a\\b',
  '/abs',
  'CON',
  'con',
  'nul',
  'Ünïcödé 🚀',
  'abc',
  'ABC',
  'Abc',
  '%2F',
  '%2f',
  '%',
  '~',
  'x~0',
  'a\u0000b',
  'line\nbreak',
  ' spaced ',
  'trailing.',
  'quote\'"`;--',
  '*?<>|:',
  'é',
  'e\u0301',
  'l'.repeat(1000),
  `${'l'.repeat(999)}m`,
  'L'.repeat(1000),
  '🚀'.repeat(300),
];

/**
 * Registers the conformance suite for one driver. See the module comment for what the factory
 * must return.
 */
export function testStore(name: string, factory: () => Promise<StoreFixture>): void {
  describe(`ConversationStore conformance: ${name}`, () => {
    let fixture: StoreFixture;
    let store: ConversationStore;

    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });

    afterEach(async () => {
      await store.close();
      await fixture.cleanup?.();
    });

    it('reports its kind', () => {
      expect(typeof store.kind).toBe('string');
      expect(store.kind.length).toBeGreaterThan(0);
    });

    it('treats an unknown conversation as empty', async () => {
      expect(await store.head('nobody')).toBe(0);
      expect(await store.read('nobody')).toEqual([]);
      expect(await store.getMeta('nobody')).toEqual({ value: null, version: 0 });
      const page = await store.list();
      expect(page.ids).toEqual([]);
      expect(page.cursor).toBeUndefined();
    });

    describe('append and read', () => {
      it('round-trips messages and metadata exactly, key order included', async () => {
        expect(await store.append('c', VARIED)).toBe(0);
        const got = await store.read('c');
        const want = VARIED.map((e, seq) => ({ seq, message: e.message, metadata: e.metadata }));
        expect(got).toStrictEqual(want);
        // Byte-for-byte: the prompt cache depends on a stored message serializing the same.
        expect(got.map((e) => JSON.stringify(e.message))).toEqual(
          VARIED.map((e) => JSON.stringify(e.message)),
        );
        expect(got.map((e) => JSON.stringify(e.metadata))).toEqual(
          VARIED.map((e) => JSON.stringify(e.metadata)),
        );
      });

      it('assigns dense sequence numbers in order across batches', async () => {
        expect(await store.append('c', [entry('m0')])).toBe(0);
        expect(await store.append('c', [entry('m1'), entry('m2'), entry('m3')])).toBe(1);
        expect(await store.append('c', [])).toBe(4);
        expect(await store.append('c', [entry('m4'), entry('m5')])).toBe(4);
        const got = await store.read('c');
        expect(seqs(got)).toEqual([0, 1, 2, 3, 4, 5]);
        expect(texts(got)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
        expect(await store.head('c')).toBe(6);
      });

      it('assigns sequence numbers itself and keeps only seq, message and metadata', async () => {
        const withSeq = { seq: 99, extra: 'dropped', ...entry('x') } as NewEntry;
        await store.append('c', [withSeq]);
        const [got] = await store.read('c');
        expect(got).toStrictEqual({
          seq: 0,
          message: { role: 'user', content: 'x' },
          metadata: { timestamp: TIMESTAMP },
        });
      });

      it('copies values on the way in and on the way out', async () => {
        const input = entry('original', { tags: ['a'] });
        await store.append('c', [input]);
        (input.message as { content: string }).content = 'mutated input';
        (input.metadata.tags as string[]).push('mutated');
        const [first] = (await store.read('c')) as [StoredEntry];
        expect(first.message).toEqual({ role: 'user', content: 'original' });
        (first.message as { content: string }).content = 'mutated output';
        (first.metadata.tags as string[]).push('mutated');
        const [again] = await store.read('c');
        expect(again?.message).toEqual({ role: 'user', content: 'original' });
        expect(again?.metadata.tags).toEqual(['a']);
      });

      it('reads a range with fromSeq and limit', async () => {
        await store.append(
          'c',
          Array.from({ length: 10 }, (_, i) => entry(`m${i}`)),
        );
        expect(seqs(await store.read('c', { fromSeq: 3, limit: 4 }))).toEqual([3, 4, 5, 6]);
        expect(texts(await store.read('c', { fromSeq: 8 }))).toEqual(['m8', 'm9']);
        expect(seqs(await store.read('c', { limit: 2 }))).toEqual([0, 1]);
        expect(await store.read('c', { fromSeq: 10 })).toEqual([]);
        expect(await store.read('c', { fromSeq: 50, limit: 5 })).toEqual([]);
        expect(await store.read('c', { fromSeq: 2, limit: 0 })).toEqual([]);
        expect(seqs(await store.read('c', { fromSeq: 0, limit: 100 }))).toHaveLength(10);
      });

      it('rejects bad read arguments with StoreError', async () => {
        await store.append('c', [entry('m0')]);
        for (const options of [{ fromSeq: -1 }, { fromSeq: 1.5 }, { limit: -1 }, { limit: Number.NaN }]) {
          const error = await rejection(store.read('c', options));
          expect(error, JSON.stringify(options)).toBeInstanceOf(StoreError);
        }
      });

      it('rejects a malformed entry and appends nothing of its batch', async () => {
        await store.append('c', [entry('m0')]);
        const bad = [
          entry('m1'),
          { message: null, metadata: { timestamp: TIMESTAMP } },
        ] as unknown as NewEntry[];
        const error = await rejection(store.append('c', bad));
        expect(error).toBeInstanceOf(StoreError);
        expect(String((error as Error).message)).toMatch(/entries\[1\]\.message/);
        const noMeta = [{ message: { role: 'user', content: 'x' } }] as unknown as NewEntry[];
        expect(await rejection(store.append('c', noMeta))).toBeInstanceOf(StoreError);
        expect(await rejection(store.append('c', 'nope' as unknown as NewEntry[]))).toBeInstanceOf(
          StoreError,
        );
        expect(texts(await store.read('c'))).toEqual(['m0']);
        expect(await store.head('c')).toBe(1);
      });
    });

    describe('conflicts and atomic batches', () => {
      it('appends when expectedSeq is the current head', async () => {
        expect(await store.append('c', [entry('a')], { expectedSeq: 0 })).toBe(0);
        expect(await store.append('c', [entry('b'), entry('c')], { expectedSeq: 1 })).toBe(1);
        expect(await store.append('c', [], { expectedSeq: 3 })).toBe(3);
        expect(await store.head('c')).toBe(3);
      });

      it('rejects a stale expectedSeq with ConflictError carrying expected and actual', async () => {
        await store.append('c', [entry('a'), entry('b')]);
        for (const expectedSeq of [0, 1, 3, 7]) {
          const error = await rejection(store.append('c', [entry('late')], { expectedSeq }));
          expect(error).toBeInstanceOf(ConflictError);
          expect(error).toBeInstanceOf(StoreError);
          expect(error).toMatchObject({
            code: 'conflict',
            expected: expectedSeq,
            actual: 2,
            conversationId: 'c',
          });
        }
        expect(await rejection(store.append('c', [], { expectedSeq: 1 }))).toBeInstanceOf(ConflictError);
        expect(texts(await store.read('c'))).toEqual(['a', 'b']);
      });

      it('appends nothing of a conflicting batch', async () => {
        await store.append('c', [entry('a')]);
        const error = await rejection(
          store.append('c', [entry('x'), entry('y'), entry('z')], { expectedSeq: 0 }),
        );
        expect(error).toBeInstanceOf(ConflictError);
        expect(await store.head('c')).toBe(1);
        expect(texts(await store.read('c'))).toEqual(['a']);
      });

      it('keeps each of many concurrent batches whole and contiguous', async () => {
        const writers = 8;
        const size = 5;
        const firsts = await Promise.all(
          Array.from({ length: writers }, (_, w) =>
            store.append(
              'c',
              Array.from({ length: size }, (_, j) => entry(`w${w}-${j}`)),
            ),
          ),
        );
        const got = await store.read('c');
        expect(seqs(got)).toEqual(Array.from({ length: writers * size }, (_, i) => i));
        for (let w = 0; w < writers; w++) {
          const first = firsts[w] as number;
          expect(first % size).toBe(0);
          expect(texts(got.slice(first, first + size))).toEqual(
            Array.from({ length: size }, (_, j) => `w${w}-${j}`),
          );
        }
        expect(new Set(firsts).size).toBe(writers);
      });

      it('lets exactly one of two racing appends with the same expectedSeq win', async () => {
        const results = await Promise.allSettled([
          store.append('c', [entry('one')], { expectedSeq: 0 }),
          store.append('c', [entry('two')], { expectedSeq: 0 }),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(lost[0]?.reason).toBeInstanceOf(ConflictError);
        expect(await store.head('c')).toBe(1);
      });

      it('stores every message of concurrent retrying writers exactly once', async () => {
        const writers = 4;
        const perWriter = 10;
        await Promise.all(
          Array.from({ length: writers }, async (_, w) => {
            for (let j = 0; j < perWriter; j++) {
              for (;;) {
                const head = await store.head('c');
                try {
                  await store.append('c', [entry(`w${w}-${j}`)], { expectedSeq: head });
                  break;
                } catch (error) {
                  if (!(error instanceof ConflictError)) throw error;
                }
              }
            }
          }),
        );
        const got = await store.read('c');
        expect(seqs(got)).toEqual(Array.from({ length: writers * perWriter }, (_, i) => i));
        const all = texts(got);
        expect(new Set(all).size).toBe(writers * perWriter);
        for (let w = 0; w < writers; w++) {
          const mine = all.filter((t) => t.startsWith(`w${w}-`));
          expect(mine).toEqual(Array.from({ length: perWriter }, (_, j) => `w${w}-${j}`));
        }
      });
    });

    describe('metadata', () => {
      it('starts at version 0 and counts up with each write', async () => {
        expect(await store.getMeta('c')).toEqual({ value: null, version: 0 });
        expect(await store.setMeta('c', { plan: 1 })).toBe(1);
        expect(await store.getMeta('c')).toEqual({ value: { plan: 1 }, version: 1 });
        expect(await store.setMeta('c', { plan: 2 }, { expectedVersion: 1 })).toBe(2);
        expect(await store.setMeta('c', { plan: 3 })).toBe(3);
        expect(await store.getMeta('c')).toEqual({ value: { plan: 3 }, version: 3 });
      });

      it('creates with expectedVersion 0 only when nothing was written', async () => {
        expect(await store.setMeta('c', { a: 1 }, { expectedVersion: 0 })).toBe(1);
        const error = await rejection(store.setMeta('c', { a: 2 }, { expectedVersion: 0 }));
        expect(error).toBeInstanceOf(ConflictError);
        expect(error).toMatchObject({ expected: 0, actual: 1 });
      });

      it('round-trips the value exactly and copies it both ways', async () => {
        const value = {
          plan: { dropped: [1, 2, 3], summary: 'Ünïcödé 🚀 "q" \\ \n' },
          guard: { level: 0.92, on: true, none: null },
          zLast: 'z',
          aFirst: 'a',
        };
        await store.setMeta('c', value);
        value.plan.dropped.push(4);
        const got = await store.getMeta('c');
        expect(got.value).toStrictEqual({
          plan: { dropped: [1, 2, 3], summary: 'Ünïcödé 🚀 "q" \\ \n' },
          guard: { level: 0.92, on: true, none: null },
          zLast: 'z',
          aFirst: 'a',
        });
        expect(Object.keys(got.value ?? {})).toEqual(['plan', 'guard', 'zLast', 'aFirst']);
        const plan = (value: Record<string, unknown> | null) => value?.plan as { dropped: number[] };
        plan(got.value).dropped.push(5);
        expect(plan((await store.getMeta('c')).value).dropped).toEqual([1, 2, 3]);
      });

      it('rejects a stale expectedVersion with ConflictError and keeps the value', async () => {
        await store.setMeta('c', { v: 1 });
        await store.setMeta('c', { v: 2 });
        for (const expectedVersion of [0, 1, 3]) {
          const error = await rejection(store.setMeta('c', { v: 'stale' }, { expectedVersion }));
          expect(error).toBeInstanceOf(ConflictError);
          expect(error).toMatchObject({
            code: 'conflict',
            expected: expectedVersion,
            actual: 2,
            conversationId: 'c',
          });
        }
        expect(await store.getMeta('c')).toEqual({ value: { v: 2 }, version: 2 });
      });

      it('lets exactly one of two racing writers with the same expectedVersion win', async () => {
        await store.setMeta('c', { v: 0 });
        const results = await Promise.allSettled([
          store.setMeta('c', { v: 'a' }, { expectedVersion: 1 }),
          store.setMeta('c', { v: 'b' }, { expectedVersion: 1 }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(lost?.reason).toBeInstanceOf(ConflictError);
        const meta = await store.getMeta('c');
        expect(meta.version).toBe(2);
        expect(['a', 'b']).toContain(meta.value?.v);
      });

      it('keeps metadata and the log independent', async () => {
        await store.setMeta('c', { v: 1 });
        expect(await store.head('c')).toBe(0);
        await store.append('c', [entry('a')]);
        await store.replace('c', [entry('b'), entry('c')]);
        expect(await store.getMeta('c')).toEqual({ value: { v: 1 }, version: 1 });
        expect(await store.head('c')).toBe(2);
      });

      it('rejects a value that is not an object', async () => {
        for (const value of [null, [1], 'text', 3]) {
          const error = await rejection(store.setMeta('c', value as unknown as Record<string, unknown>));
          expect(error).toBeInstanceOf(StoreError);
        }
        expect(await store.getMeta('c')).toEqual({ value: null, version: 0 });
      });
    });

    describe('list', () => {
      // Code point order: 'B' < 'a' < 'a/1' < 'a/2' < 'ab' < 'b' < 'é' < U+FF5E < U+1F600.
      // (UTF-16 order would put the emoji before U+FF5E.)
      const ordered = ['B', 'a', 'a/1', 'a/2', 'ab', 'b', 'é', '\uff5e', '😀'];

      it('lists in code point order, under a prefix, up to a limit', async () => {
        for (const id of [...ordered].reverse()) await store.append(id, [entry(id)]);
        expect((await store.list()).ids).toEqual(ordered);
        expect((await store.list({ prefix: 'a/' })).ids).toEqual(['a/1', 'a/2']);
        expect((await store.list({ prefix: 'a' })).ids).toEqual(['a', 'a/1', 'a/2', 'ab']);
        expect((await store.list({ prefix: 'zzz' })).ids).toEqual([]);
        const limited = await store.list({ limit: 3 });
        expect(limited.ids).toEqual(['B', 'a', 'a/1']);
        expect(typeof limited.cursor).toBe('string');
        const exact = await store.list({ limit: ordered.length });
        expect(exact.ids).toEqual(ordered);
        expect(exact.cursor).toBeUndefined();
      });

      it('pages with a cursor without duplicates or misses', async () => {
        const ids = Array.from({ length: 25 }, (_, i) => `conv-${String(i).padStart(2, '0')}`);
        await Promise.all([...ids, 'other-1', 'other-2'].map((id) => store.append(id, [entry(id)])));
        const { ids: paged, pages } = await listAll(store, { prefix: 'conv-', limit: 7 });
        expect(paged).toEqual(ids);
        expect(pages).toBe(4);
        const everything = await listAll(store, { limit: 5 });
        expect(everything.ids).toEqual([...ids, 'other-1', 'other-2']);
        expect(everything.pages).toBe(6);
      });

      it('resumes after the cursor when conversations come and go between pages', async () => {
        for (const id of ['b', 'd', 'f', 'h', 'j']) await store.append(id, [entry(id)]);
        const first = await store.list({ limit: 2 });
        expect(first.ids).toEqual(['b', 'd']);
        await store.append('a', [entry('a')]);
        await store.append('e', [entry('e')]);
        await store.delete('f');
        const rest = await store.list({
          limit: 10,
          ...(first.cursor === undefined ? {} : { cursor: first.cursor }),
        });
        expect(rest.ids).toEqual(['e', 'h', 'j']);
      });

      it('lists conversations with only metadata, but not deleted or emptied ones', async () => {
        await store.setMeta('meta-only', { a: 1 });
        await store.append('kept', [entry('k')]);
        await store.append('deleted', [entry('d')]);
        await store.setMeta('deleted', { a: 1 });
        await store.delete('deleted');
        await store.append('emptied', [entry('e')]);
        await store.replace('emptied', []);
        expect((await store.list()).ids).toEqual(['kept', 'meta-only']);
      });

      it('rejects a limit that is not a positive integer', async () => {
        for (const limit of [0, -1, 1.5]) {
          expect(await rejection(store.list({ limit }))).toBeInstanceOf(StoreError);
        }
      });
    });

    describe('ids', () => {
      it('keeps hostile, unicode, long and case-only-different ids apart, exactly', async () => {
        for (const [i, id] of HOSTILE_IDS.entries()) {
          expect(await store.append(id, [entry(`#${i}`)])).toBe(0);
          await store.setMeta(id, { index: i });
        }
        for (const [i, id] of HOSTILE_IDS.entries()) {
          expect(texts(await store.read(id)), JSON.stringify(id.slice(0, 20))).toEqual([`#${i}`]);
          expect(await store.head(id)).toBe(1);
          expect((await store.getMeta(id)).value).toEqual({ index: i });
        }
        const listed = (await listAll(store, { limit: 7 })).ids;
        expect(new Set(listed)).toEqual(new Set(HOSTILE_IDS));
        expect(listed).toHaveLength(HOSTILE_IDS.length);
        expect((await store.list({ prefix: 'l'.repeat(999) })).ids).toEqual([
          'l'.repeat(1000),
          `${'l'.repeat(999)}m`,
        ]);
        await store.delete('../x');
        expect(await store.head('../x')).toBe(0);
        expect(await store.head('..')).toBe(1);
      });

      it('rejects an empty id, a lone surrogate and a non-string with a StoreError that says why', async () => {
        const cases: Array<[unknown, RegExp]> = [
          ['', /empty/],
          ['a\ud800b', /surrogate/],
          ['\udfff', /surrogate/],
          [42, /string/],
          [undefined, /string/],
        ];
        for (const [id, why] of cases) {
          const bad = id as string;
          const calls: Array<Promise<unknown>> = [
            store.append(bad, [entry('x')]),
            store.read(bad),
            store.head(bad),
            store.replace(bad, []),
            store.getMeta(bad),
            store.setMeta(bad, {}),
            store.delete(bad),
          ];
          for (const call of calls) {
            const error = await rejection(call);
            expect(error).toBeInstanceOf(StoreError);
            expect((error as Error).message).toMatch(why);
          }
        }
        expect((await store.list()).ids).toEqual([]);
      });
    });

    describe('size', () => {
      it('round-trips a 10 MB message', async () => {
        const chunk = 'line "quoted" \\ tab\t Ünï 🚀 漢字\n';
        const big = chunk.repeat(Math.ceil((10 * 1024 * 1024) / chunk.length));
        await store.append('big', [entry('before')]);
        expect(
          await store.append('big', [
            {
              message: { role: 'tool', tool_call_id: 't', content: big },
              metadata: { timestamp: TIMESTAMP },
            },
          ]),
        ).toBe(1);
        await store.append('big', [entry('after')]);
        const got = await store.read('big');
        expect(seqs(got)).toEqual([0, 1, 2]);
        const message = got[1]?.message as Message;
        expect(message.role).toBe('tool');
        // Compared by identity of content, not by a diff that would print 10 MB on failure.
        expect(message.content === big).toBe(true);
        expect(texts(await store.read('big', { fromSeq: 2 }))).toEqual(['after']);
      });

      it('keeps 300 conversations apart', async () => {
        const ids = Array.from({ length: 300 }, (_, i) => `conv-${String(i).padStart(3, '0')}`);
        for (let i = 0; i < ids.length; i += 50) {
          await Promise.all(ids.slice(i, i + 50).map((id) => store.append(id, [entry(id), entry(`${id}!`)])));
        }
        expect((await store.list()).ids).toEqual(ids);
        const paged = await listAll(store, { limit: 64 });
        expect(paged.ids).toEqual(ids);
        expect(paged.pages).toBe(5);
        for (const id of [ids[0], ids[150], ids[299]] as string[]) {
          expect(texts(await store.read(id))).toEqual([id, `${id}!`]);
        }
      });
    });

    describe('delete', () => {
      it('removes the log and metadata of one conversation only', async () => {
        await store.append('gone', [entry('a'), entry('b')]);
        await store.setMeta('gone', { x: 1 });
        await store.append('stays', [entry('s')]);
        await store.setMeta('stays', { y: 2 });
        await store.delete('gone');
        expect(await store.head('gone')).toBe(0);
        expect(await store.read('gone')).toEqual([]);
        expect(await store.getMeta('gone')).toEqual({ value: null, version: 0 });
        expect(texts(await store.read('stays'))).toEqual(['s']);
        expect(await store.getMeta('stays')).toEqual({ value: { y: 2 }, version: 1 });
        expect((await store.list()).ids).toEqual(['stays']);
      });

      it('does nothing for an absent conversation, and a deleted one starts over', async () => {
        await store.delete('never');
        await store.append('c', [entry('old')]);
        await store.delete('c');
        await store.delete('c');
        expect(await store.append('c', [entry('new')], { expectedSeq: 0 })).toBe(0);
        expect(await store.setMeta('c', { n: 1 }, { expectedVersion: 0 })).toBe(1);
        expect(texts(await store.read('c'))).toEqual(['new']);
      });
    });

    describe('replace', () => {
      it('replaces the whole log, numbering from 0, and appends continue after it', async () => {
        await store.append('c', [entry('a'), entry('b'), entry('c')]);
        await store.replace('c', [entry('x'), entry('y')]);
        const got = await store.read('c');
        expect(seqs(got)).toEqual([0, 1]);
        expect(texts(got)).toEqual(['x', 'y']);
        expect(await store.head('c')).toBe(2);
        expect(await rejection(store.append('c', [entry('z')], { expectedSeq: 3 }))).toBeInstanceOf(
          ConflictError,
        );
        expect(await store.append('c', [entry('z')], { expectedSeq: 2 })).toBe(2);
        expect(texts(await store.read('c'))).toEqual(['x', 'y', 'z']);
      });

      it('creates an absent conversation and empties one with no entries', async () => {
        await store.replace('new', VARIED);
        expect(await store.read('new')).toStrictEqual(VARIED.map((e, seq) => ({ seq, ...e })));
        await store.replace('new', []);
        expect(await store.head('new')).toBe(0);
        expect(await store.read('new')).toEqual([]);
        expect(await store.append('new', [entry('again')])).toBe(0);
      });

      it('leaves the old log when the new entries are malformed', async () => {
        await store.append('c', [entry('a')]);
        const bad = [entry('x'), { message: 'no', metadata: {} }] as unknown as NewEntry[];
        expect(await rejection(store.replace('c', bad))).toBeInstanceOf(StoreError);
        expect(texts(await store.read('c'))).toEqual(['a']);
      });
    });

    it('refuses on append and replace what JSON would change or nests too deep, writing nothing', async () => {
      await store.append('c', [entry('kept')]);
      let deep: unknown = 1;
      for (let i = 0; i < 20_000; i++) deep = { k: deep };
      const bad = (message: Record<string, unknown>, metadata: Record<string, unknown> = {}): NewEntry =>
        ({
          message: { role: 'user', content: 'x', ...message },
          metadata: { timestamp: TIMESTAMP, ...metadata },
        }) as NewEntry;
      const cases: Array<[NewEntry, RegExp]> = [
        [bad({ n: Number.NaN }), /entries\[1\]\.message\.n: NaN/],
        [bad({}, { n: -0 }), /entries\[1\]\.metadata\.n: -0/],
        [bad({ n: [Number.POSITIVE_INFINITY] }), /entries\[1\]\.message\.n\[0\]: Infinity/],
        [bad({}, { deep }), /entries\[1\]\.metadata\.deep(\.k)+: nested more than/],
      ];
      for (const [refused, pattern] of cases) {
        for (const write of [
          () => store.append('c', [entry('ok'), refused]),
          () => store.replace('c', [entry('ok'), refused]),
        ]) {
          const error = await rejection(write());
          expect(error).toBeInstanceOf(StoreError);
          expect((error as StoreError).code).toBe('invalid_argument');
          expect((error as Error).message).toMatch(pattern);
        }
      }
      expect(texts(await store.read('c'))).toEqual(['kept']);
    });

    describe('pop', () => {
      it('removes the last entry and returns it, in a new generation; an empty log gives undefined', async () => {
        expect(await store.pop('c')).toBeUndefined();
        expect(await store.head('c')).toBe(0);
        await store.append('c', [entry('a')]);
        await store.append('c', [entry('b'), entry('c')]);
        const before = await store.epoch('c');
        expect(await store.pop('c')).toStrictEqual({ seq: 2, ...entry('c') });
        expect(await store.epoch('c')).not.toBe(before);
        expect(texts(await store.read('c'))).toEqual(['a', 'b']);
        // The rest of a batch whose last entry left is read whole, here and after reopening.
        const other = (await fixture.reopen?.()) ?? store;
        expect(texts(await other.read('c'))).toEqual(['a', 'b']);
        if (other !== store) await other.close();
        expect(await store.append('c', [entry('d')])).toBe(2);
        expect(texts(await store.read('c'))).toEqual(['a', 'b', 'd']);
        expect((await store.pop('c'))?.seq).toBe(2);
        expect((await store.pop('c'))?.seq).toBe(1);
        expect((await store.pop('c'))?.message.content).toBe('a');
        expect(await store.pop('c')).toBeUndefined();
        expect(await store.head('c')).toBe(0);
        expect((await listAll(store)).ids).toEqual([]);
      });

      it('refuses an entry written by an old generation after the pop', async () => {
        await store.append('c', [entry('a'), entry('b')], { epoch: 'first' });
        await store.pop('c');
        expect(await rejection(store.append('c', [entry('stale')], { epoch: 'first' }))).toBeInstanceOf(
          EpochConflictError,
        );
        expect(texts(await store.read('c'))).toEqual(['a']);
      });

      it('loses no entry appended while another instance pops', async () => {
        const other = (await fixture.reopen?.()) ?? store;
        try {
          await store.append('c', [entry('seed')]);
          const popped: string[] = [];
          for (let round = 0; round < 20; round++) {
            const [, got] = await Promise.all([
              store.append('c', [entry(`a${round}`)]),
              other.pop('c'),
              other.append('c', [entry(`b${round}`)]),
            ]);
            if (got) popped.push(String(got.message.content));
          }
          const kept = texts(await store.read('c'));
          expect(seqs(await store.read('c'))).toEqual(kept.map((_, i) => i));
          const written = ['seed', ...Array.from({ length: 20 }, (_, r) => [`a${r}`, `b${r}`]).flat()];
          expect([...kept, ...popped].sort()).toEqual(written.sort());
        } finally {
          if (other !== store) await other.close();
        }
      });
    });

    describe('generation (epoch)', () => {
      it('has none until an append names one, and then keeps it', async () => {
        expect(await store.epoch('c')).toBeNull();
        await store.append('c', [entry('plain')]);
        expect(await store.epoch('c')).toBeNull();
        expect(await store.append('c', [entry('a')], { epoch: 'g1' })).toBe(1);
        expect(await store.epoch('c')).toBe('g1');
        expect(await store.append('c', [entry('b')], { epoch: 'g1' })).toBe(2);
        // An append without `epoch` checks nothing.
        expect(await store.append('c', [entry('c')])).toBe(3);
        expect(await store.epoch('c')).toBe('g1');
      });

      it('rejects an append in another generation with EpochConflictError, appending nothing', async () => {
        await store.append('c', [entry('a')], { epoch: 'g1' });
        const error = await rejection(store.append('c', [entry('x'), entry('y')], { epoch: 'g0' }));
        expect(error).toBeInstanceOf(EpochConflictError);
        expect(error).toMatchObject({ expected: 'g0', actual: 'g1', code: 'stale_epoch' });
        const both = await rejection(store.append('c', [entry('x')], { epoch: 'g0', expectedSeq: 1 }));
        expect(both).toBeInstanceOf(EpochConflictError);
        expect(texts(await store.read('c'))).toEqual(['a']);
        expect(await store.head('c')).toBe(1);
      });

      it('takes a new generation on replace, even of the same length, so an old writer is refused', async () => {
        await store.append('c', [entry('a'), entry('b')], { epoch: 'old' });
        await store.replace('c', [entry('x'), entry('y')], { epoch: 'new' });
        expect(await store.epoch('c')).toBe('new');
        // The length alone would let this through.
        expect(
          await rejection(store.append('c', [entry('z')], { epoch: 'old', expectedSeq: 2 })),
        ).toBeInstanceOf(EpochConflictError);
        expect(await store.append('c', [entry('z')], { epoch: 'new', expectedSeq: 2 })).toBe(2);
        expect(texts(await store.read('c'))).toEqual(['x', 'y', 'z']);
        await store.replace('c', [entry('r')]);
        const random = await store.epoch('c');
        expect(typeof random).toBe('string');
        expect(random).not.toBe('new');
      });

      // Issue 31 item 1: delete used to remove the generation, so an append naming the old one was
      // taken and brought it back (and any manager still holding it never noticed the clear).
      it('renews the generation on delete: an append naming the old one is refused, the new one continues', async () => {
        await store.append('c', [entry('a')], { epoch: 'g1' });
        await store.delete('c', { epoch: 'g2' });
        expect(await store.epoch('c')).toBe('g2');
        expect(await rejection(store.append('c', [entry('x')], { epoch: 'g1' }))).toBeInstanceOf(
          EpochConflictError,
        );
        expect(await store.head('c')).toBe(0);
        expect(await store.append('c', [entry('b')], { epoch: 'g2' })).toBe(0);
        expect(texts(await store.read('c'))).toEqual(['b']);
        await store.delete('c');
        const random = await store.epoch('c');
        expect(typeof random).toBe('string');
        expect(['g1', 'g2']).not.toContain(random);
        expect((await store.list()).ids).toEqual([]);
        expect(await rejection(store.delete('c', { epoch: '' }))).toBeInstanceOf(StoreError);
      });

      it('an append in flight across a delete never brings the old generation back (issue 31 item 1)', async () => {
        // A writer reads the generation, then its append is delayed past another writer's delete.
        await store.append('c', [entry('card 4111 1111 1111 1111'), entry('b')], { epoch: 'g1' });
        const held = await store.epoch('c');
        expect(held).toBe('g1');
        await store.delete('c');
        const error = await rejection(store.append('c', [entry('late')], { epoch: held as string }));
        expect(error).toBeInstanceOf(EpochConflictError);
        expect(error).toMatchObject({ expected: 'g1', code: 'stale_epoch' });
        expect(await store.head('c')).toBe(0);
        expect(await store.read('c')).toEqual([]);
        const renewed = await store.epoch('c');
        expect(renewed).not.toBeNull();
        expect(renewed).not.toBe('g1');
        // Emptying by replace or pop keeps a generation as well.
        await store.append('d', [entry('only')], { epoch: 'd1' });
        await store.pop('d');
        expect(await rejection(store.append('d', [entry('late')], { epoch: 'd1' }))).toBeInstanceOf(
          EpochConflictError,
        );
        await store.append('e', [entry('only')], { epoch: 'e1' });
        await store.replace('e', []);
        expect(await rejection(store.append('e', [entry('late')], { epoch: 'e1' }))).toBeInstanceOf(
          EpochConflictError,
        );
        expect((await store.list()).ids).toEqual([]);
      });

      it('keeps generations per conversation and refuses a bad token', async () => {
        await store.append('a', [entry('a')], { epoch: 'ga' });
        await store.append('b', [entry('b')], { epoch: 'gb' });
        expect([await store.epoch('a'), await store.epoch('b')]).toEqual(['ga', 'gb']);
        for (const bad of ['', 7, 'x'.repeat(201)]) {
          expect(await rejection(store.append('a', [entry('x')], { epoch: bad as string }))).toBeInstanceOf(
            StoreError,
          );
        }
        expect(await store.head('a')).toBe(1);
      });

      it('lets exactly one of two racing first writers set the generation', async () => {
        const results = await Promise.allSettled([
          store.append('c', [entry('one')], { epoch: 'p1' }),
          store.append('c', [entry('two')], { epoch: 'p2' }),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(EpochConflictError);
        expect(await store.head('c')).toBe(1);
        expect(['p1', 'p2']).toContain(await store.epoch('c'));
      });
    });

    describe('token counts (issue 24 item 3)', () => {
      const counted = (text: string, counts: Record<string, number>): NewEntry => ({
        ...entry(text),
        counts,
      });
      const countsOf = (entries: StoredEntry[]) => entries.map((e) => ('counts' in e ? e.counts : 'none'));

      it('keeps counts with their entries, by tokenizer key; an entry without counts reads without any', async () => {
        await store.append('c', [counted('a', { 'openai:o200k_base/openai/v1': 7, other: 0 }), entry('b')]);
        await store.append('c', [counted('c', { k: 3 })], { epoch: 'g1' });
        const got = await store.read('c');
        expect(texts(got)).toEqual(['a', 'b', 'c']);
        expect(countsOf(got)).toEqual([{ 'openai:o200k_base/openai/v1': 7, other: 0 }, 'none', { k: 3 }]);
        // Messages and metadata are what they were: the counts live beside them.
        expect(got[0]?.message).toEqual({ role: 'user', content: 'a' });
        expect(got[0]?.metadata).toEqual({ timestamp: TIMESTAMP });
        expect(countsOf(await store.read('c', { fromSeq: 2 }))).toEqual([{ k: 3 }]);
        // Read without counts (`counts: false`): the same entries, counts left out or kept as they are.
        const bare = await store.read('c', { fromSeq: 0, counts: false });
        expect(bare.map(({ counts: _counts, ...rest }) => rest)).toEqual(
          got.map(({ counts: _counts, ...rest }) => rest),
        );
        for (const [i, e] of bare.entries())
          if (e.counts !== undefined) expect(e.counts).toEqual(got[i]?.counts);
      });

      it('saveCounts merges counts into stored entries, in the generation named only', async () => {
        await store.append('c', [counted('a', { k: 1 }), entry('b')], { epoch: 'g1' });
        expect(
          await store.saveCounts(
            'c',
            [
              { seq: 0, counts: { j: 2, k: 5 } },
              { seq: 1, counts: { k: 4 } },
              { seq: 9, counts: { k: 1 } },
            ],
            { epoch: 'g1' },
          ),
        ).toBe(true);
        expect(countsOf(await store.read('c'))).toEqual([{ k: 5, j: 2 }, { k: 4 }]);
        // Another generation: the entries may not be the ones counted, so nothing is written.
        expect(await store.saveCounts('c', [{ seq: 0, counts: { k: 99 } }], { epoch: 'g0' })).toBe(false);
        await store.replace('c', [entry('x'), entry('y')], { epoch: 'g2' });
        expect(await store.saveCounts('c', [{ seq: 1, counts: { k: 99 } }], { epoch: 'g1' })).toBe(false);
        expect(countsOf(await store.read('c'))).toEqual(['none', 'none']);
        expect(await store.saveCounts('absent', [{ seq: 0, counts: { k: 1 } }], { epoch: 'g1' })).toBe(false);
        expect(await store.head('absent')).toBe(0);
      });

      it('replace keeps the counts it is given and none of the old log', async () => {
        await store.append('c', [counted('a', { k: 1 }), counted('b', { k: 2 })], { epoch: 'g1' });
        await store.replace('c', [entry('a'), counted('y', { k: 8 })], { epoch: 'g2' });
        expect(countsOf(await store.read('c'))).toEqual(['none', { k: 8 }]);
      });

      it('refuses malformed counts with StoreError naming them, storing nothing', async () => {
        const bad: unknown[] = [
          { k: -1 },
          { k: 1.5 },
          { k: '3' },
          { '': 1 },
          'seven',
          [1],
          Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, i])),
        ];
        for (const counts of bad) {
          const error = await rejection(
            store.append('c', [entry('ok'), { ...entry('x'), counts } as NewEntry]),
          );
          expect(error).toBeInstanceOf(StoreError);
          expect((error as StoreError).message).toContain('entries[1].counts');
          expect(
            await rejection(store.replace('c', [{ ...entry('x'), counts } as NewEntry], { epoch: 'r' })),
          ).toBeInstanceOf(StoreError);
        }
        expect(await store.head('c')).toBe(0);
        await store.append('c', [entry('a')], { epoch: 'g1' });
        for (const updates of [
          [{ seq: -1, counts: { k: 1 } }],
          [{ seq: 0, counts: { k: -2 } }],
          [{ seq: 0 }],
          'x',
        ]) {
          expect(await rejection(store.saveCounts('c', updates as never, { epoch: 'g1' }))).toBeInstanceOf(
            StoreError,
          );
        }
        expect(countsOf(await store.read('c'))).toEqual(['none']);
      });

      it('keeps counts across close and reopen', async (context) => {
        const reopen = fixture.reopen;
        if (!reopen) {
          context.skip(`${name} has no reopen: its data does not outlive the instance`);
          return;
        }
        await store.append('c', [counted('a', { k: 1 }), entry('b')], { epoch: 'g1' });
        await store.saveCounts('c', [{ seq: 1, counts: { k: 2 } }], { epoch: 'g1' });
        await store.close();
        store = await reopen();
        expect(countsOf(await store.read('c'))).toEqual([{ k: 1 }, { k: 2 }]);
      });
    });

    describe('message ids (issue 33 item 1)', () => {
      const withId = (text: string, id: string): NewEntry => ({ ...entry(text), id });
      const heldOf = async (promise: Promise<unknown>) => {
        const error = await rejection(promise);
        expect(error).toBeInstanceOf(DuplicateMessageIdError);
        return (error as DuplicateMessageIdError).held;
      };

      it('keeps an id with its entry and appends nothing of a batch holding an id already stored', async () => {
        expect(await store.append('c', [withId('a', 'x'), entry('plain')])).toBe(0);
        const [first, plain] = await store.read('c');
        expect(first).toMatchObject({ seq: 0, id: 'x' });
        expect(plain && 'id' in plain).toBe(false);
        expect(await heldOf(store.append('c', [withId('b', 'y'), withId('c', 'x')]))).toEqual([
          { id: 'x', seq: 0 },
        ]);
        expect(await store.head('c')).toBe(2);
        expect(await store.append('c', [withId('b', 'y')])).toBe(2);
        expect(await heldOf(store.append('c', [withId('b', 'y'), withId('a', 'x')]))).toEqual(
          expect.arrayContaining([
            { id: 'y', seq: 2 },
            { id: 'x', seq: 0 },
          ]),
        );
        // Ids are per conversation.
        expect(await store.append('other', [withId('a', 'x')])).toBe(0);
        expect(texts(await store.read('c'))).toEqual(['a', 'plain', 'b']);
      });

      it('checks ids after the generation and before expectedSeq', async () => {
        await store.append('c', [withId('a', 'x')], { epoch: 'g1' });
        expect(await rejection(store.append('c', [withId('a', 'x')], { epoch: 'g0' }))).toBeInstanceOf(
          EpochConflictError,
        );
        expect(await heldOf(store.append('c', [withId('a', 'x')], { epoch: 'g1', expectedSeq: 5 }))).toEqual([
          { id: 'x', seq: 0 },
        ]);
        expect(await rejection(store.append('c', [withId('z', 'z')], { expectedSeq: 5 }))).toBeInstanceOf(
          ConflictError,
        );
        expect(await store.head('c')).toBe(1);
      });

      it('refuses a bad id and an id twice in one batch, writing nothing', async () => {
        for (const bad of ['', 'x'.repeat(257), 'a\u0000b', 'lone \ud800', 42, null]) {
          const error = await rejection(store.append('c', [{ ...entry('a'), id: bad as string }]));
          expect(error).toBeInstanceOf(StoreError);
          expect(error).toMatchObject({
            code: 'invalid_argument',
            message: expect.stringMatching(/entries\[0\]\.id/),
          });
        }
        const twice = await rejection(store.append('c', [withId('a', 'x'), withId('b', 'x')]));
        expect(twice).toMatchObject({
          code: 'invalid_argument',
          message: expect.stringMatching(/entries\[1\]\.id/),
        });
        expect(await rejection(store.replace('c', [withId('a', 'x'), withId('b', 'x')]))).toBeInstanceOf(
          StoreError,
        );
        expect(await store.head('c')).toBe(0);
      });

      it('keeps hostile ids exactly', async () => {
        const ids = [
          '"id":"x"',
          'back\\slash',
          'quote"',
          'Ünïcödé 🚀',
          'line\nbreak',
          ' ',
          'i'.repeat(256),
          '{"id":"',
        ];
        await store.append(
          'c',
          ids.map((id, i) => withId(`m${i}`, id)),
        );
        expect((await store.read('c')).map((e) => e.id)).toEqual(ids);
        for (const [i, id] of ids.entries()) {
          expect(await heldOf(store.append('c', [withId('again', id)]))).toEqual([{ id, seq: i }]);
        }
        const other = (await fixture.reopen?.()) ?? store;
        try {
          expect(await heldOf(other.append('c', [withId('again', ids[3] as string)]))).toEqual([
            { id: ids[3], seq: 3 },
          ]);
          expect((await other.read('c')).map((e) => e.id)).toEqual(ids);
        } finally {
          if (other !== store) await other.close();
        }
      });

      it('lets an id go with its entry: pop, replace and delete', async () => {
        await store.append('c', [withId('a', 'x'), withId('b', 'y')]);
        expect((await store.pop('c'))?.id).toBe('y');
        expect(await store.append('c', [withId('b2', 'y')])).toBe(1);
        await store.replace('c', [withId('r', 'y'), entry('s')]);
        expect(await store.append('c', [withId('a', 'x')])).toBe(2);
        expect(await heldOf(store.append('c', [withId('r', 'y')]))).toEqual([{ id: 'y', seq: 0 }]);
        await store.delete('c');
        expect(await store.append('c', [withId('r', 'y')])).toBe(0);
        await store.replace('c', []);
        expect(await store.append('c', [withId('r', 'y')])).toBe(0);
      });

      it('of many writers adding one id at once, exactly one stores it', async () => {
        const others = await Promise.all(
          Array.from({ length: 3 }, async () => (await fixture.reopen?.()) ?? store),
        );
        try {
          const writers = [store, ...others, store, ...others];
          const results = await Promise.allSettled(
            writers.map((w, i) => w.append('c', [withId(`same ${i}`, 'once'), entry(`plain ${i}`)])),
          );
          const stored = results.filter((r) => r.status === 'fulfilled');
          expect(stored).toHaveLength(1);
          for (const r of results) {
            if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DuplicateMessageIdError);
          }
          const all = await store.read('c');
          expect(all).toHaveLength(2);
          expect(all.filter((e) => e.id === 'once')).toHaveLength(1);
        } finally {
          for (const other of new Set(others)) if (other !== store) await other.close();
        }
      });
    });

    describe('search (drivers that keep a full-text index)', () => {
      /** The store's search, or a skip for drivers without one. */
      function searchOf(context: { skip: (note?: string) => void }): StoreSearch {
        if (!store.search) {
          context.skip(`${name} keeps no full-text index: recall indexes its entries in process`);
          throw new Error('unreachable');
        }
        return store.search;
      }

      const said = (text: string, role: 'user' | 'assistant' = 'user'): NewEntry => ({
        message: { role, content: text },
        metadata: { timestamp: TIMESTAMP },
      });

      it('finds entries by any of the words, in any of their forms, best first, in the same transaction as the append', async (context) => {
        const search = searchOf(context);
        await store.append('c', [
          said('I went hiking in the mountains'),
          said('Researching adoption agencies is a dream', 'assistant'),
          said('The agency called back about the adoption'),
          said('Pottery class on Tuesday'),
        ]);
        const found = await search.find('c', ['researched', 'agencies'], 10);
        expect(found).toMatchObject({ indexed: 4, head: 4 });
        expect(found.hits.map((h) => h.seq)).toEqual([1, 2]);
        expect(found.hits[0]!.score).toBeGreaterThan(found.hits[1]!.score);
        expect((await search.find('c', ['pottery'], 10)).hits.map((h) => h.seq)).toEqual([3]);
        expect((await search.find('c', ['xylophone'], 10)).hits).toEqual([]);
        expect((await search.find('c', [], 10)).hits).toEqual([]);
        expect((await search.find('c', ['adoption', 'agency', 'hiking'], 2)).hits).toHaveLength(2);
      });

      it('searches tool calls and results of both formats', async (context) => {
        const search = searchOf(context);
        await store.append('c', VARIED);
        expect((await search.find('c', ['read_file'], 10)).hits.map((h) => h.seq)).toContain(1);
        expect((await search.find('c', ['search'], 10)).hits.map((h) => h.seq)).toContain(4);
        expect((await search.find('c', ['nul', 'emoji'], 10)).hits.map((h) => h.seq)).toEqual([2]);
      });

      it('keeps conversations apart, hostile ids included', async (context) => {
        const search = searchOf(context);
        for (const [i, id] of HOSTILE_IDS.slice(0, 12).entries())
          await store.append(id, [said(`marker${i} shared`)]);
        for (const [i, id] of HOSTILE_IDS.slice(0, 12).entries()) {
          expect((await search.find(id, [`marker${i}`], 10)).hits).toEqual([
            { seq: 0, score: expect.any(Number) },
          ]);
          expect((await search.find(id, [`marker${(i + 1) % 12}`], 10)).hits).toEqual([]);
          expect((await search.find(id, ['shared'], 10)).hits).toHaveLength(1);
        }
        expect(await search.find('nobody', ['shared'], 10)).toEqual({ hits: [], indexed: 0, head: 0 });
      });

      it('follows replace and delete, and indexes nothing of a conflicting append', async (context) => {
        const search = searchOf(context);
        await store.append('c', [said('apples'), said('bananas')]);
        expect(await rejection(store.append('c', [said('cherries')], { expectedSeq: 0 }))).toBeInstanceOf(
          ConflictError,
        );
        expect((await search.find('c', ['cherries'], 10)).hits).toEqual([]);
        await store.replace('c', [said('cherries'), said('dates')]);
        expect(await search.find('c', ['apples'], 10)).toEqual({ hits: [], indexed: 2, head: 2 });
        expect((await search.find('c', ['cherries', 'dates'], 10)).hits.map((h) => h.seq).sort()).toEqual([
          0, 1,
        ]);
        await store.append('c', [said('more apples')]);
        expect((await search.find('c', ['apples'], 10)).hits.map((h) => h.seq)).toEqual([2]);
        await store.delete('c');
        expect(await search.find('c', ['apples', 'cherries'], 10)).toEqual({ hits: [], indexed: 0, head: 0 });
        await store.append('c', [said('fresh start')]);
        expect((await search.find('c', ['start'], 10)).hits.map((h) => h.seq)).toEqual([0]);
      });

      it('follows pop, whether the popped entry was indexed yet or not', async (context) => {
        const search = searchOf(context);
        await store.append('c', [said('apples'), said('bananas')]);
        await store.pop('c');
        expect(await search.find('c', ['bananas'], 10)).toEqual({ hits: [], indexed: 1, head: 1 });
        await store.append('c', [said('cherries')]);
        expect((await search.find('c', ['apples', 'cherries'], 10)).hits.map((h) => h.seq).sort()).toEqual([
          0, 1,
        ]);
        await store.pop('c');
        await store.append('c', [said('dates')]);
        expect((await search.find('c', ['cherries'], 10)).hits).toEqual([]);
        expect((await search.find('c', ['dates'], 10)).hits.map((h) => h.seq)).toEqual([1]);
      });

      it('indexes the start of a 10 MB message, and rebuilds and catches up without changing the log', async (context) => {
        const search = searchOf(context);
        const big = `needle at the start ${'filler text '.repeat(900_000)}`;
        await store.append('c', [
          said('before'),
          { message: { role: 'tool', tool_call_id: 't', content: big }, metadata: { timestamp: TIMESTAMP } },
        ]);
        expect((await search.find('c', ['needle'], 10)).hits.map((h) => h.seq)).toEqual([1]);
        const log = await store.read('c');
        expect(await search.catchUp('c')).toBe(2);
        expect(await search.rebuild('c')).toBe(2);
        expect((await search.find('c', ['needle'], 10)).hits.map((h) => h.seq)).toEqual([1]);
        expect(await store.read('c')).toStrictEqual(log);
        expect(await search.catchUp('nobody')).toBe(0);
      });

      it('rejects a bad conversation id with StoreError', async (context) => {
        const search = searchOf(context);
        expect(await rejection(search.find('', ['x'], 10))).toBeInstanceOf(StoreError);
        expect(await rejection(search.catchUp(''))).toBeInstanceOf(StoreError);
      });
    });

    describe('close and reopen', () => {
      it('rejects calls after close with StoreError, and closing twice is fine', async () => {
        await store.append('c', [entry('a')]);
        await store.close();
        await store.close();
        expect(await rejection(store.append('c', [entry('b')]))).toBeInstanceOf(StoreError);
        expect(await rejection(store.read('c'))).toBeInstanceOf(StoreError);
        expect(await rejection(store.list())).toBeInstanceOf(StoreError);
      });

      it('keeps logs, metadata versions and listing across close and reopen', async (context) => {
        const reopen = fixture.reopen;
        if (!reopen) {
          context.skip(`${name} has no reopen: its data does not outlive the instance`);
          return;
        }
        const ids = ['plain', 'Ünïcödé 🚀', '../x', 'l'.repeat(1000)];
        for (const id of ids) {
          await store.append(id, VARIED);
          await store.append(id, [entry(`tail of ${id.slice(0, 10)}`)]);
          await store.setMeta(id, { id });
          await store.setMeta(id, { id, again: true });
        }
        const before = await Promise.all(ids.map((id) => store.read(id)));
        await store.close();
        store = await reopen();
        expect(new Set((await store.list()).ids)).toEqual(new Set(ids));
        for (const [i, id] of ids.entries()) {
          expect(await store.read(id)).toStrictEqual(before[i]);
          expect(await store.head(id)).toBe(VARIED.length + 1);
          expect(await store.getMeta(id)).toEqual({ value: { id, again: true }, version: 2 });
        }
        expect(await store.append('plain', [entry('more')], { expectedSeq: VARIED.length + 1 })).toBe(
          VARIED.length + 1,
        );
        expect(await store.setMeta('plain', { n: 3 }, { expectedVersion: 2 })).toBe(3);
      });
    });
  });
}
