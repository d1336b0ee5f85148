import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { encodeId } from './keys.js';
import { FilePersistence, MemoryPersistence, type Persistence } from './persistence.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function fileDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'contextkit-persist-'));
  dirs.push(dir);
  return dir;
}

const drivers: Array<[string, () => Promise<Persistence>]> = [
  ['MemoryPersistence', async () => new MemoryPersistence()],
  ['FilePersistence', async () => new FilePersistence(await fileDir())],
];

describe.each(drivers)('%s', (_name, make) => {
  let p: Persistence;
  beforeEach(async () => {
    p = await make();
  });

  it('gets what was set, null for what was not', async () => {
    expect(await p.get('missing')).toBeNull();
    expect(await p.has('missing')).toBe(false);
    await p.set('k', { a: [1, 'two', { three: true }], n: null });
    expect(await p.get('k')).toEqual({ a: [1, 'two', { three: true }], n: null });
    expect(await p.has('k')).toBe(true);
    await p.set('k', 'replaced');
    expect(await p.get('k')).toBe('replaced');
  });

  it('stores null as a value that has() can tell from absence', async () => {
    await p.set('nothing', null);
    expect(await p.get('nothing')).toBeNull();
    expect(await p.has('nothing')).toBe(true);
  });

  it('copies values in and out', async () => {
    const value = { list: [1] };
    await p.set('k', value);
    value.list.push(2);
    const got = (await p.get<{ list: number[] }>('k')) as { list: number[] };
    expect(got.list).toEqual([1]);
    got.list.push(3);
    expect(await p.get('k')).toEqual({ list: [1] });
  });

  it('deletes, quietly when absent', async () => {
    await p.set('k', 1);
    await p.delete('k');
    await p.delete('k');
    expect(await p.has('k')).toBe(false);
  });

  it('lists keys under a prefix in code point order, hostile and long keys included', async () => {
    const keys = [
      'cache:a:1',
      'cache:a:2',
      'cache:b:x/y',
      'calibration:openai/gpt-4o',
      'Cache:A',
      '😀',
      '\uff5e',
      `long:${'é'.repeat(300)}`,
    ];
    for (const key of keys) await p.set(key, key);
    expect(await p.list('cache:')).toEqual(['cache:a:1', 'cache:a:2', 'cache:b:x/y']);
    expect(await p.list()).toEqual([
      'Cache:A',
      'cache:a:1',
      'cache:a:2',
      'cache:b:x/y',
      'calibration:openai/gpt-4o',
      `long:${'é'.repeat(300)}`,
      '\uff5e',
      '😀',
    ]);
    for (const key of keys) expect(await p.get(key)).toBe(key);
  });

  it('refuses undefined values and bad keys with StoreError', async () => {
    await expect(p.set('k', undefined)).rejects.toThrow(/cannot store undefined/);
    await expect(p.get('')).rejects.toBeInstanceOf(StoreError);
    await expect(p.set('\udc00', 1)).rejects.toThrow(/persistence key .*lone surrogate/);
  });
});

describe('MemoryPersistence', () => {
  it('has the seed test affordances size and clear()', async () => {
    const p = new MemoryPersistence();
    await p.set('a', 1);
    await p.set('b', 2);
    expect(p.size).toBe(2);
    p.clear();
    expect(p.size).toBe(0);
  });
});

describe('FilePersistence', () => {
  it('writes one JSON file per key that holds its key, atomically, leaving no temp files', async () => {
    const dir = await fileDir();
    const p = new FilePersistence(dir);
    await Promise.all(Array.from({ length: 10 }, (_, i) => p.set('calibration:openai/gpt-4o', { i })));
    const files = await readdir(dir);
    expect(files).toEqual([`${encodeId('calibration:openai/gpt-4o')}.json`]);
    const record = JSON.parse(await readFile(join(dir, files[0] as string), 'utf8'));
    expect(record.key).toBe('calibration:openai/gpt-4o');
    expect(await new FilePersistence(dir).get('calibration:openai/gpt-4o')).toEqual(record.value);
  });

  it('reports a damaged file and does not touch it', async () => {
    const dir = await fileDir();
    const p = new FilePersistence(dir);
    await p.set('k', 1);
    await writeFile(join(dir, 'k.json'), '{"key":"k","va');
    await expect(p.get('k')).rejects.toThrow(/persistence key "k": .*not a stored value/);
    await expect(p.delete('k')).rejects.toBeInstanceOf(StoreError);
    expect(await readFile(join(dir, 'k.json'), 'utf8')).toBe('{"key":"k","va');
  });

  it('rejects a value that is not JSON', async () => {
    const p = new FilePersistence(await fileDir());
    await expect(p.set('k', { n: 1n })).rejects.toThrow(/not JSON/);
  });

  it('reads an absent directory as empty', async () => {
    const p = new FilePersistence(join(await fileDir(), 'not', 'yet'));
    expect(await p.list()).toEqual([]);
    expect(await p.get('k')).toBeNull();
    await p.set('k', 1);
    expect(await p.list()).toEqual(['k']);
  });
});
