/**
 * The seeds' own reference behaviours, written here as baselines, working on the stored messages
 * as they are (the seeds handle plain dicts of either format) and estimating with the seeds'
 * `len(str(content)) // 4`:
 *
 * - context-simple, as the seed guide describes it: under 92% of the budget everything is sent;
 *   over it, system messages plus the last 10 conversation messages, with a tool result's call
 *   pulled in so pairs stay whole, and identical non-tool messages (role + content prefix) deduped.
 * - the seed example's truncation: over 90% of the budget, drop the oldest non-system messages
 *   until the rest is under 70%, with nothing kept in pairs.
 */
import type { Message, MessageFormat } from '../../src/messages/types.js';
import type { Peer, View } from './peer.js';

function charsOver4(messages: readonly Message[]): number {
  let chars = 0;
  for (const m of messages)
    chars += (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')).length;
  return Math.floor(chars / 4);
}

function isToolResult(m: Message): boolean {
  return m.role === 'tool' || (Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result'));
}

function hasToolCalls(m: Message): boolean {
  if (m.role !== 'assistant') return false;
  if ('tool_calls' in m && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) return true;
  return Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use');
}

/** context-simple's compaction of a history, as the guide lists its four steps. */
export function contextSimpleView(history: readonly Message[], budget: number, keep = 10): Message[] {
  if (charsOver4(history) <= budget * 0.92) return history.slice();
  const system = history.filter((m) => m.role === 'system' || m.role === 'developer');
  const rest = history.filter((m) => m.role !== 'system' && m.role !== 'developer');
  let start = Math.max(0, rest.length - keep);
  while (start > 0 && isToolResult(rest[start]!)) start--;
  const seen = new Set<string>();
  const kept: Message[] = [];
  for (const m of rest.slice(start)) {
    if (!isToolResult(m) && !hasToolCalls(m)) {
      const key = `${m.role}:${(typeof m.content === 'string' ? m.content : JSON.stringify(m.content)).slice(0, 100)}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    kept.push(m);
  }
  return [...system, ...kept];
}

/** The seed example's `_compact_messages`, behind its 90% trigger. */
export function charsTruncationView(history: readonly Message[], budget: number): Message[] {
  if (charsOver4(history) <= budget * 0.9) return history.slice();
  const system = history.filter((m) => m.role === 'system');
  const rest = history.filter((m) => m.role !== 'system');
  let start = 0;
  // The seed recounts the whole list on each pop; a running total gives the same answer.
  let total = charsOver4(system) * 4;
  const lengths = rest.map(
    (m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')).length,
  );
  for (const n of lengths) total += n;
  while (start < rest.length && Math.floor(total / 4) > budget * 0.7) total -= lengths[start++]!;
  return [...system, ...rest.slice(start)];
}

function seedPeer(name: string, compact: (history: readonly Message[], budget: number) => Message[]): Peer {
  return {
    name,
    start(_format: MessageFormat, budget: number) {
      const history: Message[] = [];
      return {
        async add(message) {
          history.push(message);
        },
        async view(): Promise<View> {
          const view = compact(history, budget);
          return { ok: true, messages: () => view };
        },
      };
    },
  };
}

/** context-simple (system + last 10, pairs kept). */
export const contextSimple: Peer = seedPeer('seed context-simple', (h, b) => contextSimpleView(h, b));

/** The seed example's chars/4 truncation. */
export const seedCharsTruncation: Peer = seedPeer('seed chars/4', charsTruncationView);
