import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DuplicateMessageIdError, StoreError } from '../errors.js';
import { FileStore } from './file.js';
import { findIds, idsHead, idsText } from './file-index.js';
import { PAGE_STARTS } from './line-starts.js';
import type { NewEntry } from './types.js';

/** Bytes read from each file (by name), counted through the file store's own `open`. */
const bytesRead = vi.hoisted(() => new Map<string, number>());

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    const file = String(args[0]).split('/').pop() as string;
    const read = handle.read.bind(handle) as (...a: unknown[]) => Promise<{ bytesRead: number }>;
    (handle as unknown as { read: unknown }).read = async (...a: unknown[]) => {
      const result = await read(...a);
      bytesRead.set(file, (bytesRead.get(file) ?? 0) + result.bytesRead);
      return result;
    };
    return handle;
  };
  return { ...fs, open, default: { ...fs, open } };
});

function entry(text: string, id?: string): NewEntry {
  return {
    message: { role: 'user', content: text },
    metadata: { timestamp: '2025-01-01T00:00:00.000Z' },
    ...(id !== undefined ? { id } : {}),
  };
}

const contents = (entries: Array<{ message: { content?: unknown } }>) =>
  entries.map((e) => e.message.content);

/** An operation on the conversation by instance `by`: items appended or replacing the log, a pop, a delete, a crash. */
type StoreOp<T> =
  | { kind: 'append' | 'replace'; items: T[]; by: number }
  | { kind: 'pop' | 'delete' | 'stale'; by: number };

/**
 * Operations made of `append` and `replace` items, by one of `instances`; with `stale`, also a crash
 * between the log's append and its index's (the index put back as it was before the last append).
 */
function storeOps<T>(
  append: fc.Arbitrary<T[]>,
  replace: fc.Arbitrary<T[]>,
  instances: number,
  stale: boolean,
): fc.Arbitrary<StoreOp<T>> {
  const by = fc.nat(instances - 1);
  const plain = (kind: 'pop' | 'delete' | 'stale') => ({
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant(kind), by }),
  });
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), items: append, by }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), items: replace, by }) },
    plain('pop'),
    plain('delete'),
    ...(stale ? [plain('stale')] : []),
  );
}

describe("the file store's log index (NAME.idx)", () => {
  let dir: string;
  const stores: FileStore[] = [];
  const open = () => {
    const store = new FileStore(dir, { onWarning: () => undefined });
    stores.push(store);
    return store;
  };
  const log = () => join(dir, 'c.jsonl');
  const idx = () => join(dir, 'c.idx');

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'contextkit-idx-'));
    bytesRead.clear();
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lets an instance that never read the log serve its last rows without reading the log whole', async () => {
    const writer = open();
    const texts = Array.from({ length: 400 }, (_, i) => `message ${i} ${'x'.repeat(200)}`);
    await writer.replace(
      'c',
      texts.slice(0, 300).map((t) => entry(t)),
    );
    for (let i = 300; i < 400; i += 10)
      await writer.append(
        'c',
        texts.slice(i, i + 10).map((t) => entry(t)),
      );
    const size = (await readFile(log())).length;
    bytesRead.clear();
    const fresh = open();
    expect(await fresh.head('c')).toBe(400);
    expect(contents(await fresh.read('c', { fromSeq: 390 }))).toEqual(texts.slice(390));
    expect(contents(await fresh.read('c', { fromSeq: 0, limit: 2 }))).toEqual(texts.slice(0, 2));
    // The last line (to check the index is this log's) and the rows asked for.
    expect(bytesRead.get('c.jsonl') ?? 0).toBeLessThan(size / 10);
    expect(contents(await fresh.read('c'))).toEqual(texts);
  });

  it('is read a page at a time: a new instance serving the last rows of a long log reads a few pages of it, and a spoilt page it reads is dropped', async () => {
    const writer = open();
    const total = 3 * PAGE_STARTS + 100;
    const texts = Array.from({ length: total }, (_, i) => `m${i}`);
    await writer.replace(
      'c',
      texts.map((t) => entry(t)),
    );
    const idxSize = (await readFile(idx())).length;
    bytesRead.clear();
    const fresh = open();
    expect(contents(await fresh.read('c', { fromSeq: total - 10 }))).toEqual(texts.slice(-10));
    // The header and the last page: 100 starts, not 12,388.
    expect(bytesRead.get('c.idx') ?? 0).toBeLessThan(idxSize / 10);
    expect(contents(await fresh.read('c', { fromSeq: PAGE_STARTS + 5, limit: 3 }))).toEqual(
      texts.slice(PAGE_STARTS + 5, PAGE_STARTS + 8),
    );
    expect(bytesRead.get('c.idx') ?? 0).toBeLessThan(idxSize / 2);
    // Appended to by the instance that read only some pages: every row is still where it is.
    await fresh.append('c', [entry('late')]);
    expect(contents(await open().read('c'))).toEqual([...texts, 'late']);
    // The second page spoilt (its starts no longer rising): the last rows are served from the
    // pages that hold together; the spoilt page, once a read needs it, is dropped with the file.
    const bytes = await readFile(idx());
    for (let i = PAGE_STARTS; i < 2 * PAGE_STARTS; i++) bytes.writeDoubleLE(7, 104 + 8 * i);
    await writeFile(idx(), bytes);
    const another = open();
    expect(contents(await another.read('c', { fromSeq: total - 2 }))).toEqual([...texts.slice(-2), 'late']);
    expect(contents(await another.read('c', { fromSeq: PAGE_STARTS + 5, limit: 3 }))).toEqual(
      texts.slice(PAGE_STARTS + 5, PAGE_STARTS + 8),
    );
    await expect(readFile(idx())).rejects.toThrow(/ENOENT/);
    expect(contents(await another.read('c'))).toEqual([...texts, 'late']);
    expect(contents(await open().read('c', { fromSeq: PAGE_STARTS, limit: 1 }))).toEqual([
      texts[PAGE_STARTS],
    ]);
  });

  it('is not used for a log edited since it was written: a fresh instance finds the damage as without it', async () => {
    const writer = open();
    await writer.replace(
      'c',
      ['a', 'b', 'c', 'd'].map((t) => entry(t)),
    );
    const text = await readFile(log(), 'utf8');
    // The second line made garbage of the same length: the index's offsets still fit.
    const lines = text.split('\n');
    lines[1] = 'x'.repeat((lines[1] as string).length);
    await writeFile(log(), lines.join('\n'));
    const fresh = open();
    const error = await fresh.read('c').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain('line 2');
  });

  it('serves every read right whatever the index holds: garbage, another log, a crash before its update, starts pointing elsewhere', async () => {
    const writer = open();
    await writer.replace(
      'c',
      ['a', 'b', 'c'].map((t) => entry(t)),
    );
    const early = join(dir, 'early.idx');
    await copyFile(idx(), early);
    await writer.append('c', [entry('d'), entry('e')]);
    const expected = ['a', 'b', 'c', 'd', 'e'];
    const check = async () => {
      const fresh = open();
      expect(await fresh.head('c')).toBe(5);
      expect(contents(await fresh.read('c', { fromSeq: 3 }))).toEqual(expected.slice(3));
      expect(contents(await fresh.read('c'))).toEqual(expected);
    };
    await check();
    // A crash between the log's append and the index's: the index of the first three.
    await copyFile(early, idx());
    await check();
    // Garbage.
    await writeFile(idx(), Buffer.from('not an index at all, just some text of some length'));
    await check();
    // Starts pointing elsewhere, still rising, the header intact: the rows read are not those lines.
    await open().append('c', [entry('f')]);
    expected.push('f');
    const bytes = await readFile(idx());
    bytes.writeDoubleLE(bytes.readDoubleLE(96 + 8 * 4) + 3, 96 + 8 * 4);
    await writeFile(idx(), bytes);
    const fresh = open();
    expect(contents(await fresh.read('c', { fromSeq: 4 }))).toEqual(['e', 'f']);
    expect(contents(await fresh.read('c'))).toEqual(expected);
    // Another log in its place (a replace by an instance whose index is then removed).
    await open().replace(
      'c',
      ['p', 'q'].map((t) => entry(t)),
    );
    await copyFile(early, idx());
    const other = open();
    expect(contents(await other.read('c'))).toEqual(['p', 'q']);
  });

  it('refuses a repeated id an instance that never read the log is asked to append (the index keeps no ids)', async () => {
    const writer = open();
    await writer.replace('c', [entry('a', 'id-a'), entry('b', 'id-b')]);
    await writer.append('c', [entry('c', 'id-c')]);
    const fresh = open();
    expect(contents(await fresh.read('c', { fromSeq: 2 }))).toEqual(['c']);
    const refused = await fresh.append('c', [entry('again', 'id-a')]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(DuplicateMessageIdError);
    expect(await fresh.append('c', [entry('d', 'id-d')])).toBe(3);
    const later = open();
    const refusedLater = await later.append('c', [entry('again', 'id-d')]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refusedLater).toBeInstanceOf(DuplicateMessageIdError);
    expect(contents(await later.read('c'))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('lags the log by fewer than 32 entries at most, every id still found by an instance that never read it', async () => {
    const writer = open();
    await writer.replace(
      'c',
      Array.from({ length: 10 }, (_, i) => entry(`r${i}`, `id-${i}`)),
    );
    for (let i = 10; i < 110; i++)
      await writer.append('c', [entry(`a${i}`, i % 3 === 0 ? undefined : `id-${i}`)]);
    // The header's count of entries (its sixth field).
    const held = (await readFile(idx())).readDoubleLE(8 + 8 * 5);
    expect(held).toBeGreaterThan(110 - 32);
    expect(held).toBeLessThan(110);
    const fresh = open();
    expect(await fresh.head('c')).toBe(110);
    for (const i of [0, 9, 10, 11, 50, 77, 100, 105, 109]) {
      const outcome = await fresh.append('c', [entry('again', `id-${i}`)]).then(
        () => 'appended',
        (e: unknown) => e,
      );
      if (i >= 10 && i % 3 === 0) expect(outcome, `id-${i}`).toBe('appended');
      else expect(outcome, `id-${i}`).toBeInstanceOf(DuplicateMessageIdError);
    }
  });

  it("does not take another conversation's ids file for a log's: a repeated id is still refused", async () => {
    const writer = open();
    await writer.replace('c', [entry('a', 'id-a'), entry('b', 'id-b')]);
    await writer.replace('d', [entry('x', 'id-x'), entry('y', 'id-y')]);
    // The same length, other ids: a swap the index's byte count does not show.
    await copyFile(join(dir, 'd.ids'), join(dir, 'c.ids'));
    const fresh = open();
    const refused = await fresh.append('c', [entry('again', 'id-a')]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(DuplicateMessageIdError);
    expect(await fresh.append('c', [entry('x', 'id-x')])).toBe(2);
  });

  it('checks the ids of an append by an instance that never read the log against NAME.ids, not the log', async () => {
    const writer = open();
    await writer.replace(
      'c',
      Array.from({ length: 300 }, (_, i) => entry(`message ${i} ${'x'.repeat(200)}`, `id-${i}`)),
    );
    for (let i = 300; i < 320; i++) await writer.append('c', [entry(`message ${i}`, `id-${i}`)]);
    const size = (await readFile(log())).length;
    bytesRead.clear();
    const fresh = open();
    const refused = await fresh.append('c', [entry('again', 'id-7')]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(DuplicateMessageIdError);
    expect((refused as DuplicateMessageIdError).message).toContain('id-7');
    expect(await fresh.append('c', [entry('new', 'id-new')])).toBe(320);
    expect(bytesRead.get('c.jsonl') ?? 0).toBeLessThan(size / 10);
    const later = open();
    for (const id of ['id-319', 'id-new', 'id-0']) {
      const error = await later.append('c', [entry('again', id)]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, id).toBeInstanceOf(DuplicateMessageIdError);
    }
  });

  it('refuses exactly the ids the log holds, whichever instance appends, after any appends, replaces, pops and deletes (property)', async () => {
    // Ids from a small pool, so that appends repeat them; -1 is an entry without an id.
    const id = fc.integer({ min: -1, max: 9 });
    const op = storeOps(
      fc.array(id, { minLength: 1, maxLength: 3 }),
      fc.uniqueArray(id, { maxLength: 5 }),
      4,
      true,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        await rm(dir, { recursive: true, force: true });
        // Instances 0–2 live across the operations; 3 is a new one each time.
        const writers = [open(), open(), open()];
        const pick = (n: number) => (n < 3 ? (writers[n] as FileStore) : open());
        let model: number[] = [];
        const saved = join(dir, '..', `${dir.split('/').pop()}-saved.idx`);
        let savedReady = false;
        for (const o of ops) {
          const w = pick(o.by);
          if (o.kind === 'append') {
            const named = o.items.filter((i) => i >= 0);
            const repeated = named.some((i, k) => model.includes(i) || named.indexOf(i) !== k);
            await copyFile(idx(), saved).then(
              () => {
                savedReady = true;
              },
              () => {
                savedReady = false;
              },
            );
            const outcome = await w
              .append(
                'c',
                o.items.map((i) => entry(`t${i}`, i >= 0 ? `id-${i}` : undefined)),
              )
              .then(
                () => 'appended',
                (e: unknown) => e,
              );
            if (repeated) expect(outcome, JSON.stringify({ model, ids: o.items })).not.toBe('appended');
            else {
              expect(outcome, JSON.stringify({ model, ids: o.items })).toBe('appended');
              model = [...model, ...o.items];
            }
          } else if (o.kind === 'replace') {
            await w.replace(
              'c',
              o.items.map((i) => entry(`t${i}`, i >= 0 ? `id-${i}` : undefined)),
            );
            model = [...o.items];
            savedReady = false;
          } else if (o.kind === 'pop') {
            await w.pop('c');
            model = model.slice(0, -1);
            savedReady = false;
          } else if (o.kind === 'delete') {
            await w.delete('c');
            model = [];
            savedReady = false;
          } else if (savedReady) await copyFile(saved, idx());
          const fresh = open();
          expect(contents(await fresh.read('c'))).toEqual(model.map((i) => `t${i}`));
        }
        await rm(saved, { force: true });
      }),
      { numRuns: 80 },
    );
  });

  it('finds in NAME.ids exactly the ids it holds, whatever they contain (quotes, backslashes, brackets, newlines, other ids as parts)', async () => {
    const idArb = fc.oneof(
      fc.string({
        minLength: 1,
        maxLength: 8,
        unit: fc.constantFrom('a', 'b', '"', '\\', ']', '[', ',', '\n', 'é', '1'),
      }),
      fc.string({ minLength: 1, maxLength: 8 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(idArb, { maxLength: 12 }),
        fc.array(idArb, { maxLength: 6 }),
        async (held, others) => {
          const path = join(dir, `ids-${Math.random().toString(36).slice(2)}`);
          const entries = held.map((id, i) => [id, 3 * i] as const);
          const log = { ino: 7, birthtimeMs: 1.5 };
          const text = idsHead(log) + idsText(entries);
          await writeFile(path, text);
          const wanted = [...held, ...others];
          const found = await findIds(path, Buffer.byteLength(text), 3 * held.length, wanted, log);
          expect(found).toEqual(
            new Map(wanted.filter((id) => held.includes(id)).map((id) => [id, 3 * held.indexOf(id)])),
          );
          // A file whose lines name seqs past the log's end is not taken.
          if (held.length > 0)
            expect(
              await findIds(path, Buffer.byteLength(text), 3 * held.length - 3, [held.at(-1) as string], log),
            ).toBeUndefined();
          // Nor a file written for another log.
          if (held.length > 0)
            expect(
              await findIds(path, Buffer.byteLength(text), 3 * held.length, held, {
                ino: 8,
                birthtimeMs: 1.5,
              }),
            ).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('serves more conversations than one instance keeps indexes of (256): every read and id check right after its index was let go', async () => {
    const store = open();
    const ids = Array.from({ length: 300 }, (_, i) => `conv-${i}`);
    for (const c of ids) await store.append(c, [entry(`${c} a`, `${c}/a`)]);
    for (const c of ids) await store.append(c, [entry(`${c} b`)]);
    for (const c of ids) {
      expect(contents(await store.read(c))).toEqual([`${c} a`, `${c} b`]);
      const again = await store.append(c, [entry('again', `${c}/a`)]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(again, c).toBeInstanceOf(DuplicateMessageIdError);
    }
  });

  it('agrees with the log after any appends, replaces, pops and deletes by any instance (property)', async () => {
    const text = fc.string({ minLength: 0, maxLength: 12 });
    const op = storeOps(
      fc.array(text, { minLength: 1, maxLength: 4 }),
      fc.array(text, { maxLength: 6 }),
      3,
      false,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), fc.nat(8), async (ops, from) => {
        await rm(dir, { recursive: true, force: true });
        // Three long-lived instances take turns; a fresh one reads after each operation.
        const writers = [open(), open(), open()];
        let model: string[] = [];
        for (const o of ops) {
          const w = writers[o.by] as FileStore;
          if (o.kind === 'append') {
            await w.append(
              'c',
              o.items.map((t) => entry(t)),
            );
            model = [...model, ...o.items];
          } else if (o.kind === 'replace') {
            await w.replace(
              'c',
              o.items.map((t) => entry(t)),
            );
            model = [...o.items];
          } else if (o.kind === 'pop') {
            await w.pop('c');
            model = model.slice(0, -1);
          } else {
            await w.delete('c');
            model = [];
          }
          const fresh = open();
          expect(await fresh.head('c')).toBe(model.length);
          expect(contents(await fresh.read('c', { fromSeq: from }))).toEqual(model.slice(from));
          expect(contents(await fresh.read('c'))).toEqual(model);
          for (const writer of writers) expect(contents(await writer.read('c'))).toEqual(model);
        }
      }),
      { numRuns: 60 },
    );
  });
});
