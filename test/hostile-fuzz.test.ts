/**
 * Random hostile values thrown at `addMessage`, the stores (memory, file, SQLite) and the CLI.
 * Whatever comes in, nothing hangs (vitest's timeout is the watchdog), nothing crashes (every
 * refusal is a typed `ContextkitError`, every CLI run exits 0, 1 or 2 with at most one
 * `contextkit:` line and no stack trace), and every acknowledged message reads back unchanged
 * from a fresh manager on the same store.
 */
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../src/cli/cli-error.js';
import { parseImport } from '../src/cli/commands/conversations.js';
import { ContextkitError } from '../src/errors.js';
import { ContextkitChatMessageHistory } from '../src/integrations/langchain/chat-message-history.js';
import { ContextkitSession } from '../src/integrations/openai-agents/session.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { FileStore } from '../src/stores/file.js';
import { MemoryStore } from '../src/stores/memory.js';
import { SqliteStore } from '../src/stores/sqlite.js';
import type { ConversationStore } from '../src/stores/types.js';
import { runCli } from './support/run-cli.js';

/** Strings a probe would try: controls, bidi, lone surrogates, prototype keys, long runs, deep JSON. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '\x1b[2J\x1b]0;title\x07',
    '\u202eevil\u2066',
    '\ud800',
    'a\udc00b',
    '__proto__',
    'constructor',
    '<|endoftext|>',
    "'; DROP TABLE entries; --",
    '../../etc/passwd',
    '\u0000\r\n',
    'a'.repeat(20_000),
    '-'.repeat(5_000),
    '['.repeat(5_000) + ']'.repeat(5_000),
    `{"a":${'['.repeat(300)}${']'.repeat(300)}}`,
    'A'.repeat(3_000),
  ),
);

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 1e308, 5e-324),
);

/** Deep objects and arrays, built without recursion. */
const deepValue: fc.Arbitrary<unknown> = fc.integer({ min: 90, max: 2_000 }).map((n) => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
});

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  deepValue,
  fc.anything({
    maxDepth: 3,
    withBigInt: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
    withBoxedValues: true,
    key: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'toJSON')),
  }),
);

/** Message-shaped values with hostile fields, and plain garbage. */
const hostileMessage: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ role: fc.constantFrom('user', 'assistant', 'system'), content: hostileString }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ role: fc.constant('user'), content: hostileString, extra: hostileValue }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      role: fc.constant('assistant'),
      content: fc.constant(null),
      tool_calls: fc
        .tuple(hostileString, hostileString)
        .map(([name, args]) => [
          { id: 'call_1', type: 'function', function: { name: name || 'f', arguments: args } },
        ]),
    }),
  },
  { weight: 1, arbitrary: fc.record({ role: hostileString, content: hostileValue }) },
  { weight: 1, arbitrary: hostileValue },
);

const hostileMetadata: fc.Arbitrary<Record<string, unknown> | undefined> = fc.option(
  fc.dictionary(fc.string({ maxLength: 6 }), hostileValue, { maxKeys: 3 }),
  { nil: undefined },
);

/** What JSON keeps of an accepted value: what the store must give back. */
function jsonForm(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** A CLI run still going after this is killed and fails the test (a hang, not a slow start). */
const CLI_TIMEOUT_MS = 120_000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-hostile-fuzz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type StoreKind = 'memory' | 'file' | 'sqlite';
let storeCount = 0;

/** A store and a way to open it again, as another process would (memory: the same object). */
function storeFor(kind: StoreKind): { first: ConversationStore; reopen: () => ConversationStore } {
  const n = storeCount++;
  if (kind === 'memory') {
    const store = new MemoryStore();
    return { first: store, reopen: () => store };
  }
  if (kind === 'file') {
    const path = join(dir, `file-${n}`);
    return { first: new FileStore(path), reopen: () => new FileStore(path) };
  }
  const path = join(dir, `sqlite-${n}.db`);
  return { first: new SqliteStore(path), reopen: () => new SqliteStore(path) };
}

describe.each(['memory', 'file', 'sqlite'] as const)(
  'hostile values against addMessage on the %s store',
  (kind) => {
    it('refuses with a typed error or keeps the message exactly; a fresh manager reads back every acknowledged one', async () => {
      let accepted = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(hostileMessage, hostileMetadata), { minLength: 1, maxLength: 12 }),
          async (attempts) => {
            const { first, reopen } = storeFor(kind);
            const manager = new ContextManager({ model: 'gpt-4o', store: first, conversationId: 'fuzz' });
            const acknowledged: unknown[] = [];
            for (const [message, metadata] of attempts) {
              try {
                await manager.addMessage(
                  message,
                  metadata === undefined ? {} : { metadata: metadata as never },
                );
                acknowledged.push(jsonForm(message));
                accepted++;
              } catch (error) {
                if (!(error instanceof ContextkitError)) throw error;
                refused++;
              }
            }
            for (const budget of [50, 100_000]) {
              try {
                await manager.getMessagesForRequest({ tokenBudget: budget });
              } catch (error) {
                if (!(error instanceof ContextkitError)) throw error;
              }
            }
            expect(jsonForm(await manager.getMessages())).toEqual(acknowledged);
            // Closing a manager closes its store: the memory store is read again as it is.
            if (kind !== 'memory') await manager.close();
            const again = reopen();
            const resumed = new ContextManager({ model: 'gpt-4o', store: again, conversationId: 'fuzz' });
            const stored: Message[] = await resumed.getMessages();
            expect(jsonForm(stored)).toEqual(acknowledged);
            await resumed.close();
          },
        ),
        { numRuns: kind === 'memory' ? 60 : 25, seed: 15_2026 },
      );
      // Both sides were exercised.
      expect(accepted).toBeGreaterThan(20);
      expect(refused).toBeGreaterThan(20);
      console.log(`${kind}: ${accepted} messages acknowledged, ${refused} refused`);
    }, 300_000);
  },
);

describe.each(['memory', 'file', 'sqlite'] as const)(
  'hostile ids and entries against the %s store itself',
  (kind) => {
    it('appends or refuses with a typed error; what was appended reads back unchanged and is listed', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(hostileString, fc.array(hostileString, { minLength: 1, maxLength: 3 })), {
            minLength: 1,
            maxLength: 6,
          }),
          async (writes) => {
            const { first, reopen } = storeFor(kind);
            const expected = new Map<string, string[]>();
            for (const [id, texts] of writes) {
              const entries = texts.map((text) => ({
                message: { role: 'user', content: text } as Message,
                metadata: { timestamp: '2026-11-24T00:00:00.000Z' },
              }));
              try {
                await first.append(id, entries);
                expected.set(id, [...(expected.get(id) ?? []), ...texts]);
              } catch (error) {
                if (!(error instanceof ContextkitError)) throw error;
              }
            }
            if (kind !== 'memory') await first.close();
            const store = reopen();
            for (const [id, texts] of expected) {
              const read = await store.read(id);
              expect(read.map((e) => e.message.content)).toEqual(texts);
              expect(read.map((e) => e.seq)).toEqual(texts.map((_, i) => i));
            }
            const listed: string[] = [];
            let cursor: string | undefined;
            do {
              const page = await store.list(cursor === undefined ? {} : { cursor });
              listed.push(...page.ids);
              cursor = page.cursor;
            } while (cursor !== undefined);
            expect(new Set(listed)).toEqual(new Set(expected.keys()));
            await store.close();
          },
        ),
        { numRuns: kind === 'memory' ? 40 : 15, seed: 2026_11 },
      );
    }, 300_000);
  },
);

describe.each(['memory', 'file', 'sqlite'] as const)(
  'hostile values through the other paths into the %s store: sessions, LangChain, setMessages, import',
  (kind) => {
    it('each refuses with a typed error or stores exactly what it was given, and the conversation stays loadable', async () => {
      let accepted = 0;
      let refused = 0;
      /** Runs one write; a refusal must be typed. Resolves whether it was accepted. */
      const attempt = async (write: () => Promise<unknown>): Promise<boolean> => {
        try {
          await write();
          accepted++;
          return true;
        } catch (error) {
          if (!(error instanceof ContextkitError)) throw error;
          refused++;
          return false;
        }
      };
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(hostileString, hostileValue), { minLength: 1, maxLength: 5 }),
          fc.array(fc.tuple(hostileMessage, hostileMetadata), { minLength: 1, maxLength: 5 }),
          async (pairs, messages) => {
            const { first, reopen } = storeFor(kind);
            // The Agents session: items kept as given, or refused.
            const session = new ContextkitSession({ store: first, conversationId: 'session' });
            const items: unknown[] = [];
            for (const [text, value] of pairs) {
              const item = { role: 'user', content: text, providerData: { value } };
              if (await attempt(() => session.addItems([item as never]))) items.push(item);
            }
            // The LangChain history: content and kwargs kept, or refused; a ToolMessage without its id refused.
            const history = new ContextkitChatMessageHistory({ store: first, conversationId: 'langchain' });
            const kept: unknown[] = [];
            for (const [text, value] of pairs) {
              const message = new HumanMessage({ content: text, additional_kwargs: { value } });
              if (await attempt(() => history.addMessage(message))) kept.push({ content: text, value });
            }
            expect(
              await attempt(() => history.addMessage(new ToolMessage({ content: 'x', tool_call_id: '' }))),
            ).toBe(false);
            // setMessages: the whole list, or nothing.
            const manager = new ContextManager({ model: 'gpt-4o', store: first, conversationId: 'restored' });
            const list = messages.map(([message]) => message);
            const restored = (await attempt(() => manager.setMessages(list))) ? jsonForm(list) : [];
            // import: the same messages as a file, refused with the line or checked.
            let text: string | undefined;
            try {
              text = list.map((m) => JSON.stringify(m)).join('\n');
            } catch {
              text = undefined;
            }
            if (text !== undefined) {
              try {
                parseImport(text, 'fuzz.jsonl');
              } catch (error) {
                // The CLI's refusal names the file and line, and exits 1.
                if (!(error instanceof CliError) || error.exitCode !== 1) throw error;
                expect(error.message).toMatch(/^fuzz\.jsonl:\d+(:\d+)?: /);
              }
            }
            if (kind !== 'memory') await first.close();
            const store = reopen();
            const again = new ContextkitSession({ store, conversationId: 'session' });
            expect(await again.getAllItems()).toEqual(items);
            await again.getItems();
            const read = await new ContextkitChatMessageHistory({
              store,
              conversationId: 'langchain',
            }).getMessages();
            expect(read.map((m) => ({ content: m.content, value: m.additional_kwargs.value }))).toEqual(kept);
            const resumed = new ContextManager({ model: 'gpt-4o', store, conversationId: 'restored' });
            expect(jsonForm(await resumed.getMessages())).toEqual(restored);
            for (const id of ['langchain', 'restored']) {
              const reader = new ContextManager({ model: 'gpt-4o', store, conversationId: id });
              for (const budget of [60, 100_000]) {
                try {
                  await reader.getMessagesForRequest({ tokenBudget: budget });
                } catch (error) {
                  if (!(error instanceof ContextkitError)) throw error;
                }
              }
            }
            await store.close();
          },
        ),
        { numRuns: kind === 'memory' ? 40 : 12, seed: 20_2026 },
      );
      expect(accepted).toBeGreaterThan(20);
      expect(refused).toBeGreaterThan(20);
    }, 300_000);
  },
);

describe('hostile values written into stored rows by hand', () => {
  it('a manager loads or names the entry with a typed error, under either invalidStored policy', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(hostileValue, hostileValue), { minLength: 1, maxLength: 4 }),
        async (rows) => {
          const path = join(dir, `rows-${storeCount++}`);
          const store = new FileStore(path);
          await store.append('c', [
            { message: { role: 'user', content: 'task' }, metadata: { timestamp: 't' } },
          ]);
          await store.close();
          // Written past the store's checks, as another program or a hand edit would.
          let lines = '';
          rows.forEach(([content, extra], i) => {
            let line: string | undefined;
            try {
              line = `{"seq":${i + 1},"metadata":{"timestamp":"t","extra":${JSON.stringify(extra) ?? 'null'}},"message":{"role":"assistant","content":${JSON.stringify(content) ?? 'null'}}}`;
            } catch {
              line = undefined;
            }
            lines += `${line ?? `{"seq":${i + 1},"metadata":{"timestamp":"t","n":1e999},"message":{"role":"assistant","content":"x"}}`}\n`;
          });
          await appendFile(join(path, 'c.jsonl'), lines);
          for (const invalidStored of ['error', 'skip'] as const) {
            const manager = new ContextManager({ store: `file:${path}`, conversationId: 'c', invalidStored });
            try {
              await manager.getMessagesForRequest({ tokenBudget: 100_000 });
            } catch (error) {
              if (!(error instanceof ContextkitError)) throw error;
            }
            await manager.close();
          }
        },
      ),
      { numRuns: 25, seed: 9_2026 },
    );
  }, 300_000);
});

describe('hostile files against the CLI', () => {
  it('validate, inspect and count exit 0, 1 or 2 with at most one error line, never a stack trace', async () => {
    const files = fc.sample(
      fc.oneof(
        fc.array(hostileMessage, { maxLength: 6 }).map((messages) => {
          try {
            return JSON.stringify(messages) ?? 'null';
          } catch {
            return '[{"role":"user","content":"\\u001b[2J"}]';
          }
        }),
        hostileString,
        fc.constantFrom(
          `[{"role":"tool","tool_call_id":"c","content":${JSON.stringify('['.repeat(1e5) + ']'.repeat(1e5))}}]`,
          `[{"role":"user","content":"x","extra":${'['.repeat(1e5)}${']'.repeat(1e5)}}]`,
          `[{"role":"user","content":${JSON.stringify('a'.repeat(1_000_000))}}]`,
        ),
      ),
      { numRuns: 8, seed: 2026 },
    );
    files.push(
      `[{"role":"tool","tool_call_id":"c","content":${JSON.stringify('['.repeat(1e5) + ']'.repeat(1e5))}}]`,
      `[{"role":"user","content":"x","extra":${'['.repeat(1e5)}${']'.repeat(1e5)}}]`,
    );
    const env = { ...process.env, CONTEXTKIT_DEBUG: '', NO_COLOR: '1', CONTEXTKIT_STORE: '' };
    const paths = await Promise.all(
      files.map(async (text, i) => {
        const path = join(dir, `hostile-${i}.json`);
        await writeFile(path, text);
        return path;
      }),
    );
    // Two at a time: the machine is shared.
    for (let i = 0; i < paths.length; i += 2) {
      const runs = await Promise.all(
        paths
          .slice(i, i + 2)
          .flatMap((path) => [
            runCli(['validate', path], { env, timeoutMs: CLI_TIMEOUT_MS }),
            runCli(['inspect', path], { env, timeoutMs: CLI_TIMEOUT_MS }),
          ]),
      );
      runs.push(await runCli(['count', paths[i]!], { env, timeoutMs: CLI_TIMEOUT_MS }));
      for (const run of runs) {
        expect([0, 1, 2]).toContain(run.code);
        expect(run.stderr).not.toMatch(/\n\s+at /);
        expect(run.stderr).not.toMatch(/RangeError|TypeError|Maximum call stack/);
        const errorLines = run.stderr
          .split('\n')
          .filter((l) => l.startsWith('contextkit: ') && !l.startsWith('contextkit: warning'));
        expect(errorLines.length).toBeLessThanOrEqual(1);
      }
    }
  }, 600_000);
});
