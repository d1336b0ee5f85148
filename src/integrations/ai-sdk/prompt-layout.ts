/**
 * Where each of a prompt's OpenAI messages (its proxies, `fromModelMessages`) comes from, without
 * converting the prompt: the proxies of a stored conversation are its seqs, so a view's message
 * that is a stored one unchanged (`ContextManager.storedSeqOf`) names the SDK message to give back. The side map
 * `restoreModelMessages` needs is then made for the view's messages only (`sideMapFor`), not for
 * the whole prompt, so a call that serves a long conversation from its store converts no more
 * than the view asks for.
 */

import type { OpenAIMessage } from '../../messages/types.js';
import {
  type AnyModelMessage,
  isRider,
  layoutOf,
  type ModelMessageSideMap,
  type Origin,
  type PartAt,
  type ProxyEntry,
  proxiesOf,
  proxyCountOf,
  toolPartsOf,
} from './model-messages.js';

type Part = { type: string; toolCallId?: unknown; providerExecuted?: unknown };

/** The prompt's messages with, for each, where its proxies start (one cheap pass, no conversion). */
export class PromptLayout {
  /** `firstProxy[i]`: the number of proxies the messages before `i` make; `firstProxy[length]`: all. */
  private readonly firstProxy: Float64Array;

  constructor(readonly source: readonly AnyModelMessage[]) {
    this.firstProxy = new Float64Array(source.length + 1);
    for (let i = 0; i < source.length; i++)
      this.firstProxy[i + 1] = this.firstProxy[i]! + proxyCountOf(source[i]!);
  }

  /** How many proxies the first `messages` messages make. */
  proxiesBefore(messages: number): number {
    return this.firstProxy[messages]!;
  }

  /** The index of the SDK message that makes proxy `proxy` (which must be below the total). */
  ownerOf(proxy: number): number {
    // The last message whose proxies start at or before `proxy`: one that makes some (a message
    // making none starts where the next one does, so the next one is found instead).
    let lo = 0;
    let hi = this.source.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.firstProxy[mid]! <= proxy) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * The side map `restoreModelMessages` needs to give `entries` back as the SDK's messages: the
   * layout, tool parts and riders of the SDK messages the entries come from (by proxy for those
   * unchanged; by tool call id for a result or call the plan rewrote), and the proxy of such an
   * assistant message (whose text a cut is told by). Nothing else of the prompt is converted.
   */
  sideMapFor(entries: readonly ProxyEntry[]): ModelMessageSideMap {
    const needed = new Set<number>();
    const ids = new Set<string>();
    for (const { message, proxy } of entries) {
      if (proxy !== undefined) needed.add(this.ownerOf(proxy));
      else if (message.role === 'tool') ids.add(message.tool_call_id);
      else if (message.role === 'assistant') for (const call of message.tool_calls ?? []) ids.add(call.id);
    }
    if (ids.size > 0) for (const index of this.holdingIds(ids)) needed.add(index);

    const origins: Origin[] = [];
    const proxies: OpenAIMessage[] = [];
    const calls = new Map<string, PartAt>();
    const results = new Map<string, PartAt>();
    const riders = new Map<number, number[]>();
    // In prompt order, as `fromModelMessages` fills its maps: of two calls with one id, the later wins.
    for (const index of [...needed].sort((a, b) => a - b)) {
      const message = this.source[index]!;
      const layout = layoutOf(message);
      if (typeof layout === 'string') continue;
      const first = this.firstProxy[index]!;
      layout.forEach((parts, g) => {
        origins[first + g] = { message: index, parts };
      });
      toolPartsOf(message, index, layout, first, calls, results);
      if (message.role === 'assistant') proxies[first] = proxiesOf(message, layout)[0]!;
      const following = this.ridersAfter(index + 1);
      if (following.length > 0) riders.set(first + layout.length - 1, following);
    }
    return {
      source: this.source,
      proxies,
      origins,
      riders,
      leading: this.ridersAfter(0),
      calls,
      results,
      byKey: new Map(),
    };
  }

  /** The riders from `from` up to the next message that makes proxies. */
  private ridersAfter(from: number): number[] {
    const out: number[] = [];
    for (let j = from; j < this.source.length && proxyCountOf(this.source[j]!) === 0; j++) {
      if (isRider(this.source[j]!)) out.push(j);
    }
    return out;
  }

  /** The SDK messages holding a client-side tool call or a tool result with one of `ids`. */
  private holdingIds(ids: ReadonlySet<string>): number[] {
    const out: number[] = [];
    this.source.forEach((message, index) => {
      if (message.role !== 'assistant' && message.role !== 'tool') return;
      const content: unknown = message.content;
      if (!Array.isArray(content)) return;
      for (const part of content as Part[]) {
        const holds =
          (part.type === 'tool-result' || (part.type === 'tool-call' && part.providerExecuted !== true)) &&
          ids.has(String(part.toolCallId));
        if (holds) {
          out.push(index);
          return;
        }
      }
    });
    return out;
  }
}
