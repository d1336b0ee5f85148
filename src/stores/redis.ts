/**
 * The shared in-memory-server driver on Redis (`redis`, node-redis v6, an optional peer
 * dependency).
 *
 * Keys, under a configurable prefix (default `ck:`):
 * - `{prefix}conv:{encoded id}:log` — a LIST, one JSON element per entry (`{"metadata":…,
 *   "message":…}`); the index in the list is the sequence number.
 * - `{prefix}conv:{encoded id}:meta` — a HASH with `value` (JSON) and `version`.
 * - `{prefix}conv:{encoded id}:ids` — a HASH, message id → seq, for the entries added with an id
 *   (`NewEntry.id`, also kept in the list element as `"id"`): the index `append` looks ids up in.
 * - `{prefix}conv:{encoded id}:counts` — a HASH, seq → the entry's token counts with the digest
 *   of its list element (entry-counts.ts), written with the entry or later by `saveCounts`.
 * - `{prefix}conversations` — a sorted set of the ids (all score 0, so `ZRANGEBYLEX` pages
 *   them in byte order, which is code point order).
 * The id is encoded with `encodeId` so keys stay printable; the sorted set keeps it exactly.
 *
 * - `{prefix}conv:{encoded id}:epoch:changed` — a pub/sub channel: `replace`, `pop` and `delete`
 *   publish the new generation there from their script, so a writer that `watch`es learns of it
 *   without reading the generation before each request (one subscriber connection per store).
 *
 * Every write is one Lua script, run atomically by the server in one round trip: an append
 * checks the key's type and `LLEN == expectedSeq`, then `RPUSH`es the whole batch. Scripts go
 * by `EVALSHA`, falling back to `EVAL` once after the server's script cache was flushed.
 *
 * Durability is the server's: with `appendonly yes` and `appendfsync always` a resolved
 * append survives a Redis crash; with the defaults the last second (or everything, without
 * persistence) may be lost. Single-node Redis only: the scripts touch keys in several slots.
 */

import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import { ConflictError, DuplicateMessageIdError, EpochConflictError, StoreError } from '../errors.js';
import type { Message, MessageMetadata } from '../messages/types.js';
import { redactUrl, redactUrlsIn } from '../redact-url.js';
import { mapInSlices, Slices } from '../slices.js';
import { checkSaveCounts, decodeCounts, encodeCounts, withCounts, withUpdates } from './entry-counts.js';
import { encodeId, validateConversationId } from './keys.js';
import { listOptions } from './page.js';
import { pageStart, prefixUpperBound } from './prefix-range.js';
import { countsInSlices, serializeInSlices, writeChunks } from './replace-rows.js';
import { describeFound, parseStoredObject, serializeEntries, stringifyForStore } from './stored-json.js';
import type {
  AppendOptions,
  ConversationPage,
  ConversationStore,
  EntryCounts,
  EntryCountsUpdate,
  GenerationWatch,
  MetaRecord,
  NewEntry,
  ReadOptions,
  StoredEntry,
} from './types.js';
import {
  checkAppendArguments,
  checkDeleteArguments,
  checkOptionNames,
  checkReplaceArgumentsInSlices,
  checkSetMetaArguments,
  newEpoch,
  readRange,
} from './validate.js';

/** Where the keys live. */
export interface RedisStoreOptions {
  /** Prepended to every key (default `ck:`), so several stores can share one database. */
  keyPrefix?: string;
}

type Client = ReturnType<typeof createClient>;

// Lua's unpack() is limited by the C stack; RPUSH in slices well below it.
const PUSH_SLICE = `
local function push(key, first, last)
  for i = first, last, 1000 do
    redis.call('RPUSH', key, unpack(ARGV, i, math.min(i + 999, last)))
  end
end
-- ARGV[from…] holds n entries, then n counts records ('' for none): the records of the non-empty.
local function setCounts(key, from, n, seq0)
  for i = 0, n - 1 do
    local record = ARGV[from + n + i]
    if record ~= '' then redis.call('HSET', key, tostring(seq0 + i), record) end
  end
end
local function kind(key)
  return redis.call('TYPE', key).ok
end
`;

/**
 * KEYS: log, meta, index, epoch, counts, ids. ARGV: expectedSeq (-1 for none), id, epoch ('' for
 * none), n, n entries, n counts records, n message ids ('' for none).
 * Returns {'ok', head} | {'conflict', head} | {'stale', epoch} | {'duplicate', id, seq, …} |
 * {'wrongtype', key, type}.
 */
const APPEND = `${PUSH_SLICE}
local t = kind(KEYS[1])
if t ~= 'list' and t ~= 'none' then return {'wrongtype', KEYS[1], t} end
local et = kind(KEYS[4])
if et ~= 'string' and et ~= 'none' then return {'wrongtype', KEYS[4], et} end
local current = redis.call('GET', KEYS[4])
if ARGV[3] ~= '' and current and current ~= ARGV[3] then return {'stale', current} end
local head = redis.call('LLEN', KEYS[1])
local n = tonumber(ARGV[4])
local dt = kind(KEYS[6])
if dt ~= 'hash' and dt ~= 'none' then return {'wrongtype', KEYS[6], dt} end
local held = {'duplicate'}
for i = 1, n do
  local mid = ARGV[4 + 2 * n + i]
  if mid ~= '' then
    local seq = redis.call('HGET', KEYS[6], mid)
    if seq then
      held[#held + 1] = mid
      held[#held + 1] = seq
    end
  end
end
if #held > 1 then return held end
local expected = tonumber(ARGV[1])
if expected >= 0 and expected ~= head then return {'conflict', head} end
if n > 0 then
  for i = 1, n do
    local mid = ARGV[4 + 2 * n + i]
    if mid ~= '' then redis.call('HSET', KEYS[6], mid, head + i - 1) end
  end
  local it = kind(KEYS[3])
  if it ~= 'zset' and it ~= 'none' then return {'wrongtype', KEYS[3], it} end
  local ct = kind(KEYS[5])
  if ct ~= 'hash' and ct ~= 'none' then return {'wrongtype', KEYS[5], ct} end
  push(KEYS[1], 5, 4 + n)
  setCounts(KEYS[5], 5, n, head)
  redis.call('ZADD', KEYS[3], 0, ARGV[2])
  if ARGV[3] ~= '' and not current then redis.call('SET', KEYS[4], ARGV[3]) end
end
return {'ok', head}
`;

/** A replace's check of the keys it writes (KEYS as `REPLACE`'s): each of its type, or none. */
const REPLACE_TYPES = `
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[5], KEYS[6]}) do
  local t = kind(key)
  local want = key == KEYS[1] and 'list' or 'hash'
  if t ~= want and t ~= 'none' then return {'wrongtype', key, t} end
end
local it = kind(KEYS[3])
if it ~= 'zset' and it ~= 'none' then return {'wrongtype', KEYS[3], it} end
`;

/**
 * KEYS: log, meta, index, epoch, counts, ids. ARGV: id, epoch, n, n entries, n counts records,
 * n message ids ('' for none).
 * Returns {'ok', 0} | {'wrongtype', key, type}.
 */
const REPLACE = `${PUSH_SLICE}${REPLACE_TYPES}redis.call('DEL', KEYS[1], KEYS[5], KEYS[6])
redis.call('SET', KEYS[4], ARGV[2])
redis.call('PUBLISH', KEYS[4] .. ':changed', ARGV[2])
local n = tonumber(ARGV[3])
for i = 1, n do
  local mid = ARGV[3 + 2 * n + i]
  if mid ~= '' then redis.call('HSET', KEYS[6], mid, i - 1) end
end
if n > 0 then
  push(KEYS[1], 4, 3 + n)
  setCounts(KEYS[5], 4, n, 0)
  redis.call('ZADD', KEYS[3], 0, ARGV[1])
elseif redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return {'ok', 0}
`;

/**
 * A part of a replace too large for one script (see `replace`), pushed onto keys of its own that
 * no reader knows. KEYS: staged log, counts, ids. ARGV: seq of its first entry, n, time to live
 * (ms), n entries, n counts records, n message ids ('' for none). The keys expire unless the
 * replace's last script takes them: a writer that dies halfway leaves nothing for long.
 * Returns {'ok', head} | {'lost', length} (the staged log is not as long as the parts before).
 */
const STAGE = `${PUSH_SLICE}
local seq0 = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local length = redis.call('LLEN', KEYS[1])
if length ~= seq0 then return {'lost', length} end
push(KEYS[1], 4, 3 + n)
setCounts(KEYS[2], 4, n, seq0)
for i = 1, n do
  local mid = ARGV[3 + 2 * n + i]
  if mid ~= '' then redis.call('HSET', KEYS[3], mid, seq0 + i - 1) end
end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[3]) end
return {'ok', seq0 + n}
`;

/**
 * The end of a staged replace: the staged keys take the conversation's place at once (RENAME).
 * KEYS: log, meta, index, epoch, counts, ids, staged log, counts, ids. ARGV: id, epoch, n.
 * Returns {'ok', 0} | {'lost', length} | {'wrongtype', key, type}.
 */
const REPLACE_STAGED = `${PUSH_SLICE}${REPLACE_TYPES}local length = redis.call('LLEN', KEYS[7])
if length ~= tonumber(ARGV[3]) then return {'lost', length} end
redis.call('DEL', KEYS[1], KEYS[5], KEYS[6])
redis.call('SET', KEYS[4], ARGV[2])
redis.call('PUBLISH', KEYS[4] .. ':changed', ARGV[2])
for i, key in ipairs({KEYS[1], KEYS[5], KEYS[6]}) do
  local staged = KEYS[6 + i]
  if redis.call('EXISTS', staged) == 1 then
    redis.call('RENAME', staged, key)
    redis.call('PERSIST', key)
  end
end
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return {'ok', 0}
`;

/**
 * KEYS: meta, index. ARGV: expectedVersion (-1 for none), id, value.
 * Returns {'ok', version} | {'conflict', version} | {'wrongtype', key, type}.
 */
const SET_META = `
local t = redis.call('TYPE', KEYS[1]).ok
if t ~= 'hash' and t ~= 'none' then return {'wrongtype', KEYS[1], t} end
local it = redis.call('TYPE', KEYS[2]).ok
if it ~= 'zset' and it ~= 'none' then return {'wrongtype', KEYS[2], it} end
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local expected = tonumber(ARGV[1])
if expected >= 0 and expected ~= current then return {'conflict', current} end
redis.call('HSET', KEYS[1], 'value', ARGV[3], 'version', current + 1)
redis.call('ZADD', KEYS[2], 0, ARGV[2])
return {'ok', current + 1}
`;

/**
 * KEYS: log, meta, index, epoch, counts, ids. ARGV: id, epoch. The generation is renewed, not
 * removed (see \`ConversationStore.epoch\`): an append naming the old one is then refused.
 */
const DELETE = `
local it = redis.call('TYPE', KEYS[3]).ok
if it ~= 'zset' and it ~= 'none' then return {'wrongtype', KEYS[3], it} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[5], KEYS[6])
redis.call('SET', KEYS[4], ARGV[2])
redis.call('PUBLISH', KEYS[4] .. ':changed', ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return {'ok', 0}
`;

/**
 * KEYS: log, meta, index, epoch, counts, ids. ARGV: id, epoch.
 * Returns {'ok', element, seq} | {'empty', 0} | {'wrongtype', key, type}.
 */
const POP = `
local t = redis.call('TYPE', KEYS[1]).ok
if t ~= 'list' and t ~= 'none' then return {'wrongtype', KEYS[1], t} end
local it = redis.call('TYPE', KEYS[3]).ok
if it ~= 'zset' and it ~= 'none' then return {'wrongtype', KEYS[3], it} end
local last = redis.call('RPOP', KEYS[1])
if not last then return {'empty', 0} end
redis.call('SET', KEYS[4], ARGV[2])
redis.call('PUBLISH', KEYS[4] .. ':changed', ARGV[2])
local seq = redis.call('LLEN', KEYS[1])
if redis.call('TYPE', KEYS[5]).ok == 'hash' then redis.call('HDEL', KEYS[5], tostring(seq)) end
-- An element added with an id starts with it (see #serialize): the id leaves the index with it.
if string.sub(last, 1, 7) == '{"id":"' and redis.call('TYPE', KEYS[6]).ok == 'hash' then
  local ok, decoded = pcall(cjson.decode, last)
  if ok and type(decoded) == 'table' and type(decoded.id) == 'string' then
    redis.call('HDEL', KEYS[6], decoded.id)
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return {'ok', last, seq}
`;

/**
 * KEYS: epoch, counts. ARGV: epoch ('' for none), then seq and counts record pairs.
 * Returns {'ok', 1} | {'stale', 0} | {'wrongtype', key, type}.
 */
const SAVE_COUNTS = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return {'stale', 0} end
local ct = redis.call('TYPE', KEYS[2]).ok
if ct ~= 'hash' and ct ~= 'none' then return {'wrongtype', KEYS[2], ct} end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
return {'ok', 1}
`;

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

const SCRIPTS = {
  append: script(APPEND),
  replace: script(REPLACE),
  stage: script(STAGE),
  replaceStaged: script(REPLACE_STAGED),
  pop: script(POP),
  setMeta: script(SET_META),
  delete: script(DELETE),
  saveCounts: script(SAVE_COUNTS),
};

/** How long staged keys of a replace live unless its last script takes them (see STAGE). */
const STAGED_TTL_MS = 10 * 60_000;

/** An entry's list element: `{"id":…,"metadata":{…},"message":{…}}` (no `id` without one). */
function listElement(id: string | undefined, metadata: string, message: string): string {
  const head = id === undefined ? '' : `"id":${JSON.stringify(id)},`;
  return `{${head}"metadata":${metadata},"message":${message}}`;
}

/** An entry from its list element, `{"metadata":{…},"message":{…}}`. */
function parseElement(conversationId: string, seq: number, element: unknown): StoredEntry {
  const record = parseStoredObject(conversationId, `entry ${seq}`, element);
  const { metadata, message, id } = record;
  if (typeof metadata !== 'object' || metadata === null || typeof message !== 'object' || message === null) {
    throw new StoreError(
      conversationId,
      `entry ${seq} is damaged: expected {"metadata":{…},"message":{…}}, found ${describeFound(element)}`,
      { code: 'corrupt' },
    );
  }
  const entry: StoredEntry = { seq, message: message as Message, metadata: metadata as MessageMetadata };
  if (typeof id === 'string') entry.id = id;
  return entry;
}

/** Entries a long read asks for per round trip (`RedisStore.#readPaged`): about 1 MB of a typical log. */
const READ_PAGE = 2_000;

/** Starts of a paged read whose pages found another generation, before it reads in one reply. */
const READ_ATTEMPTS = 5;

/** The hash fields of `n` seqs from `fromSeq` on (an `HMGET` of their counts). */
function seqFields(fromSeq: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(fromSeq + i));
}

/**
 * Counts records by seq from an `HGETALL` reply (an object) or an `HMGET` reply (values of the
 * seqs from `fromSeq` on, null where absent).
 */
function fieldMap(reply: unknown, fromSeq: number): Record<string, unknown> {
  if (!Array.isArray(reply)) return (reply ?? {}) as Record<string, unknown>;
  const map: Record<string, unknown> = {};
  reply.forEach((value, i) => {
    map[String(fromSeq + i)] = value;
  });
  return map;
}

/** `parseElement`, with the counts whose digest matches the element's text. */
function parseCounted(conversationId: string, seq: number, element: unknown, record: unknown): StoredEntry {
  const entry = parseElement(conversationId, seq, element);
  return withCounts(entry, typeof element === 'string' ? decodeCounts(record, element) : undefined);
}

function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((e: unknown) => errorText(e)).join('; ');
  }
  return redactUrlsIn(error instanceof Error ? error.message || error.name : String(error));
}

/** The URL without its credentials, for error messages (see `redactUrl`). */
function redact(url: string): string {
  return redactUrl(url);
}

/** A WRONGTYPE reply, alone or among the failed commands of a MULTI (`MultiErrorReply`). */
function isWrongType(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.message.startsWith('WRONGTYPE')) return true;
  const multi = error as Error & { replies?: unknown[]; errorIndexes?: number[] };
  return (multi.errorIndexes ?? []).some((i) => isWrongType(multi.replies?.[i]));
}

/** A script's reply: `[status, …]` with strings and integers. */
function scriptReply(reply: unknown): [string, ...Array<string | number>] {
  if (Array.isArray(reply) && typeof reply[0] === 'string') {
    return reply.map((part: unknown) => (typeof part === 'number' ? part : String(part))) as [
      string,
      ...Array<string | number>,
    ];
  }
  throw new Error(`unexpected script reply ${JSON.stringify(reply)}`);
}

/**
 * Conversations in Redis. Open it with {@link openRedisStore}. A list per conversation, a hash
 * for its metadata and a sorted set of ids, under `keyPrefix`; every write is one Lua script, so it
 * is atomic; durability is the server's (its AOF or RDB settings).
 */
export class RedisStore implements ConversationStore {
  readonly kind = 'redis';
  readonly #client: Client;
  readonly #where: string;
  readonly #prefix: string;
  readonly #index: string;
  #closed = false;
  /** The connection in subscribe mode, once a `watch` asked for it. */
  #subscriber: Promise<Client> | undefined;
  #subscriberClient: Client | undefined;
  /** Channels watched, with their listeners and whether the server confirmed the subscription. */
  readonly #channels = new Map<string, { callbacks: Set<() => void>; subscribed: boolean }>();

  /** Use {@link openRedisStore}, which connects first. */
  private constructor(client: Client, where: string, prefix: string) {
    this.#client = client;
    this.#where = where;
    this.#prefix = prefix;
    this.#index = `${prefix}conversations`;
  }

  /** @internal Connects and returns the store; see {@link openRedisStore}. */
  static async open(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
    checkOptionNames('Redis', options, ['keyPrefix']);
    const prefix = options.keyPrefix ?? 'ck:';
    if (typeof prefix !== 'string') {
      throw new StoreError(undefined, `Redis option keyPrefix must be a string, got ${typeof prefix}`, {
        code: 'invalid_argument',
      });
    }
    const where = redact(url);
    let connected = false;
    let client: Client;
    try {
      client = createClient({
        url,
        socket: {
          connectTimeout: 5_000,
          // Give up quickly on a server that never answered; once connected, ride out restarts.
          reconnectStrategy: (retries: number, cause: Error) =>
            !connected && retries >= 2 ? cause : Math.min(50 * 2 ** retries, 2_000),
        },
      });
    } catch (error) {
      throw new StoreError(undefined, `Redis store ${where} cannot be opened: ${errorText(error)}`, {
        cause: error,
      });
    }
    // Without a listener a dropped connection's 'error' event would end the process; commands
    // in flight reject on their own and are reported by the call that issued them.
    client.on('error', () => {});
    try {
      await client.connect();
      connected = true;
    } catch (error) {
      client.destroy();
      throw new StoreError(undefined, `Redis store ${where} cannot be reached: ${errorText(error)}`, {
        cause: error,
      });
    }
    return new RedisStore(client, where, prefix);
  }

  #keys(conversationId: string): { log: string; meta: string; epoch: string; counts: string; ids: string } {
    const base = `${this.#prefix}conv:${encodeId(conversationId)}`;
    return {
      log: `${base}:log`,
      meta: `${base}:meta`,
      epoch: `${base}:epoch`,
      counts: `${base}:counts`,
      ids: `${base}:ids`,
    };
  }

  #checkOpen(conversationId: string | undefined): void {
    if (this.#closed) {
      throw new StoreError(conversationId, `Redis store ${this.#where} is closed`, { code: 'closed' });
    }
  }

  #wrongType(conversationId: string | undefined, key: string, type: string): StoreError {
    return new StoreError(
      conversationId,
      `Redis key ${JSON.stringify(key)} holds a ${type}, not what contextkit stores there; nothing was changed (is another program using the prefix ${JSON.stringify(this.#prefix)}?)`,
      { code: 'wrong_type' },
    );
  }

  async #failure(
    conversationId: string | undefined,
    what: string,
    error: unknown,
    keys: string[],
  ): Promise<StoreError> {
    if (error instanceof StoreError) return error;
    if (isWrongType(error)) {
      for (const key of keys) {
        const type = await this.#client.type(key).catch(() => 'unknown');
        const expected = key.endsWith(':log')
          ? 'list'
          : key.endsWith(':meta')
            ? 'hash'
            : key.endsWith(':epoch')
              ? 'string'
              : key.endsWith(':counts') || key.endsWith(':ids')
                ? 'hash'
                : 'zset';
        if (type !== expected && type !== 'none') return this.#wrongType(conversationId, key, String(type));
      }
    }
    return new StoreError(conversationId, `Redis store ${this.#where}: ${what} failed: ${errorText(error)}`, {
      cause: error,
    });
  }

  /** Runs a command, turning failures (a key of the wrong type above all) into `StoreError`. */
  async #call<T>(
    conversationId: string | undefined,
    what: string,
    keys: string[],
    work: () => Promise<T>,
  ): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw await this.#failure(conversationId, what, error, keys);
    }
  }

  async #eval(
    conversationId: string | undefined,
    what: string,
    which: Script,
    keys: string[],
    args: string[],
  ): Promise<[string, ...Array<string | number>]> {
    // The command built here, not by `evalSha`'s options: node-redis spreads `arguments` into a call,
    // which overflows the stack past about 100k of them (a replace of 40,000 entries).
    const command = (name: string, script: string): string[] => {
      const out = [name, script, String(keys.length), ...keys];
      for (const arg of args) out.push(arg);
      return out;
    };
    const reply = await this.#call(conversationId, what, keys, async () => {
      try {
        return await this.#client.sendCommand<unknown>(command('EVALSHA', which.sha));
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
        return await this.#client.sendCommand<unknown>(command('EVAL', which.source));
      }
    });
    const parsed = scriptReply(reply);
    if (parsed[0] === 'wrongtype')
      throw this.#wrongType(conversationId, String(parsed[1]), String(parsed[2]));
    return parsed;
  }

  /**
   * The script arguments of a batch: its size, its list elements, their counts records, then
   * their message ids ('' for none).
   */
  #serialize(conversationId: string, entries: readonly NewEntry[]): string[] {
    const elements = serializeEntries(conversationId, entries).map(([metadata, message], i) =>
      listElement(entries[i]?.id, metadata, message),
    );
    const counts = entries.map((entry, i) => encodeCounts(elements[i] as string, entry.counts) ?? '');
    return [String(elements.length), ...elements, ...counts, ...entries.map((entry) => entry.id ?? '')];
  }

  async append(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: AppendOptions,
  ): Promise<number> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { expected, epoch } = checkAppendArguments(conversationId, entries, options);
    const elements = this.#serialize(conversationId, entries);
    const keys = this.#keys(conversationId);
    const reply = await this.#eval(
      conversationId,
      'append',
      SCRIPTS.append,
      [keys.log, keys.meta, this.#index, keys.epoch, keys.counts, keys.ids],
      [String(expected ?? -1), conversationId, epoch ?? '', ...elements],
    );
    const [status, head] = reply;
    if (status === 'stale') throw new EpochConflictError(conversationId, epoch ?? '', String(head));
    if (status === 'duplicate') {
      const held: Array<{ id: string; seq: number }> = [];
      for (let i = 1; i + 1 < reply.length; i += 2)
        held.push({ id: String(reply[i]), seq: Number(reply[i + 1]) });
      throw new DuplicateMessageIdError(conversationId, held);
    }
    if (status === 'conflict') throw new ConflictError(conversationId, expected ?? 0, Number(head));
    return Number(head);
  }

  async epoch(conversationId: string): Promise<string | null> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { epoch } = this.#keys(conversationId);
    return this.#call(conversationId, 'epoch', [epoch], () => this.#client.get(epoch));
  }

  async read(conversationId: string, options?: ReadOptions): Promise<StoredEntry[]> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { fromSeq, limit } = readRange(conversationId, options);
    if (limit === 0) return [];
    const { log, counts } = this.#keys(conversationId);
    const last = Number.isFinite(limit) ? fromSeq + limit - 1 : -1;
    // The entries and their counts in one round trip (MULTI/EXEC), so both are of one moment:
    // a bounded range asks for its own seqs' counts, a whole log for all of them. A tail of
    // unknown length (`sync`) asks for its seqs' counts once it knows them.
    const bounded = limit <= 10_000;
    // Without counts (`counts: false`): the log alone, its counts neither fetched nor checked.
    if (options?.counts === false) {
      const listed = await this.#call(conversationId, 'read', [log], () =>
        this.#client.lRange(log, fromSeq, last),
      );
      return mapInSlices(listed, (element, i) =>
        parseCounted(conversationId, fromSeq + i, element, undefined),
      );
    }
    if (limit > READ_PAGE) {
      const paged = await this.#readPaged(conversationId, fromSeq, limit);
      if (paged) return paged;
    }
    const [elements, records] = await this.#call(conversationId, 'read', [log, counts], async () => {
      const multi = this.#client.multi().lRange(log, fromSeq, last);
      if (bounded) multi.hmGet(counts, seqFields(fromSeq, limit));
      else if (fromSeq === 0) multi.hGetAll(counts);
      const [listed, hashed] = (await multi.exec()) as unknown as [string[], unknown];
      if (bounded || fromSeq === 0) return [listed, fieldMap(hashed, fromSeq)] as const;
      const tail =
        listed.length > 0 ? await this.#client.hmGet(counts, seqFields(fromSeq, listed.length)) : [];
      return [listed, fieldMap(tail, fromSeq)] as const;
    });
    // Parsed in slices that yield, as the other drivers do: no stall the length of the history.
    return mapInSlices(elements, (element, i) =>
      parseCounted(conversationId, fromSeq + i, element, records[String(fromSeq + i)]),
    );
  }

  /**
   * A long read (a resume reads the whole log) a page of `READ_PAGE` entries at a time: each page
   * with its counts and the conversation's generation in one round trip (MULTI/EXEC), parsed in
   * slices that yield before the next is asked for. One reply of the whole log (49 MB at 100,000
   * messages) was decoded in long stretches and held whole until parsed. Within one generation
   * the log only grows (`replace`, `pop` and `delete` renew it), so pages of one generation are
   * the entries of one moment; a page of another starts the read again, and after
   * `READ_ATTEMPTS` such starts it resolves to undefined (the caller reads it in one reply).
   */
  async #readPaged(
    conversationId: string,
    fromSeq: number,
    limit: number,
  ): Promise<StoredEntry[] | undefined> {
    const { log, counts, epoch: epochKey } = this.#keys(conversationId);
    const slices = new Slices();
    for (let attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
      const out: StoredEntry[] = [];
      let epoch: string | null | undefined;
      let from = fromSeq;
      for (;;) {
        const want = Math.min(READ_PAGE, fromSeq + limit - from);
        const start = from;
        const [generation, listed, hashed] = await this.#call(
          conversationId,
          'read',
          [log, counts, epochKey],
          async () =>
            (await this.#client
              .multi()
              .get(epochKey)
              .lRange(log, start, start + want - 1)
              .hmGet(counts, seqFields(start, want))
              .exec()) as unknown as [string | null, string[], unknown[]],
        );
        if (epoch === undefined) epoch = generation;
        // Replaced, popped or deleted since the first page: read again from the start.
        else if (generation !== epoch) break;
        // The HMGET reply holds the page's seqs' counts in order.
        for (let i = 0; i < listed.length; i++) {
          out.push(parseCounted(conversationId, start + i, listed[i], hashed[i]));
          const pause = slices.step();
          if (pause) await pause;
        }
        if (listed.length < want || out.length >= limit) return out;
        from = start + listed.length;
      }
    }
    return undefined;
  }

  async head(conversationId: string): Promise<number> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { log } = this.#keys(conversationId);
    return this.#call(conversationId, 'head', [log], () => this.#client.lLen(log));
  }

  async replace(
    conversationId: string,
    entries: readonly NewEntry[],
    options?: { epoch?: string },
  ): Promise<void> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    // Made ready in slices that yield (issue 32: a replace of 100,000 entries held the event loop
    // for a second). What fits one script is written by one; a larger history is pushed in parts
    // onto staged keys, which its last script renames into place: readers see the old history or
    // the new, whole, never a part.
    const slices = new Slices();
    const epoch = await checkReplaceArgumentsInSlices(conversationId, entries, options, slices);
    const rows = await serializeInSlices(conversationId, entries, slices);
    const elements = await mapInSlices(
      rows,
      ([metadata, message], i) => listElement(entries[i]?.id, metadata, message),
      slices,
    );
    const counts = (await countsInSlices(entries, elements, slices)).map((record) => record ?? '');
    const ids = entries.map((entry) => entry.id ?? '');
    const keys = this.#keys(conversationId);
    const chunks = writeChunks(elements.map((element) => element.length));
    if (chunks.length <= 1) {
      await this.#eval(
        conversationId,
        'replace',
        SCRIPTS.replace,
        [keys.log, keys.meta, this.#index, keys.epoch, keys.counts, keys.ids],
        [conversationId, epoch, String(elements.length), ...elements, ...counts, ...ids],
      );
      return;
    }
    const staged = [
      `${keys.log}:staged:${epoch}`,
      `${keys.counts}:staged:${epoch}`,
      `${keys.ids}:staged:${epoch}`,
    ];
    try {
      for (const [start, end] of chunks) {
        const [status, length] = await this.#eval(conversationId, 'replace', SCRIPTS.stage, staged, [
          String(start),
          String(end - start),
          String(STAGED_TTL_MS),
          ...elements.slice(start, end),
          ...counts.slice(start, end),
          ...ids.slice(start, end),
        ]);
        if (status === 'lost') throw this.#lostStage(conversationId, start, Number(length));
      }
      const [status, length] = await this.#eval(
        conversationId,
        'replace',
        SCRIPTS.replaceStaged,
        [keys.log, keys.meta, this.#index, keys.epoch, keys.counts, keys.ids, ...staged],
        [conversationId, epoch, String(elements.length)],
      );
      if (status === 'lost') throw this.#lostStage(conversationId, elements.length, Number(length));
    } catch (error) {
      await this.#client.del(staged).catch(() => undefined);
      throw error;
    }
  }

  /** A staged replace whose staged log is not as long as what was pushed (it expired, or was touched). */
  #lostStage(conversationId: string, expected: number, found: number): StoreError {
    return new StoreError(
      conversationId,
      `replace not done: its staged entries (${expected} pushed) are ${found} in Redis store ${this.#where}; the conversation is unchanged`,
      { code: 'conflict' },
    );
  }

  async pop(conversationId: string): Promise<StoredEntry | undefined> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const keys = this.#keys(conversationId);
    const [status, element, seq] = await this.#eval(
      conversationId,
      'pop',
      SCRIPTS.pop,
      [keys.log, keys.meta, this.#index, keys.epoch, keys.counts, keys.ids],
      [conversationId, newEpoch()],
    );
    if (status === 'empty') return undefined;
    return parseElement(conversationId, Number(seq), element);
  }

  /**
   * Reads the entries counted and their counts (with the generation, in one MULTI), merges the
   * new counts in, and writes them with a script that first checks the generation is still
   * `epoch`: within one generation the log only grows, so the entries are the ones read.
   */
  async saveCounts(
    conversationId: string,
    updates: readonly EntryCountsUpdate[],
    options: { epoch: string | null },
  ): Promise<boolean> {
    this.#checkOpen(conversationId);
    const epoch = checkSaveCounts(conversationId, updates, options);
    const keys = this.#keys(conversationId);
    const seqs = [...new Set(updates.map((u) => u.seq))];
    const read = await this.#call(conversationId, 'saveCounts', [keys.log, keys.counts], async () => {
      const multi = this.#client.multi().get(keys.epoch);
      for (const seq of seqs) multi.lIndex(keys.log, seq);
      if (seqs.length > 0) multi.hmGet(keys.counts, seqs.map(String));
      return (await multi.exec()) as unknown[];
    });
    if ((read[0] ?? null) !== epoch) return false;
    const elements = read.slice(1, 1 + seqs.length) as Array<string | null>;
    const held = (read[1 + seqs.length] ?? []) as Array<string | null>;
    const merged = new Map<number, EntryCounts>();
    seqs.forEach((seq, i) => {
      const element = elements[i];
      if (typeof element === 'string') merged.set(seq, decodeCounts(held[i], element) ?? {});
    });
    const args: string[] = [];
    seqs.forEach((seq, i) => {
      const base = merged.get(seq);
      if (base === undefined) return;
      args.push(String(seq), encodeCounts(elements[i] as string, withUpdates(base, seq, updates)) as string);
    });
    const [status] = await this.#eval(
      conversationId,
      'saveCounts',
      SCRIPTS.saveCounts,
      [keys.epoch, keys.counts],
      [epoch ?? '', ...args],
    );
    return status === 'ok';
  }

  /**
   * Subscribes (on a second connection, shared by every watch of this store) to the channel the
   * scripts publish generation changes on; `onChange` also runs once the subscription is in
   * place and after every reconnect, when what was published meanwhile is lost.
   */
  watch(conversationId: string, onChange: () => void): GenerationWatch {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const channel = `${this.#keys(conversationId).epoch}:changed`;
    let state = this.#channels.get(channel);
    if (!state) {
      const created = { callbacks: new Set<() => void>(), subscribed: false };
      const tell = () => {
        for (const callback of created.callbacks) callback();
      };
      this.#channels.set(channel, created);
      this.#subscribe()
        .then((subscriber) => subscriber.subscribe(channel, tell))
        .then(() => {
          created.subscribed = true;
          tell();
        })
        // Not subscribed: the watch stays not live, and its holder reads the generation.
        .catch(() => undefined);
      state = created;
    }
    const watched = state;
    watched.callbacks.add(onChange);
    const connected = () => this.#subscriberClient?.isReady === true;
    return {
      get live() {
        return watched.subscribed && connected();
      },
      close: () => {
        watched.callbacks.delete(onChange);
        if (watched.callbacks.size > 0 || this.#channels.get(channel) !== watched) return;
        this.#channels.delete(channel);
        if (watched.subscribed) this.#subscriberClient?.unsubscribe(channel).catch(() => undefined);
      },
    };
  }

  /** The subscriber connection, connected on first use. */
  #subscribe(): Promise<Client> {
    this.#subscriber ??= (async () => {
      const subscriber = this.#client.duplicate();
      subscriber.on('error', () => {});
      // node-redis subscribes again after a reconnect, but what was published meanwhile is lost.
      subscriber.on('ready', () => {
        for (const watched of this.#channels.values()) for (const callback of watched.callbacks) callback();
      });
      await subscriber.connect();
      this.#subscriberClient = subscriber;
      return subscriber;
    })();
    return this.#subscriber;
  }

  async getMeta(conversationId: string): Promise<MetaRecord> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const { meta } = this.#keys(conversationId);
    const [value, version] = await this.#call(conversationId, 'getMeta', [meta], () =>
      this.#client.hmGet(meta, ['value', 'version']),
    );
    if (version === null || version === undefined) return { value: null, version: 0 };
    const parsed = Number(version);
    if (!Number.isSafeInteger(parsed) || parsed < 1) {
      throw new StoreError(
        conversationId,
        `metadata is damaged: field version of ${JSON.stringify(meta)} holds ${describeFound(String(version))}`,
        { code: 'corrupt' },
      );
    }
    return { value: parseStoredObject(conversationId, 'metadata', value), version: parsed };
  }

  async setMeta(
    conversationId: string,
    value: Record<string, unknown>,
    options?: { expectedVersion?: number },
  ): Promise<number> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const expected = checkSetMetaArguments(conversationId, value, options);
    const text = stringifyForStore(conversationId, 'metadata', value);
    const { meta } = this.#keys(conversationId);
    const [status, version] = await this.#eval(
      conversationId,
      'setMeta',
      SCRIPTS.setMeta,
      [meta, this.#index],
      [String(expected ?? -1), conversationId, text],
    );
    if (status === 'conflict')
      throw new ConflictError(conversationId, expected ?? 0, Number(version), 'version');
    return Number(version);
  }

  async list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<ConversationPage> {
    this.#checkOpen(undefined);
    const { prefix, cursor, limit } = listOptions(options);
    const start = pageStart(prefix, cursor);
    const upper = prefixUpperBound(prefix);
    const min = start.from === '' && !start.exclusive ? '-' : `${start.exclusive ? '(' : '['}${start.from}`;
    const max = upper === undefined ? '+' : `(${upper}`;
    const ids = await this.#call(undefined, 'list', [this.#index], () =>
      Number.isFinite(limit)
        ? this.#client.zRangeByLex(this.#index, min, max, { LIMIT: { offset: 0, count: limit + 1 } })
        : this.#client.zRangeByLex(this.#index, min, max),
    );
    if (ids.length <= limit) return { ids };
    const page = ids.slice(0, limit);
    return { ids: page, cursor: page[page.length - 1] as string };
  }

  async delete(conversationId: string, options?: { epoch?: string }): Promise<void> {
    this.#checkOpen(conversationId);
    validateConversationId(conversationId);
    const generation = checkDeleteArguments(conversationId, options);
    const { log, meta, epoch, counts, ids } = this.#keys(conversationId);
    await this.#eval(
      conversationId,
      'delete',
      SCRIPTS.delete,
      [log, meta, this.#index, epoch, counts, ids],
      [conversationId, generation],
    );
  }

  /** Waits for the commands in flight, then closes the connection; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const subscriber = await this.#subscriber?.catch(() => undefined);
    await subscriber?.close().catch(() => undefined);
    await this.#client.close();
  }
}

/**
 * Connects to Redis at `url` (`redis://[:password@]host:port[/db]`, or `rediss://` for TLS)
 * and returns the store; the driver behind `redis://` store URLs. Rejects with a `StoreError`
 * (password redacted) when the server cannot be reached.
 */
export async function openRedisStore(url: string, options?: RedisStoreOptions): Promise<RedisStore> {
  return RedisStore.open(url, options);
}
