/**
 * contextkit itself, as a user sets it up: a `ContextManager` for an o200k model (so its budget is
 * in the same tokens the benchmark measures fit in), asked for each view with the budget and the
 * workload's provider. A `ContextOverflowError` is recorded as a declined view, not a view.
 */
import { ContextManager } from '../../src/manager.js';
import type { MessageFormat } from '../../src/messages/types.js';
import type { Peer, View } from './peer.js';

function contextkitPeer(name: string, strategy: 'summarize' | 'truncate', protectTask = true): Peer {
  return {
    name,
    start(format: MessageFormat, budget: number) {
      const manager = new ContextManager({ model: 'gpt-4o', strategy, protectTask });
      return {
        async add(message) {
          await manager.addMessage(message);
        },
        async view(): Promise<View> {
          try {
            const view = await manager.getMessagesForRequest({ tokenBudget: budget, provider: format });
            return { ok: true, messages: () => view };
          } catch (err) {
            return { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
          }
        },
      };
    },
  };
}

/** The default offline strategy (`summarize`: offline summary and facts block). */
export const contextkitDefault: Peer = contextkitPeer('contextkit', 'summarize');

/** Truncation only. */
export const contextkitTruncate: Peer = contextkitPeer('contextkit truncate', 'truncate');

/** The default strategy without the task kept (`protectTask: false`), to show what keeping it costs. */
export const contextkitTaskNotKept: Peer = contextkitPeer('contextkit, task not kept', 'summarize', false);
