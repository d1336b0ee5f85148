/**
 * Reading back the JSON text the database drivers (SQLite, Redis, Postgres) store, so that a
 * damaged row or list element surfaces as a `StoreError` that names the conversation, the
 * place and what was found there, instead of a bare `SyntaxError`.
 */

import { StoreError } from '../errors.js';
import type { Message, MessageMetadata } from '../messages/types.js';
import type { StoredEntry } from './types.js';
import { checkEntryValues } from './validate.js';

const PREVIEW_CHARS = 60;

/** A short, printable excerpt of damaged text for an error message. */
export function describeFound(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (typeof value !== 'string') return `a ${typeof value}`;
  if (value.length === 0) return 'an empty string';
  const head = JSON.stringify(value.slice(0, PREVIEW_CHARS));
  return value.length > PREVIEW_CHARS ? `${head}… (${value.length} characters)` : head;
}

/** The object stored JSON text holds, or undefined when it holds none (or is not JSON text). */
function storedObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Parses stored JSON text that must hold an object. `where` says which part of the
 * conversation it is (`entry 12 message`, `metadata`).
 */
export function parseStoredObject(
  conversationId: string,
  where: string,
  text: unknown,
): Record<string, unknown> {
  return storedObject(text) ?? refuseStored(conversationId, where, text);
}

/** The `StoreError` saying what is wrong with stored text `storedObject` found no object in. */
function refuseStored(conversationId: string, where: string, text: unknown): never {
  if (typeof text !== 'string') {
    throw new StoreError(
      conversationId,
      `${where} is damaged: expected JSON text, found ${describeFound(text)}`,
      {
        code: 'corrupt',
      },
    );
  }
  try {
    JSON.parse(text);
  } catch (cause) {
    throw new StoreError(
      conversationId,
      `${where} is damaged: it is not JSON, found ${describeFound(text)}`,
      {
        cause,
        code: 'corrupt',
      },
    );
  }
  throw new StoreError(
    conversationId,
    `${where} is damaged: expected a JSON object, found ${describeFound(text)}`,
    { code: 'corrupt' },
  );
}

/**
 * Rebuilds an entry from its stored columns; the message and metadata stay as written. What a
 * damaged column's error names is made only for a damaged one (a read parses many rows).
 */
export function parseStoredEntry(
  conversationId: string,
  seq: number,
  metadataText: unknown,
  messageText: unknown,
): StoredEntry {
  const metadata =
    storedObject(metadataText) ?? refuseStored(conversationId, `entry ${seq} metadata`, metadataText);
  const message =
    storedObject(messageText) ?? refuseStored(conversationId, `entry ${seq} message`, messageText);
  return { seq, message: message as unknown as Message, metadata: metadata as MessageMetadata };
}

/**
 * Serializes a value for storage, turning what JSON cannot hold (a cycle, a BigInt) into a
 * `StoreError` before anything is written.
 */
export function stringifyForStore(conversationId: string, where: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new StoreError(conversationId, `${where} cannot be stored as JSON: ${String(cause)}`, {
      cause,
      code: 'invalid_argument',
    });
  }
  if (text === undefined) {
    throw new StoreError(conversationId, `${where} cannot be stored as JSON`, { code: 'invalid_argument' });
  }
  return text;
}

/**
 * Each entry's metadata and message as JSON text, for the drivers that store them as text;
 * refuses what JSON would change (see `checkEntryValues`).
 */
export function serializeEntries(
  conversationId: string,
  entries: ReadonlyArray<{ metadata: unknown; message: unknown }>,
): Array<[string, string]> {
  checkEntryValues(conversationId, entries, { depthOnly: true });
  const rows = entries.map((entry, i): [string, string] => [
    stringifyForStore(conversationId, `entries[${i}].metadata`, entry.metadata),
    stringifyForStore(conversationId, `entries[${i}].message`, entry.message),
  ]);
  checkEntryValues(conversationId, entries);
  return rows;
}
