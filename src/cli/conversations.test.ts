import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import { DATABASE_URL, missing, REDIS_URL, skipFor } from '../../test/support/requirements.js';
import { type CliRun, expectOneLineError, runCli } from '../../test/support/run-cli.js';
import { ConflictError, StoreError } from '../errors.js';
import type { Message, MessageFormat, MessageMetadata } from '../messages/types.js';
import { encodeId } from '../stores/keys.js';
import { MemoryStore } from '../stores/memory.js';
import { SqliteStore } from '../stores/sqlite.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { ModelInfo } from '../tokens/types.js';
import { validateRequest } from '../wire/validate-request.js';
import { CliError } from './cli-error.js';
import { exportLine, parseImport, ReadOnlyStoreView } from './commands/conversations.js';

/** Each case spawns several commands; on a loaded 2-core machine one can take seconds. */
const SPAWN_TIMEOUT = 240_000;

type Run = CliRun;

/** The environment of every spawned command: no store from the caller's shell, no stack traces. */
const environment: Record<string, string | undefined> = {
  ...process.env,
  CONTEXTKIT_DEBUG: '',
  NO_COLOR: '1',
};
delete environment.CONTEXTKIT_STORE;

const cli = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> =>
  runCli(args, { input: options.input, env: { ...environment, ...options.env } });

function tokensOf(messages: readonly Message[], format: MessageFormat, model: string): number {
  const counter = createTokenCounter(getModelInfo(model) as ModelInfo);
  return messages.reduce((n, m) => n + counter.countMessage(m, format), counter.requestOverhead);
}

/** Entries with varied metadata (flags, unicode, extra keys), as `export` writes them. */
function entriesFile(messages: readonly Message[]): string {
  return messages
    .map((message, seq) => {
      const metadata: MessageMetadata = {
        timestamp: new Date(Date.UTC(2025, 0, 1) + seq * 1_000).toISOString(),
        source: seq % 7 === 0 ? 'hook' : 'agent',
        ...(seq % 11 === 0 ? { critical: true } : {}),
        ...(seq % 13 === 0 ? { pinned: true, note: 'ünïcødé ✓ 𝄞 "quoted" \\ back' } : {}),
      };
      return `${JSON.stringify({ seq, metadata, message })}\n`;
    })
    .join('');
}

const SESSION = longSessionMessages(2_500, 'openai', 4242);
const ENTRIES = entriesFile(SESSION);
const MESSAGES = SESSION.map((m) => `${JSON.stringify(m)}\n`).join('');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-conversations-'));
  await writeFile(join(dir, 'entries.jsonl'), ENTRIES);
  await writeFile(join(dir, 'messages.jsonl'), MESSAGES);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('parseImport', () => {
  const user = (content: string): Message => ({ role: 'user', content });
  const stamp = () => new Date('2025-06-01T00:00:00.000Z');

  it('reads the { messages: [...] } shape every other command reads (issue 23, item 13)', () => {
    const data = parseImport(JSON.stringify({ messages: [user('a'), user('b')] }, null, 2), 'm.json', stamp);
    expect(data.kind).toBe('messages');
    expect(data.entries.map((e) => e.message)).toEqual([user('a'), user('b')]);
    const body = parseImport(JSON.stringify({ system: 'Be brief.', messages: [user('a')] }), 'b.json', stamp);
    expect(body.entries.map((e) => e.message)).toEqual([{ role: 'system', content: 'Be brief.' }, user('a')]);
  });

  it('reads exported entries with their metadata, and plain messages with import metadata', () => {
    const entries = parseImport(ENTRIES.slice(0, 2_000).split('\n').slice(0, 3).join('\n'), 'x.jsonl');
    expect(entries.kind).toBe('entries');
    expect(entries.entries.map((e) => e.message)).toEqual(SESSION.slice(0, 3));
    expect(entries.entries[0]?.metadata).toMatchObject({ critical: true, pinned: true, source: 'hook' });

    const plain = parseImport(`${JSON.stringify(user('a'))}\n\n${JSON.stringify(user('b'))}\r\n`, 'm', stamp);
    expect(plain.kind).toBe('messages');
    expect(plain.entries).toEqual([
      { message: user('a'), metadata: { timestamp: '2025-06-01T00:00:00.000Z', source: 'import' } },
      { message: user('b'), metadata: { timestamp: '2025-06-01T00:00:00.000Z', source: 'import' } },
    ]);
    const array = parseImport(JSON.stringify([user('a'), user('b')], null, 2), 'm.json', stamp);
    expect(array.entries.map((e) => e.message)).toEqual([user('a'), user('b')]);
  });

  it('names the file and line of what it refuses, before anything is written', () => {
    const line = (value: unknown) => JSON.stringify(value);
    const cases: Array<[string, RegExp]> = [
      ['', /f\.jsonl: no entries or messages to import/],
      [`${line(user('a'))}\n{"role": "user", "content": }\n`, /^f\.jsonl:2:\d+: invalid JSON/],
      [
        `${line(user('a'))}\n${line({ seq: 1, metadata: {}, message: user('b') })}\n`,
        /f\.jsonl:2: a stored entry among plain messages/,
      ],
      [
        `${line({ seq: 0, metadata: {}, message: user('a') })}\n${line({ seq: 2, metadata: {}, message: user('b') })}\n`,
        /f\.jsonl:2: seq 2 where 1 was expected/,
      ],
      [
        `${line({ seq: 0, metadata: 'x', message: user('a') })}\n`,
        /f\.jsonl:1: "metadata" must be an object/,
      ],
      [`${line({ hello: 1 })}\n`, /f\.jsonl:1: expected a stored entry .* or a message/],
      [`${line(user('a'))}\n${line({ role: 'user', content: 5 })}\n`, /^f\.jsonl:2: /],
      // Numbers JSON.parse changes: 1e400 would be stored as Infinity, -0 written back as 0.
      [
        `${line(user('a'))}\n{"role":"user","content":"b","name":"x","extra":{"big":1e400}}\n`,
        /^f\.jsonl:2: message\.extra\.big: Infinity has no JSON form/,
      ],
      [
        `{"seq":0,"metadata":{"timestamp":"t","score":-0},"message":{"role":"user","content":"a"}}\n`,
        /^f\.jsonl:1: metadata\.score: -0 has no JSON form/,
      ],
      [
        `{"seq":0,"metadata":{"timestamp":"t","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}},"message":{"role":"user","content":"a"}}\n`,
        /^f\.jsonl:1: metadata\.deep(\[0\])+: nested more than 100 levels/,
      ],
    ];
    for (const [text, pattern] of cases) {
      let caught: unknown;
      try {
        parseImport(text, 'f.jsonl');
      } catch (error) {
        caught = error;
      }
      expect(caught, text).toBeInstanceOf(CliError);
      expect((caught as CliError).message).toMatch(pattern);
      expect((caught as CliError).exitCode).toBe(1);
    }
  });

  it('writes an entry as the line it reads back', () => {
    const entry = { seq: 3, metadata: { timestamp: 't', pinned: true }, message: user('hé') };
    expect(exportLine(entry)).toBe(
      '{"seq":3,"metadata":{"timestamp":"t","pinned":true},"message":{"role":"user","content":"hé"}}',
    );
    expect(exportLine(entry, true)).toBe('{"role":"user","content":"hé"}');
    const [back] = parseImport(`${'\n'.repeat(0)}${exportLine({ ...entry, seq: 0 })}\n`, 'f').entries;
    expect(back).toEqual({ message: entry.message, metadata: entry.metadata });
  });
});

describe('ReadOnlyStoreView', () => {
  it('reads through, keeps metadata writes to itself, refuses log writes, and leaves the store open', async () => {
    const store = new MemoryStore();
    const entry = { message: { role: 'user', content: 'hi' } as Message, metadata: { timestamp: 't' } };
    await store.append('c', [entry]);
    await store.setMeta('c', { plan: 'stored' });
    const view = new ReadOnlyStoreView(store);
    expect(await view.read('c')).toEqual(await store.read('c'));
    expect(await view.head('c')).toBe(1);
    expect(await view.setMeta('c', { plan: 'local' }, { expectedVersion: 1 })).toBe(2);
    await expect(view.setMeta('c', { plan: 'x' }, { expectedVersion: 1 })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(await view.getMeta('c')).toEqual({ value: { plan: 'local' }, version: 2 });
    expect(await store.getMeta('c')).toEqual({ value: { plan: 'stored' }, version: 1 });
    await expect(view.append('c', [entry])).rejects.toBeInstanceOf(StoreError);
    await expect(view.replace('c', [])).rejects.toThrow(/read-only/);
    await expect(view.delete('c')).rejects.toThrow(/read-only/);
    await view.close();
    expect(await store.head('c')).toBe(1);
  });
});

/** Drivers the round trip runs on: file and SQLite always, Redis and Postgres when they answer. */
const DRIVERS: Array<{ name: string; url: () => string; shared: boolean; missing?: string | undefined }> = [
  { name: 'file', url: () => `file:${join(dir, 'file-store')}`, shared: false },
  { name: 'sqlite', url: () => `sqlite:${join(dir, 'round-trip.db')}`, shared: false },
  { name: 'redis', url: () => REDIS_URL as string, shared: true, missing: missing.redis },
  { name: 'postgres', url: () => DATABASE_URL as string, shared: true, missing: missing.postgres },
];

describe.concurrent('contextkit conversations export/import round trip', { timeout: SPAWN_TIMEOUT }, () => {
  for (const driver of DRIVERS) {
    it(`gives back the same bytes on ${driver.name}`, skipFor(driver.missing), async () => {
      const store = driver.url();
      // Ids with a slash and non-Latin-1 characters, unique on a shared server.
      const base = `ck-cli-test-${process.pid}-${randomBytes(3).toString('hex')}/run ✓`;
      const ids = { a: `${base} a`, b: `${base} b`, m: `${base} m` };
      const out = (name: string) => join(dir, `${driver.name}-${name}.jsonl`);
      try {
        const imported = await cli([
          'conversations',
          'import',
          join(dir, 'entries.jsonl'),
          '--id',
          ids.a,
          '--store',
          store,
        ]);
        expect(imported.stderr).toBe('');
        expect(imported.code).toBe(0);
        expect(imported.stdout).toMatch(/imported 2,500 entries .* \(\w+ store\)/);

        const first = await cli(['conversations', 'export', ids.a, '--store', store, '--out', out('a')]);
        expect(first.code).toBe(0);
        const a = await readFile(out('a'), 'utf8');
        expect(a).toBe(ENTRIES);

        expect((await cli(['conversations', 'import', out('a'), '--id', ids.b, '--store', store])).code).toBe(
          0,
        );
        const second = await cli(['conversations', 'export', ids.b, '--store', store]);
        expect(second.code).toBe(0);
        expect(second.stdout).toBe(a);

        const plain = await cli(['conversations', 'import', '-', '--id', ids.m, '--store', store], {
          input: MESSAGES,
        });
        expect(plain.code).toBe(0);
        const messages = await cli(['conversations', 'export', ids.m, '--store', store, '--messages-only']);
        expect(messages.stdout).toBe(MESSAGES);
      } finally {
        if (driver.shared) {
          await Promise.all(
            Object.values(ids).map((id) => cli(['conversations', 'delete', id, '--yes', '--store', store])),
          );
        }
      }
    });
  }
});

describe.concurrent('contextkit conversations on a SQLite store', { timeout: SPAWN_TIMEOUT }, () => {
  let db: string;
  const openai = SESSION.slice(0, 400);
  const anthropic = longSessionMessages(120, 'anthropic', 77);
  const entry = (message: Message) => ({ message, metadata: { timestamp: '2025-01-01T00:00:00.000Z' } });

  beforeAll(async () => {
    db = join(dir, 'commands.db');
    const store = new SqliteStore(db);
    await store.append('team/openai', openai.map(entry));
    await store.append('team/claude', anthropic.map(entry));
    await store.append('solo', [entry({ role: 'user', content: 'hello' })]);
    await store.append('to-replace', openai.slice(0, 5).map(entry));
    await store.setMeta('to-replace', { plan: 'old' });
    await store.append('to-delete', openai.slice(0, 3).map(entry));
    await store.close();
  });
  const url = () => `sqlite:${db}`;

  it('lists every conversation with its messages and tokens, by prefix, as text and JSON', async () => {
    const [text, json, prefixed] = await Promise.all([
      cli(['conversations', 'list', '--store', url()]),
      cli(['conversations', 'list', '--store', url(), '--json']),
      cli(['conversations', 'list', '--store', url(), '--prefix', 'team/', '--json']),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^\s+team\/claude\s+120\s+[\d,]+\s+anthropic\s+claude-sonnet-4-5 \(estimate\)$/m,
    );
    expect(text.stdout).toMatch(/^\s+team\/openai\s+400\s+[\d,]+\s+openai\s+gpt-4o \(exact\)$/m);
    const rows = JSON.parse(json.stdout).conversations as Array<Record<string, unknown>>;
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get('team/openai')).toMatchObject({
      messages: 400,
      tokens: tokensOf(openai, 'openai', 'gpt-4o'),
      format: 'openai',
      model: 'gpt-4o',
      exact: true,
    });
    expect(byId.get('team/claude')).toMatchObject({
      messages: 120,
      tokens: tokensOf(anthropic, 'anthropic', 'claude-sonnet-4-5'),
      model: 'claude-sonnet-4-5',
    });
    expect(byId.get('solo')).toMatchObject({ messages: 1, format: 'either' });
    expect(JSON.parse(prefixed.stdout).conversations.map((r: { id: string }) => r.id)).toEqual([
      'team/claude',
      'team/openai',
    ]);
  });

  it('shows the stored messages, and the request view at a budget without changing the stored plan', async () => {
    const [json, text, view] = await Promise.all([
      cli(['conversations', 'show', 'team/openai', '--store', url(), '--json']),
      cli(['conversations', 'show', 'team/claude', '--store', url()]),
      cli(['conversations', 'show', 'team/openai', '--store', url(), '--max-tokens', '6k', '--json']),
    ]);
    expect(JSON.parse(json.stdout)).toEqual(openai);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(
      /^"team\/claude": 120 messages, anthropic, [\d,]+ tokens, estimate/,
    );
    expect(text.stdout).toMatch(/^\s+#119\s+\w+\s+[\d,]+\s+\S/m);
    expect(view.code).toBe(0);
    const messages = JSON.parse(view.stdout) as Message[];
    expect(messages.length).toBeLessThan(openai.length);
    expect(tokensOf(messages, 'openai', 'gpt-4o')).toBeLessThanOrEqual(6_000);
    expect(validateRequest(messages, 'openai').problems).toEqual([]);
    const store = new SqliteStore(db);
    try {
      expect((await store.getMeta('team/openai')).version).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('refuses to import over a conversation unless --replace, which replaces messages and metadata', async () => {
    const file = join(dir, 'replacement.jsonl');
    await writeFile(file, `${JSON.stringify({ role: 'user', content: 'new' })}\n`);
    const refused = await cli(['conversations', 'import', file, '--id', 'to-replace', '--store', url()]);
    expectOneLineError(
      refused,
      1,
      /"to-replace" already exists in the sqlite store \(5 messages\); pass --replace/,
    );
    const replaced = await cli([
      'conversations',
      'import',
      file,
      '--id',
      'to-replace',
      '--store',
      url(),
      '--replace',
    ]);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toMatch(/replaced/);
    const store = new SqliteStore(db);
    try {
      expect((await store.read('to-replace')).map((e) => e.message)).toEqual([
        { role: 'user', content: 'new' },
      ]);
      expect(await store.getMeta('to-replace')).toEqual({ value: null, version: 0 });
    } finally {
      await store.close();
    }
  });

  it('writes nothing from a file with a bad line', async () => {
    const file = join(dir, 'bad.jsonl');
    await writeFile(file, `${JSON.stringify(openai[0])}\n${JSON.stringify(openai[1])}\n{"role":"user",\n`);
    expectOneLineError(
      await cli(['conversations', 'import', file, '--id', 'never', '--store', url()]),
      1,
      /bad\.jsonl:3:\d+: invalid JSON/,
    );
    const listed = await cli(['conversations', 'list', '--store', url(), '--prefix', 'never', '--json']);
    expect(JSON.parse(listed.stdout).conversations).toEqual([]);
  });

  it('deletes only with --yes when standard input is not a terminal', async () => {
    expectOneLineError(
      await cli(['conversations', 'delete', 'to-delete', '--store', url()]),
      2,
      /refusing to delete without --yes/,
    );
    const deleted = await cli(['conversations', 'delete', 'to-delete', '--store', url(), '--yes']);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toMatch(/deleted "to-delete" \(3 messages\)/);
    expectOneLineError(
      await cli(['conversations', 'delete', 'to-delete', '--store', url(), '--yes']),
      1,
      /"to-delete": not found in the sqlite store/,
    );
  });

  it('says in one line what is wrong, with exit 2 for usage and 1 for the store', async () => {
    const notDb = join(dir, 'not-a-db.sqlite');
    await writeFile(notDb, 'hello, this is text\n');
    const [noStore, badScheme, badModel, missing, notADatabase, fromEnv] = await Promise.all([
      cli(['conversations', 'list']),
      cli(['conversations', 'list', '--store', 'ftp://x']),
      cli(['conversations', 'show', 'solo', '--store', url(), '--model', 'no-such-model']),
      cli(['conversations', 'export', 'no-such-id', '--store', url()]),
      cli(['conversations', 'list', '--store', `sqlite:${notDb}`]),
      cli(['conversations', 'show', 'solo', '--json'], { env: { CONTEXTKIT_STORE: url() } }),
    ]);
    expectOneLineError(
      noStore,
      2,
      /required option '-s, --store <url>' not specified \(see contextkit conversations --help\)/,
    );
    expectOneLineError(badScheme, 2, /unknown store "ftp:\/\/x"/);
    expectOneLineError(badModel, 2, /--model: model "no-such-model" is not in the catalog/);
    expectOneLineError(missing, 1, /"no-such-id": not found in the sqlite store/);
    expectOneLineError(notADatabase, 1, /is not a SQLite database/);
    expect(JSON.parse(fromEnv.stdout)).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('never creates a store to read from: a mistyped path is an error with a hint', async () => {
    const typoDb = join(dir, 'agnets.db');
    const typoDir = join(dir, 'no-such-dir');
    const [list, show, exported, deleted, listDir] = await Promise.all([
      cli(['conversations', 'list', '--store', `sqlite:${typoDb}`]),
      cli(['conversations', 'show', 'solo', '--store', `sqlite:${typoDb}`]),
      cli(['conversations', 'export', 'solo', '--store', `sqlite:${typoDb}`]),
      cli(['conversations', 'delete', 'solo', '--yes', '--store', `sqlite:${typoDb}`]),
      cli(['conversations', 'list', '--store', `file:${typoDir}`]),
    ]);
    for (const run of [list, show, exported, deleted]) {
      expectOneLineError(
        run,
        1,
        /no SQLite store at .*agnets\.db: the file .* does not exist \(check the path; nothing was created\); a store is created by `contextkit conversations import`/,
      );
    }
    expectOneLineError(listDir, 1, /no file store at .*no-such-dir: the directory .* does not exist/);
    expect(existsSync(typoDb)).toBe(false);
    expect(existsSync(typoDir)).toBe(false);
  });
});

describe('contextkit conversations on rows changed by hand', { timeout: SPAWN_TIMEOUT }, () => {
  it('show and export name the entry that cannot be read, with no stack and no "unexpected error"', async () => {
    const store = join(dir, 'tampered');
    const meta = '{"timestamp":"2025-01-01T00:00:00.000Z"}';
    const line = (seq: number, message: string, metadata = meta) =>
      `{"seq":${seq},"metadata":${metadata},"message":${message}}\n`;
    await mkdir(store);
    await writeFile(
      join(store, `${encodeId('not-iterable')}.jsonl`),
      line(0, '{"role":"user","content":"hi"}') + line(1, '{"role":"assistant","content":42}'),
    );
    await writeFile(
      join(store, `${encodeId('infinite')}.jsonl`),
      line(0, '{"role":"user","content":"hi","score":1e999}'),
    );
    const deep = `{"timestamp":"t","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    await writeFile(
      join(store, `${encodeId('deep')}.jsonl`),
      line(0, '{"role":"user","content":"hi"}') + line(1, '{"role":"assistant","content":"ok"}', deep),
    );
    const url = `file:${store}`;
    const [showNotIterable, showInfinite, exportDeep, exportInfinite] = await Promise.all([
      cli(['conversations', 'show', 'not-iterable', '--store', url]),
      cli(['conversations', 'show', 'infinite', '--store', url]),
      cli(['conversations', 'export', 'deep', '--store', url]),
      cli(['conversations', 'export', 'infinite', '--store', url]),
    ]);
    expectOneLineError(
      showNotIterable,
      1,
      /"not-iterable": stored entry 1 cannot be read as it is \(message\.content: /,
    );
    expectOneLineError(
      showInfinite,
      1,
      /"infinite": stored entry 0 cannot be read as it is \(message\.score: Infinity has no JSON form/,
    );
    expectOneLineError(
      exportDeep,
      1,
      /"deep": stored entry 1 cannot be read as it is \(metadata\.deep(\[0\])+: nested more than 100/,
    );
    expectOneLineError(
      exportInfinite,
      1,
      /"infinite": stored entry 0 cannot be read as it is \(message\.score: Infinity/,
    );
    for (const run of [showNotIterable, showInfinite, exportDeep, exportInfinite]) {
      expect(run.stderr).not.toMatch(/unexpected error/);
    }
  });
});
