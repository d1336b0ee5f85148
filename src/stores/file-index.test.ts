import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DuplicateMessageIdError, StoreError } from '../errors.js';
import { FileStore } from './file.js';
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

  it('agrees with the log after any appends, replaces, pops and deletes by any instance (property)', async () => {
    type Op =
      | { kind: 'append'; texts: string[]; by: number }
      | { kind: 'replace'; texts: string[]; by: number }
      | { kind: 'pop'; by: number }
      | { kind: 'delete'; by: number };
    const text = fc.string({ minLength: 0, maxLength: 12 });
    const by = fc.nat(2);
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant('append' as const),
          texts: fc.array(text, { minLength: 1, maxLength: 4 }),
          by,
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('replace' as const),
          texts: fc.array(text, { maxLength: 6 }),
          by,
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('pop' as const), by }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), by }) },
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
              o.texts.map((t) => entry(t)),
            );
            model = [...model, ...o.texts];
          } else if (o.kind === 'replace') {
            await w.replace(
              'c',
              o.texts.map((t) => entry(t)),
            );
            model = [...o.texts];
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
