/**
 * Argument checks every `ConversationStore` driver shares, so all of them reject the same bad
 * input with the same message before touching storage.
 */

import { randomUUID } from 'node:crypto';
import { StoreError } from '../errors.js';
import { jsonValueIssues } from '../messages/json-limits.js';
import { didYouMean } from '../nearest-name.js';
import { forEachInSlices, type Slices } from '../slices.js';
import { validateEntryCounts } from './entry-counts.js';
import { messageIdProblem, quoteId } from './message-id.js';
import type { AppendOptions, NewEntry } from './types.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/**
 * Checks that a batch is an array of `{ message, metadata }` objects, so a driver can reject
 * the whole batch (atomically: nothing appended) before writing any of it.
 */
export function validateNewEntries(
  conversationId: string,
  entries: unknown,
): asserts entries is readonly NewEntry[] {
  checkArray(conversationId, entries);
  entries.forEach((entry: unknown, i) => {
    checkNewEntry(conversationId, entry, i);
  });
  checkBatchIds(conversationId, entries);
}

/** `validateNewEntries` in slices that yield (a replace of a whole history): the same checks, in order. */
export async function validateNewEntriesInSlices(
  conversationId: string,
  entries: unknown,
  slices: Slices,
): Promise<readonly NewEntry[]> {
  checkArray(conversationId, entries);
  await forEachInSlices(entries, (entry, i) => checkNewEntry(conversationId, entry, i), slices);
  checkBatchIds(conversationId, entries);
  return entries as readonly NewEntry[];
}

function checkArray(conversationId: string, entries: unknown): asserts entries is unknown[] {
  if (!Array.isArray(entries)) {
    throw new StoreError(conversationId, `entries must be an array, got ${describe(entries)}`, {
      code: 'invalid_argument',
    });
  }
}

/** One entry of a batch, `entries[i]`: its shape, counts and id. */
function checkNewEntry(conversationId: string, entry: unknown, i: number): asserts entry is NewEntry {
  if (!isPlainObject(entry)) {
    throw new StoreError(conversationId, `entries[${i}] must be an object, got ${describe(entry)}`, {
      code: 'invalid_argument',
    });
  }
  if (!isPlainObject(entry.message)) {
    throw new StoreError(
      conversationId,
      `entries[${i}].message must be an object, got ${describe(entry.message)}`,
      {
        code: 'invalid_argument',
      },
    );
  }
  if (!isPlainObject(entry.metadata)) {
    throw new StoreError(
      conversationId,
      `entries[${i}].metadata must be an object, got ${describe(entry.metadata)}`,
      { code: 'invalid_argument' },
    );
  }
  validateEntryCounts(conversationId, `entries[${i}].counts`, entry.counts);
  if (entry.id !== undefined) {
    const problem = messageIdProblem(entry.id);
    if (problem !== undefined) {
      throw new StoreError(conversationId, `entries[${i}].id: ${problem}`, { code: 'invalid_argument' });
    }
  }
}

/** Refuses a batch holding one id twice. */
function checkBatchIds(conversationId: string, entries: readonly unknown[]): void {
  const seen = new Map<string, number>();
  (entries as ReadonlyArray<{ id?: unknown }>).forEach((entry, i) => {
    if (typeof entry.id !== 'string') return;
    const first = seen.get(entry.id);
    if (first !== undefined) {
      throw new StoreError(
        conversationId,
        `entries[${i}].id: ${quoteId(entry.id)} is also the id of entries[${first}]; a batch holds each id once`,
        { code: 'invalid_argument' },
      );
    }
    seen.set(entry.id, i);
  });
}

/** The ids a batch carries, with the index of each entry in the batch. */
export function batchIds(entries: readonly NewEntry[]): Array<{ id: string; index: number }> {
  const ids: Array<{ id: string; index: number }> = [];
  entries.forEach((entry, index) => {
    if (entry.id !== undefined) ids.push({ id: entry.id, index });
  });
  return ids;
}

/**
 * Refuses (a `StoreError`, code `invalid_argument`, with the path) a batch holding what JSON
 * would silently change or a walk could not take: the checks `addMessage` makes (`NaN`,
 * `±Infinity`, `-0`, nesting past `MAX_JSON_DEPTH`, values JSON drops), made again here so that
 * every path into a store (sessions, histories, `setMessages`, imports, direct calls) gets them.
 * Drivers check the depth (`depthOnly`) before serializing or copying, which would overflow the
 * stack on a deep value, and the rest once their own serialization succeeded. `offset` is the
 * index of `entries[0]` in the whole batch (a batch checked in parts names its own indices).
 */
export function checkEntryValues(
  conversationId: string,
  entries: ReadonlyArray<{ message: unknown; metadata: unknown }>,
  options: { depthOnly?: boolean } = {},
  offset = 0,
): void {
  entries.forEach((entry, i) => {
    for (const part of ['message', 'metadata'] as const) {
      const [issue] = jsonValueIssues(entry[part], `entries[${offset + i}].${part}`, options);
      if (issue) {
        throw new StoreError(conversationId, `${issue.path}: ${issue.message}`, { code: 'invalid_argument' });
      }
    }
  });
}

/**
 * Checks an optional count-like argument (`expectedSeq`, `expectedVersion`, `fromSeq`,
 * `limit`): absent, or a non-negative safe integer.
 */
export function validateCount(
  conversationId: string | undefined,
  name: string,
  value: unknown,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new StoreError(
      conversationId,
      `${name} must be a non-negative integer, got ${typeof value === 'number' ? value : describe(value)}`,
      { code: 'invalid_argument' },
    );
  }
  return value;
}

/** `read` options with their defaults applied: from the start, no limit. */
export function readRange(
  conversationId: string,
  options: { fromSeq?: number; limit?: number } | undefined,
): { fromSeq: number; limit: number } {
  return {
    fromSeq: validateCount(conversationId, 'fromSeq', options?.fromSeq) ?? 0,
    limit: validateCount(conversationId, 'limit', options?.limit) ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * Checks a metadata value: a plain object (the interface's `Record<string, unknown>`), so
 * every driver can store it as one JSON document.
 */
export function validateMetaValue(
  conversationId: string,
  value: unknown,
): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) {
    throw new StoreError(conversationId, `metadata must be an object, got ${describe(value)}`, {
      code: 'invalid_argument',
    });
  }
}

/** A fresh generation token (see `ConversationStore.epoch`): random, so never reused. */
export function newEpoch(): string {
  return randomUUID();
}

/** Checks an optional generation token: absent, or a non-empty string of at most 200 characters. */
export function validateEpoch(conversationId: string, name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new StoreError(
      conversationId,
      `${name} must be a non-empty string of at most 200 characters, got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : describe(value)}`,
      { code: 'invalid_argument' },
    );
  }
  return value;
}

/**
 * Checks `append` arguments: the batch, then `expectedSeq` and `epoch` (absent, or as
 * {@link validateCount} and {@link validateEpoch} want them), which it returns.
 */
export function checkAppendArguments(
  conversationId: string,
  entries: readonly NewEntry[],
  options: AppendOptions | undefined,
): { expected: number | undefined; epoch: string | undefined } {
  validateNewEntries(conversationId, entries);
  return {
    expected: validateCount(conversationId, 'expectedSeq', options?.expectedSeq),
    epoch: validateEpoch(conversationId, 'epoch', options?.epoch),
  };
}

/**
 * Checks `replace` arguments: the batch, then the generation token given, which it returns, or a
 * fresh one ({@link newEpoch}) when none was given.
 */
export function checkReplaceArguments(
  conversationId: string,
  entries: readonly NewEntry[],
  options: { epoch?: string } | undefined,
): string {
  validateNewEntries(conversationId, entries);
  return validateEpoch(conversationId, 'epoch', options?.epoch) ?? newEpoch();
}

/** `checkReplaceArguments` in slices that yield (a whole history): the same checks, in order. */
export async function checkReplaceArgumentsInSlices(
  conversationId: string,
  entries: readonly NewEntry[],
  options: { epoch?: string } | undefined,
  slices: Slices,
): Promise<string> {
  await validateNewEntriesInSlices(conversationId, entries, slices);
  return validateEpoch(conversationId, 'epoch', options?.epoch) ?? newEpoch();
}

/** Checks `delete` options; resolves with the generation the deleted conversation takes. */
export function checkDeleteArguments(
  conversationId: string,
  options: { epoch?: string } | undefined,
): string {
  return validateEpoch(conversationId, 'epoch', options?.epoch) ?? newEpoch();
}

/** Checks `setMeta` arguments: the value, then `expectedVersion` (absent, or a count), which it returns. */
export function checkSetMetaArguments(
  conversationId: string,
  value: unknown,
  options: { expectedVersion?: number } | undefined,
): number | undefined {
  validateMetaValue(conversationId, value);
  return validateCount(conversationId, 'expectedVersion', options?.expectedVersion);
}

/**
 * A store driver's options: an object whose every key is one the driver reads, else a `StoreError`
 * (code `invalid_argument`) naming the key and the nearest known one (a typo such as `prefix` for
 * `keyPrefix` would otherwise be dropped without a word).
 */
export function checkOptionNames(driver: string, options: unknown, known: readonly string[]): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new StoreError(
      undefined,
      `${driver} store options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`,
      {
        code: 'invalid_argument',
      },
    );
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    throw new StoreError(
      undefined,
      `${driver} store option ${JSON.stringify(key)} is not an option${didYouMean(key, known)}`,
      { code: 'invalid_argument' },
    );
  }
}
