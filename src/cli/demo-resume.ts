/**
 * Where `contextkit demo` carries on from. The stored conversation is the demo session's first N
 * messages; the next run must continue the same session at message N. A record beside the
 * conversation (in the store's metadata) holds the session's state and the token count, so a
 * resume costs the same however long the stored session has grown; without a usable record the
 * session is generated again from the start and checked against what is stored.
 */

import { ConflictError } from '../errors.js';
import type { Message, MessageFormat } from '../messages/types.js';
import type { ConversationStore } from '../stores/types.js';
import { CliError } from './cli-error.js';
import { type DemoCheckpoint, DemoSession } from './demo-session.js';

/** The conversation id the demo keeps its session under. */
export const DEMO_CONVERSATION = 'demo';

/** Metadata key of the demo's record; the manager keeps its own keys beside it. */
const RECORD_KEY = 'contextkitDemo';

/** What the demo remembers about the stored session after a run. */
export interface DemoRecord {
  messages: number;
  /** Tokens of the stored messages, by the counter named in `counter`. */
  tokens: number;
  counter: string;
  /** Fingerprint of the last stored message: the record is only trusted for the log it describes. */
  last: string;
  session: DemoCheckpoint;
}

/** The turns to replay now, the session to snapshot afterwards, and the stored tokens if known. */
export interface DemoResume {
  turns: Message[][];
  session: DemoSession;
  storedTokens: number | undefined;
}

/** A short fingerprint of a message (FNV-1a over its JSON, with its length). */
export function messageFingerprint(message: Message | undefined): string {
  const json = JSON.stringify(message) ?? '';
  let h = 2166136261;
  for (let i = 0; i < json.length; i++) h = Math.imul(h ^ json.charCodeAt(i), 16777619);
  return `${json.length}:${(h >>> 0).toString(16)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whole turns from `session` until at least `count` messages. */
function take(session: DemoSession, count: number): Message[][] {
  const turns: Message[][] = [];
  for (let given = 0; given < count; ) {
    const turn = session.nextTurn();
    turns.push(turn);
    given += turn.length;
  }
  return turns;
}

/**
 * Generates the session from its start, checking it against what is stored, and returns what
 * follows: the rest of a turn a run left unfinished, then whole turns until at least `count`.
 */
function regenerate(
  format: MessageFormat,
  stored: readonly Message[],
  count: number,
  dir: string,
): DemoResume {
  const session = new DemoSession(format);
  const turns: Message[][] = [];
  let index = 0;
  let given = 0;
  while (given < count) {
    const turn = session.nextTurn();
    const start = index;
    index += turn.length;
    if (start < stored.length) {
      const last = Math.min(index, stored.length) - 1;
      if (JSON.stringify(stored[last]) !== JSON.stringify(turn[last - start])) {
        throw new CliError(
          `${dir}: conversation "${DEMO_CONVERSATION}" holds messages this demo did not write (message #${last} differs); run contextkit demo --reset to start over`,
          1,
        );
      }
    }
    if (index <= stored.length) continue;
    const part = start < stored.length ? turn.slice(stored.length - start) : turn;
    turns.push(part);
    given += part.length;
  }
  return { turns, session, storedTokens: undefined };
}

/**
 * What to replay in this run, given the stored messages: from the demo's record when it matches
 * the log (fast), otherwise by generating the session again from the start.
 */
export async function resumeDemo(
  store: ConversationStore,
  stored: readonly Message[],
  format: MessageFormat,
  count: number,
  counter: string,
  dir: string,
): Promise<DemoResume> {
  if (stored.length === 0) {
    const session = new DemoSession(format);
    return { turns: take(session, count), session, storedTokens: 0 };
  }
  const meta = await store.getMeta(DEMO_CONVERSATION);
  const record = meta.value?.[RECORD_KEY];
  if (
    isRecord(record) &&
    record.messages === stored.length &&
    record.last === messageFingerprint(stored.at(-1))
  ) {
    const session = DemoSession.restore(record.session);
    if (session && session.format === format) {
      const tokens =
        record.counter === counter && typeof record.tokens === 'number' ? record.tokens : undefined;
      return { turns: take(session, count), session, storedTokens: tokens };
    }
  }
  return regenerate(format, stored, count, dir);
}

/**
 * Saves the demo's record after a run. Losing a race with another writer only costs the next run
 * a regeneration, so a conflict is ignored.
 */
export async function saveDemoRecord(store: ConversationStore, record: DemoRecord): Promise<void> {
  try {
    const meta = await store.getMeta(DEMO_CONVERSATION);
    await store.setMeta(
      DEMO_CONVERSATION,
      { ...(meta.value ?? {}), [RECORD_KEY]: record },
      { expectedVersion: meta.version },
    );
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
}
