/**
 * `contextkit conversations list|show|export|import|delete --store URL`: what a store holds, and
 * moving conversations in and out of it as JSONL.
 *
 * Export writes one `{"seq":N,"metadata":{…},"message":{…}}` line per stored entry (the file
 * store's own line format, without its batch markers), so `import` of an export followed by
 * another export gives the same bytes on every driver. `import` reads the whole file and checks
 * every line before it writes anything, then appends in batches with `expectedSeq`, so a writer
 * racing the import is reported rather than interleaved.
 *
 * `delete` asks on a terminal; when standard input is not a terminal (a script, a pipe) it
 * refuses without `--yes` (a usage error, exit 2), so a script never deletes by accident and
 * never hangs on a question nobody sees.
 */

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { type Command, Option } from 'commander';
import { ConflictError, InvalidMessageError, StoreError } from '../../errors.js';
import { formatInt } from '../../format-number.js';
import { isFormatName, PLAIN_FORMAT } from '../../formats/registry.js';
import { ContextManager } from '../../manager.js';
import { jsonValueIssues } from '../../messages/json-limits.js';
import type { Message, MessageFormat, MessageMetadata } from '../../messages/types.js';
import { openStore } from '../../stores/resolve.js';
import type {
  ConversationPage,
  ConversationStore,
  MetaRecord,
  NewEntry,
  ReadOptions,
  StoredEntry,
} from '../../stores/types.js';
import { type ModelCounter, modelCounter } from '../../tokens/model-counter.js';
import { roleOf } from '../../wire/content.js';
import { detectConversationFormat } from '../../wire/detect.js';
import { messageProblems } from '../../wire/validate-message.js';
import { previewMessage } from '../breakdown.js';
import { CliError } from '../cli-error.js';
import { checkConversation, messagesOfBody, parseLines, readInput, syntaxError } from '../input.js';
import { positiveInteger } from '../number-option.js';
import { ProgressBar } from '../progress.js';
import { receiptLines } from '../receipt-text.js';
import { MAX_TOKENS_HELP, renamedOption } from '../renamed-option.js';
import { terminalSafe, writeOut } from '../terminal-safe.js';
import { textTable } from '../text-table.js';
import { printWarning } from '../warn.js';

/** Entries read per store call: bounded memory for any conversation length. */
const READ_PAGE = 1_000;
/** Conversation ids per `list` call. */
const LIST_PAGE = 100;
/** An import batch holds at most this many entries… */
const BATCH_ENTRIES = 1_000;
/** …and about this many bytes of JSON, so one append never becomes one huge request. */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Imports and exports shorter than this finish before a bar would be worth drawing. */
const PROGRESS_MIN = 2_000;

const STORE_HELP =
  'the store: file:DIR, sqlite:PATH, redis://…, postgres://… (memory: is empty in every run); default $CONTEXTKIT_STORE';
const MODEL_HELP =
  'model whose tokenizer to count with (default: gpt-4o, or claude-sonnet-4-5 for Anthropic format)';

interface StoreOptions {
  store: string;
}

function storeOption(): Option {
  return new Option('-s, --store <url>', STORE_HELP).env('CONTEXTKIT_STORE').makeOptionMandatory();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function plural(n: number, word: string): string {
  return `${formatInt(n)} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Opens the store a command that only reads (or deletes) names, creating nothing: a missing
 * `file:` directory, `sqlite:` file or Postgres table set is an error that says how a store
 * comes to exist, rather than an empty store.
 */
async function openExisting(url: string): Promise<ConversationStore> {
  try {
    return await openStore(url, { onWarning: printWarning, mustExist: true });
  } catch (error) {
    if (error instanceof StoreError && error.code === 'not_found') {
      throw new CliError(
        `${error.message}; a store is created by \`contextkit conversations import\` or by a ContextManager that writes to it`,
        1,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Opens the store, runs `fn` and closes the store whatever happens; an error closing it is
 * reported only when `fn` itself succeeded, so the first failure is the one printed. Only
 * `creates` opens a store that does not exist yet (import); every other command refuses one.
 */
async function withStore<T>(
  url: string,
  fn: (store: ConversationStore) => Promise<T>,
  { creates = false }: { creates?: boolean } = {},
): Promise<T> {
  if (url.trim() === '')
    throw new CliError('--store is empty (so is $CONTEXTKIT_STORE if set): name a store', 2);
  const store = creates ? await openStore(url, { onWarning: printWarning }) : await openExisting(url);
  if (store.kind === 'memory') {
    printWarning('the memory: store lives only in this process: it starts empty and is forgotten on exit');
  }
  let result: T;
  try {
    result = await fn(store);
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  await store.close();
  return result;
}

/** The store's entries of one conversation, a page at a time, from `fromSeq` up to `toSeq`. */
async function* entryPages(
  store: ConversationStore,
  conversationId: string,
  toSeq = Number.POSITIVE_INFINITY,
): AsyncGenerator<StoredEntry[]> {
  let fromSeq = 0;
  while (fromSeq < toSeq) {
    const limit = Math.min(READ_PAGE, toSeq - fromSeq);
    const page = await store.read(conversationId, { fromSeq, limit });
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    fromSeq += page.length;
  }
}

/** Whether the store holds anything (entries or metadata) under this id. */
async function conversationSize(
  store: ConversationStore,
  conversationId: string,
): Promise<{ head: number; exists: boolean }> {
  const head = await store.head(conversationId);
  if (head > 0) return { head, exists: true };
  const meta = await store.getMeta(conversationId);
  return { head, exists: meta.version > 0 };
}

function notFound(store: ConversationStore, conversationId: string): CliError {
  return new CliError(
    `conversation ${JSON.stringify(conversationId)}: not found in the ${store.kind} store (see contextkit conversations list)`,
    1,
  );
}

/** A model counter for `--model` or the format's default; an unknown `--model` is a usage error. */
function counterFor(model: string | undefined, format: MessageFormat | undefined): ModelCounter {
  const counted = modelCounter(model, format);
  if (counted.warning) throw new CliError(`--model: ${counted.warning}`, 2);
  return counted;
}

/** A bar on standard error when it is a terminal, the job is long, and nothing else draws there. */
function progressFor(total: number, label: string, enabled: boolean): ProgressBar | undefined {
  if (!enabled || total < PROGRESS_MIN || process.stderr.isTTY !== true) return undefined;
  return new ProgressBar({ total, label, stream: process.stderr });
}

// ---------------------------------------------------------------------------------------------
// list

/** One row of `list`: the conversation's size, or why it could not be read. */
export interface ConversationSummary {
  id: string;
  messages: number;
  tokens: number;
  /** `openai`, `anthropic`, `either` (plain text only), `mixed` (formats contradict), or `empty`. */
  format: string;
  /** The model counted for, and whether its counts are exact. */
  model: string;
  exact: boolean;
  error?: string;
}

/**
 * Counts a conversation's messages and tokens a page at a time. The model defaults to the
 * format's, which the first page that shows it decides; pages before that are held back (plain
 * text counts the same in both formats, but the default model differs).
 */
async function summarizeConversation(
  store: ConversationStore,
  conversationId: string,
  model: string | undefined,
): Promise<ConversationSummary> {
  let messages = 0;
  let tokens = 0;
  let format: MessageFormat | 'mixed' | undefined;
  let counted: ModelCounter | undefined;
  let held: Message[] = [];
  const count = (batch: readonly Message[]) => {
    const c = counted as ModelCounter;
    // The counter frames messages by its model's provider; the format only names the shape.
    const shape = isFormatName(format) ? format : PLAIN_FORMAT;
    for (const message of batch) tokens += c.counter.countMessage(message, shape);
  };
  for await (const page of entryPages(store, conversationId)) {
    messages += page.length;
    const batch = page.map((e) => e.message);
    if (counted) {
      count(batch);
      continue;
    }
    try {
      format = detectConversationFormat(batch);
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      format = 'mixed';
    }
    held = held.concat(batch);
    if (format !== undefined) {
      counted = counterFor(model, format === 'mixed' ? undefined : format);
      count(held);
      held = [];
    }
  }
  counted ??= counterFor(model, undefined);
  if (held.length > 0) count(held);
  if (messages > 0) tokens += counted.counter.requestOverhead;
  return {
    id: conversationId,
    messages,
    tokens,
    format: messages === 0 ? 'empty' : (format ?? 'either'),
    model: counted.info.id,
    exact: counted.counter.exact,
  };
}

interface ListOptions extends StoreOptions {
  prefix?: string;
  model?: string;
  json?: boolean;
}

async function listCommand(options: ListOptions): Promise<void> {
  if (options.model !== undefined) counterFor(options.model, undefined);
  await withStore(options.store, async (store) => {
    const rows: ConversationSummary[] = [];
    let cursor: string | undefined;
    do {
      const page: ConversationPage = await store.list({
        ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        limit: LIST_PAGE,
      });
      for (const id of page.ids) {
        try {
          rows.push(await summarizeConversation(store, id, options.model));
        } catch (error) {
          if (!(error instanceof StoreError)) throw error;
          // One damaged conversation must not hide the others: report it and go on.
          printWarning(error.message);
          rows.push({
            id,
            messages: 0,
            tokens: 0,
            format: '?',
            model: '',
            exact: false,
            error: error.message,
          });
          process.exitCode = 1;
        }
      }
      cursor = page.cursor;
    } while (cursor !== undefined);

    if (options.json) {
      const json = {
        store: store.kind,
        ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
        conversations: rows,
      };
      writeOut(`${JSON.stringify(json, null, 2)}\n`);
      return;
    }
    const under = options.prefix !== undefined ? ` under ${JSON.stringify(options.prefix)}` : '';
    if (rows.length === 0) {
      writeOut(`no conversations${under} in the ${store.kind} store\n`);
      return;
    }
    const totalMessages = rows.reduce((n, r) => n + r.messages, 0);
    const table = textTable(
      [
        ['id', 'messages', 'tokens', 'format', 'counted for'],
        ...rows.map((r) =>
          r.error
            ? [r.id, '?', '?', '?', 'unreadable (see the warning above)']
            : [
                r.id,
                formatInt(r.messages),
                formatInt(r.tokens),
                r.format,
                `${r.model} (${r.exact ? 'exact' : 'estimate'})`,
              ],
        ),
      ],
      ['left', 'right', 'right', 'left', 'left'],
    );
    writeOut(
      `${[`${plural(rows.length, 'conversation')}${under} in the ${store.kind} store, ${plural(totalMessages, 'message')}`, ...table].join('\n')}\n`,
    );
  });
}

// ---------------------------------------------------------------------------------------------
// show

/**
 * The store as a ContextManager may see it for `show --max-tokens`: reads go to the store, while
 * metadata writes (the compaction plan the request makes) stay in this process, so looking at
 * a conversation never changes the plan its agent keeps there. Closing leaves the store open
 * for its owner to close.
 */
export class ReadOnlyStoreView implements ConversationStore {
  readonly kind: string;
  readonly #store: ConversationStore;
  readonly #meta = new Map<string, MetaRecord>();

  constructor(store: ConversationStore) {
    this.#store = store;
    this.kind = store.kind;
  }

  #refuse(what: string, conversationId: string): Promise<never> {
    return Promise.reject(
      new StoreError(conversationId, `${what} refused: this view of the ${this.kind} store is read-only`),
    );
  }

  append(conversationId: string, _entries?: readonly NewEntry[]): Promise<number> {
    return this.#refuse('append', conversationId);
  }

  read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    return this.#store.read(conversationId, options);
  }

  head(conversationId: string): Promise<number> {
    return this.#store.head(conversationId);
  }

  epoch(conversationId: string): Promise<string | null> {
    return this.#store.epoch(conversationId);
  }

  /** Keeps nothing: looking at a conversation writes nothing to its store, counts included. */
  saveCounts(): Promise<boolean> {
    return Promise.resolve(false);
  }

  replace(conversationId: string, _entries?: readonly NewEntry[]): Promise<void> {
    return this.#refuse('replace', conversationId);
  }

  pop(conversationId: string): Promise<StoredEntry | undefined> {
    return this.#refuse('pop', conversationId);
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    const local = this.#meta.get(conversationId);
    return local ? structuredClone(local) : this.#store.getMeta(conversationId);
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    const current = await this.getMeta(conversationId);
    if (options?.expectedVersion !== undefined && options.expectedVersion !== current.version) {
      throw new ConflictError(conversationId, options.expectedVersion, current.version, 'version');
    }
    const version = current.version + 1;
    this.#meta.set(conversationId, { value: structuredClone(value), version });
    return version;
  }

  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    return this.#store.list(options);
  }

  delete(conversationId: string): Promise<void> {
    return this.#refuse('delete', conversationId);
  }

  async close(): Promise<void> {}
}

interface ShowOptions extends StoreOptions {
  maxTokens?: number;
  model?: string;
  json?: boolean;
}

function messageLines(
  messages: readonly Message[],
  format: MessageFormat,
  counted: ModelCounter,
  label: (i: number) => string,
): string[] {
  return textTable(
    messages.map((m, i) => [
      label(i),
      roleOf(m),
      formatInt(counted.counter.countMessage(m, format)),
      previewMessage(m),
    ]),
    ['right', 'left', 'right', 'left'],
  );
}

async function showCommand(conversationId: string, options: ShowOptions): Promise<void> {
  if (options.model !== undefined) counterFor(options.model, undefined);
  await withStore(options.store, async (store) => {
    const size = await conversationSize(store, conversationId);
    if (!size.exists) throw notFound(store, conversationId);
    const entries: StoredEntry[] = [];
    for await (const page of entryPages(store, conversationId)) entries.push(...page);
    for (const entry of entries) checkStoredEntry(conversationId, entry, { metadata: false, valid: true });
    const messages = entries.map((e) => e.message);
    let format: MessageFormat | undefined;
    try {
      format = detectConversationFormat(messages);
    } catch (error) {
      throw new CliError(
        `conversation ${JSON.stringify(conversationId)}: the stored messages mix formats: ${(error as Error).message}`,
        1,
        { cause: error },
      );
    }
    const counted = counterFor(options.model, format);
    const framing = format ?? 'openai';
    const name = JSON.stringify(conversationId);

    if (options.maxTokens === undefined) {
      if (options.json) {
        writeOut(`${JSON.stringify(messages, null, 2)}\n`);
        return;
      }
      const tokens =
        messages.reduce((n, m) => n + counted.counter.countMessage(m, framing), 0) +
        (messages.length > 0 ? counted.counter.requestOverhead : 0);
      const out = [
        `${name}: ${plural(messages.length, 'message')}, ${format ?? 'plain text (either format)'}, ` +
          `${formatInt(tokens)} tokens, ${counted.label} for ${counted.info.id}`,
        ...messageLines(messages, framing, counted, (i) => `#${entries[i]?.seq ?? i}`),
      ];
      writeOut(`${out.join('\n')}\n`);
      return;
    }

    const manager = new ContextManager({
      store: new ReadOnlyStoreView(store),
      conversationId,
      model: counted.info.id,
    });
    manager.on('context:warn', (e) => printWarning(e.message));
    let receipt: Parameters<typeof receiptLines>[0] | undefined;
    manager.on('context:post_compact', (e) => {
      receipt = e.receipt;
    });
    try {
      const view = await manager.getMessagesForRequest({ tokenBudget: options.maxTokens });
      const usage = manager.usage();
      if (options.json) {
        writeOut(`${JSON.stringify(view, null, 2)}\n`);
        return;
      }
      const out = [
        `${name} at a budget of ${formatInt(options.maxTokens)} tokens: ${formatInt(view.length)} of ` +
          `${plural(messages.length, 'message')}, ${formatInt(usage.tokens)} tokens, ${counted.label} for ${counted.info.id}`,
        ...messageLines(view, framing, counted, (i) => `${i + 1}.`),
      ];
      if (receipt) out.push('', ...receiptLines(receipt));
      writeOut(`${out.join('\n')}\n`);
    } finally {
      await manager.close();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// export

/** The export line of a stored entry (or of its message alone): the same bytes for the same entry. */
/**
 * Refuses, naming the entry, a stored entry that was changed by hand or by another program into
 * what no writer here accepts: JSON that would not come back the same (a number read as
 * Infinity), nesting no walk may take, and (with `valid`) a message that is not one.
 */
function checkStoredEntry(
  conversationId: string,
  entry: StoredEntry,
  options: { metadata: boolean; valid: boolean },
): void {
  const issues = [
    ...(options.metadata ? jsonValueIssues(entry.metadata, 'metadata') : []),
    ...jsonValueIssues(entry.message, 'message'),
  ];
  if (issues.length === 0 && options.valid) issues.push(...messageProblems(entry.message, 'message'));
  const [issue] = issues;
  if (!issue) return;
  throw new CliError(
    `conversation ${JSON.stringify(conversationId)}: stored entry ${entry.seq} cannot be read as it is (${issue.path}: ${issue.message}); it was left unchanged — fix or remove that entry`,
    1,
  );
}

export function exportLine(entry: StoredEntry, messagesOnly = false): string {
  return messagesOnly
    ? JSON.stringify(entry.message)
    : JSON.stringify({ seq: entry.seq, metadata: entry.metadata, message: entry.message });
}

/** Where export lines go: standard output, or a temp file renamed over FILE once complete. */
interface Sink {
  write(text: string): Promise<void>;
  finish(): Promise<void>;
  abort(): Promise<void>;
}

async function writeWithBackpressure(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

function stdoutSink(): Sink {
  return {
    write: (text) => writeWithBackpressure(process.stdout, terminalSafe(text)),
    finish: async () => undefined,
    abort: async () => undefined,
  };
}

async function fileSink(path: string): Promise<Sink> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.export.tmp`);
  const stream: WriteStream = createWriteStream(temp, { flags: 'w' });
  let failure: unknown;
  stream.on('error', (error) => {
    failure = error;
  });
  await Promise.race([once(stream, 'open'), once(stream, 'error')]).catch(() => undefined);
  const check = () => {
    if (failure !== undefined) {
      throw new CliError(
        `--out ${path}: cannot write: ${failure instanceof Error ? failure.message : String(failure)}`,
        1,
      );
    }
  };
  check();
  return {
    async write(text) {
      check();
      await Promise.race([writeWithBackpressure(stream, text), once(stream, 'error')]);
      check();
    },
    async finish() {
      stream.end();
      await Promise.race([once(stream, 'close'), once(stream, 'error')]);
      check();
      await rename(temp, path);
    },
    async abort() {
      stream.destroy();
      await unlink(temp).catch(() => undefined);
    },
  };
}

interface ExportOptions extends StoreOptions {
  out: string;
  messagesOnly?: boolean;
  progress: boolean;
}

async function exportCommand(conversationId: string, options: ExportOptions): Promise<void> {
  await withStore(options.store, async (store) => {
    const head = await store.head(conversationId);
    if (head === 0) throw notFound(store, conversationId);
    const toStdout = options.out === '-';
    const sink = toStdout ? stdoutSink() : await fileSink(options.out);
    // Progress would mix with the JSONL when both go to the same terminal.
    const bar = progressFor(head, 'export', options.progress && !(toStdout && process.stdout.isTTY));
    let written = 0;
    try {
      for await (const page of entryPages(store, conversationId, head)) {
        let text = '';
        for (const entry of page) {
          checkStoredEntry(conversationId, entry, { metadata: !options.messagesOnly, valid: false });
          text += `${exportLine(entry, options.messagesOnly)}\n`;
        }
        await sink.write(text);
        written += page.length;
        bar?.update(written);
      }
      if (written !== head) {
        throw new CliError(
          `conversation ${JSON.stringify(conversationId)}: the log changed during the export (${formatInt(head)} entries at the start, ${formatInt(written)} found); nothing was written to the output file — run it again`,
          1,
        );
      }
      await sink.finish();
      bar?.done();
    } catch (error) {
      bar?.stop();
      await sink.abort();
      throw error;
    }
    if (!toStdout) {
      const unit = options.messagesOnly ? 'message' : written === 1 ? 'entry' : 'entries';
      const count = options.messagesOnly ? plural(written, unit) : `${formatInt(written)} ${unit}`;
      process.stderr.write(`exported ${count} of ${JSON.stringify(conversationId)} to ${options.out}\n`);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// import

/** What an import file holds, checked and ready to append. */
export interface ImportData {
  /** `entries`: lines as `export` writes them (metadata kept); `messages`: plain messages. */
  kind: 'entries' | 'messages';
  entries: NewEntry[];
  /** JSON bytes of each entry, to size the batches. */
  sizes: number[];
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (isRecord(value)) {
    const keys = Object.keys(value).slice(0, 6);
    return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.join(', ')}`;
  }
  return value === null ? 'null' : `a ${typeof value}`;
}

function looksLikeEntry(value: unknown): value is { seq: unknown; metadata: unknown; message: unknown } {
  return isRecord(value) && 'seq' in value && 'message' in value && !('role' in value);
}

/** `text` as one JSON document, or undefined (JSONL, or broken: the line reader says where). */
function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Parses an import file: JSONL (or a JSON array) of stored entries, as `export` writes them, or
 * of plain messages, or an object with a `messages` array (or a provider's request body). Every line is checked before anything is written: JSON, one kind
 * throughout, entries numbered from 0 without gaps (the store numbers them again, so a gap
 * would silently change them), metadata objects, and messages valid and in one format. Errors
 * name the file and line. Plain messages get `{timestamp: now, source: "import"}` metadata.
 */
export function parseImport(text: string, source: string, now: () => Date = () => new Date()): ImportData {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let values: unknown[] = [];
  let lines: number[] = [];
  let sizes: number[] = [];
  // `{ messages: [...] }` (or a provider's request body), which every other command reads too.
  const held = body.trimStart().startsWith('{') ? messagesOfBody(parsedOrUndefined(body)) : undefined;
  if (held !== undefined) {
    values = held.messages;
    sizes = values.map((value) => JSON.stringify(value)?.length ?? 0);
  } else if (body.trimStart().startsWith('[')) {
    let array: unknown;
    try {
      array = JSON.parse(body);
    } catch {
      throw syntaxError(source, body);
    }
    values = array as unknown[];
    sizes = values.map((value) => JSON.stringify(value)?.length ?? 0);
  } else {
    ({ values, lines, sizes } = parseLines(body, source));
  }
  if (values.length === 0) throw new CliError(`${source}: no entries or messages to import`, 1);
  const where = (i: number) => (lines.length > 0 ? `${source}:${lines[i]}` : `${source}: element ${i}`);

  const first = values[0];
  let kind: ImportData['kind'];
  if (looksLikeEntry(first)) kind = 'entries';
  else if (isRecord(first) && typeof first.role === 'string') kind = 'messages';
  else {
    throw new CliError(
      `${where(0)}: expected a stored entry {"seq", "metadata", "message"} or a message {"role", …}, found ${describeValue(first)}`,
      1,
    );
  }

  const messages: unknown[] = [];
  const metadata: MessageMetadata[] = [];
  const stamp = now().toISOString();
  // What JSON.parse made of `1e400` (Infinity) or `-0`, and nesting no walk may take: refused
  // with the line, as addMessage refuses them.
  const checkJson = (i: number, value: unknown, path: string) => {
    const [issue] = jsonValueIssues(value, path);
    if (issue) throw new CliError(`${where(i)}: ${issue.path}: ${issue.message}`, 1);
  };
  values.forEach((value, i) => {
    if (kind === 'messages') {
      if (looksLikeEntry(value)) {
        throw new CliError(
          `${where(i)}: a stored entry among plain messages; a file holds one kind throughout`,
          1,
        );
      }
      checkJson(i, value, 'message');
      messages.push(value);
      metadata.push({ timestamp: stamp, source: 'import' });
      return;
    }
    if (!looksLikeEntry(value)) {
      throw new CliError(
        `${where(i)}: expected a stored entry {"seq", "metadata", "message"} like the lines before it, found ${describeValue(value)}`,
        1,
      );
    }
    if (value.seq !== i) {
      throw new CliError(
        `${where(i)}: seq ${JSON.stringify(value.seq)} where ${i} was expected; entries must be numbered from 0 without gaps, as export writes them`,
        1,
      );
    }
    if (!isRecord(value.metadata)) {
      throw new CliError(
        `${where(i)}: "metadata" must be an object, found ${describeValue(value.metadata)}`,
        1,
      );
    }
    checkJson(i, value.metadata, 'metadata');
    checkJson(i, value.message, 'message');
    messages.push(value.message);
    metadata.push(value.metadata as MessageMetadata);
  });

  const checked = checkConversation(
    lines.length > 0 ? { messages, source, lines } : { messages, source },
  ).messages;
  return {
    kind,
    entries: checked.map((message, i) => ({ message, metadata: metadata[i] as MessageMetadata })),
    sizes,
  };
}

/** Consecutive slices of at most {@link BATCH_ENTRIES} entries and about {@link BATCH_BYTES} of JSON. */
function batches(data: ImportData): NewEntry[][] {
  const out: NewEntry[][] = [];
  let current: NewEntry[] = [];
  let bytes = 0;
  data.entries.forEach((entry, i) => {
    const size = data.sizes[i] ?? 0;
    if (current.length > 0 && (current.length >= BATCH_ENTRIES || bytes + size > BATCH_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  });
  if (current.length > 0) out.push(current);
  return out;
}

interface ImportOptions extends StoreOptions {
  id: string;
  replace?: boolean;
  progress: boolean;
}

async function importCommand(file: string, options: ImportOptions): Promise<void> {
  const source = file === '-' ? 'stdin' : file;
  const data = parseImport(await readInput(file), source);
  const conversationId = options.id;
  await withStore(
    options.store,
    async (store) => {
      const name = JSON.stringify(conversationId);
      const size = await conversationSize(store, conversationId);
      if (size.exists) {
        if (!options.replace) {
          throw new CliError(
            `conversation ${name} already exists in the ${store.kind} store (${plural(size.head, 'message')}); pass --replace to overwrite it`,
            1,
          );
        }
        // Its metadata (compaction plan, summaries) describes the old messages: it goes too.
        await store.delete(conversationId);
      }
      const total = data.entries.length;
      const bar = progressFor(total, 'import', options.progress);
      let done = 0;
      try {
        for (const batch of batches(data)) {
          await store.append(conversationId, batch, { expectedSeq: done });
          done += batch.length;
          bar?.update(done);
        }
        bar?.done();
      } catch (error) {
        bar?.stop();
        const partial =
          done > 0
            ? `; ${formatInt(done)} of ${plural(total, 'message')} were imported before this, so the conversation is incomplete — run the import again with --replace`
            : '';
        if (error instanceof ConflictError) {
          throw new CliError(
            `conversation ${name}: another writer appended to it during the import${partial}`,
            1,
            { cause: error },
          );
        }
        if (error instanceof StoreError && partial !== '') {
          throw new StoreError(undefined, `${error.message}${partial}`, { cause: error });
        }
        throw error;
      }
      const what = data.kind === 'entries' ? 'entries' : 'messages';
      writeOut(
        `imported ${formatInt(total)} ${what} from ${source} into ${name} (${store.kind} store${size.exists ? ', replaced' : ''})\n`,
      );
    },
    { creates: true },
  );
}

// ---------------------------------------------------------------------------------------------
// delete

interface DeleteOptions extends StoreOptions {
  yes?: boolean;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

async function deleteCommand(conversationId: string, options: DeleteOptions): Promise<void> {
  if (!options.yes && process.stdin.isTTY !== true) {
    throw new CliError(
      'refusing to delete without --yes when standard input is not a terminal (nobody could confirm)',
      2,
    );
  }
  await withStore(options.store, async (store) => {
    const name = JSON.stringify(conversationId);
    const size = await conversationSize(store, conversationId);
    if (!size.exists) throw notFound(store, conversationId);
    if (!options.yes) {
      const ok = await confirm(
        `delete conversation ${name} (${plural(size.head, 'message')}) from the ${store.kind} store? [y/N] `,
      );
      if (!ok) {
        process.stderr.write('not deleted\n');
        process.exitCode = 1;
        return;
      }
    }
    await store.delete(conversationId);
    writeOut(`deleted ${name} (${plural(size.head, 'message')}) from the ${store.kind} store\n`);
  });
}

// ---------------------------------------------------------------------------------------------

/**
 * `contextkit conversations …`: the conversations a store holds, listed with their sizes, shown
 * (or seen through a request view at a budget), exported to JSONL and imported from it, and
 * deleted, on any driver a store URL names.
 */
export function registerConversations(program: Command): void {
  const group = program
    .command('conversations')
    .description('list, show, export, import and delete the conversations in a store')
    .addHelpText(
      'after',
      '\nSTORE is file:DIR, sqlite:PATH, redis://HOST:PORT or postgres://USER@HOST/DB (or $CONTEXTKIT_STORE).\n' +
        'Export writes JSONL, one {"seq","metadata","message"} line per entry; import reads that (or plain\n' +
        'messages, one a line) and an export of an import gives the same bytes.',
    );

  group
    .command('list')
    .description('conversation ids with their message and token counts')
    .addOption(storeOption())
    .option('-p, --prefix <prefix>', 'only ids that start with this')
    .option('-m, --model <id>', MODEL_HELP)
    .option('--json', 'print the figures as JSON')
    .action((options: ListOptions) => listCommand(options));

  group
    .command('show')
    .description("a conversation's messages, or with --max-tokens the view a request would send")
    .argument('<id>', 'conversation id')
    .addOption(storeOption())
    .option('--max-tokens <n>', `show the request view: ${MAX_TOKENS_HELP}`, positiveInteger)
    .addOption(renamedOption('-b, --budget <n>', '--max-tokens N'))
    .option('-m, --model <id>', MODEL_HELP)
    .option('--json', 'print the messages (or the view) as a JSON array')
    .action((id: string, options: ShowOptions) => showCommand(id, options));

  group
    .command('export')
    .description('write a conversation as JSONL, one stored entry a line')
    .argument('<id>', 'conversation id')
    .addOption(storeOption())
    .option('-o, --out <file>', 'where to write (- for standard output)', '-')
    .option('--messages-only', 'write the messages alone, without seq and metadata')
    .option('--no-progress', 'no progress bar')
    .action((id: string, options: ExportOptions) => exportCommand(id, options));

  group
    .command('import')
    .description('read a JSONL export (or plain messages, one a line) into a conversation')
    .argument('<file>', 'JSONL of entries as export writes them, or of messages; - for stdin')
    .addOption(storeOption())
    .requiredOption('--id <id>', 'conversation id to import into')
    .option('--replace', 'replace the conversation (messages and metadata) if it exists')
    .option('--no-progress', 'no progress bar')
    .action((file: string, options: ImportOptions) => importCommand(file, options));

  group
    .command('delete')
    .description("remove a conversation's messages and metadata")
    .argument('<id>', 'conversation id')
    .addOption(storeOption())
    .option('-y, --yes', 'do not ask (required when standard input is not a terminal)')
    .action((id: string, options: DeleteOptions) => deleteCommand(id, options));
}
