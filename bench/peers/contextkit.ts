/**
 * contextkit itself, as a user sets it up: a `ContextManager` for an o200k model (so its budget is
 * in the same tokens the benchmark measures fit in), asked for each view with the budget and the
 * workload's provider. A `ContextOverflowError` is recorded as a declined view, not a view. Its
 * `economy` presets are columns of their own: the points it can take between billed input and
 * what is kept.
 */
import { ContextManager } from '../../src/manager.js';
import type { MessageFormat } from '../../src/messages/types.js';
import type { ContextManagerOptions } from '../../src/options.js';
import type { Peer, View } from './peer.js';

/** What `recall` is asked with on the chats: the top 5 hits within 1,000 tokens (as `contextkit eval`). */
const RECALL = { limit: 5, maxTokens: 1000 } as const;

function contextkitPeer(name: string, options: ContextManagerOptions): Peer {
  return {
    name,
    start(format: MessageFormat, budget: number) {
      const manager = new ContextManager({ model: 'gpt-4o', ...options });
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
        async recall(query) {
          return (await manager.recall(query, RECALL)).map((hit) => hit.text).join('\n');
        },
      };
    },
  };
}

/** The default offline strategy (`summarize`: offline summary and facts block). */
export const contextkitDefault: Peer = contextkitPeer('contextkit', { strategy: 'summarize' });

/** Truncation only. */
export const contextkitTruncate: Peer = contextkitPeer('contextkit truncate', { strategy: 'truncate' });

/**
 * The default strategy with the task kept (`protectTask: true`: the first user message verbatim in
 * every view), to show what keeping it costs beside the default, which does not keep it.
 */
export const contextkitTaskKept: Peer = contextkitPeer('contextkit, task kept', {
  strategy: 'summarize',
  protectTask: true,
});

/**
 * The `economy` settings other than the default `balanced`, from the most kept to the least
 * billed: the presets, then a number below the leanest (views aimed at 5% of the budget).
 */
export const contextkitEconomies: readonly Peer[] = (['rich', 'lean', 'minimal', 0.05] as const).map(
  (economy) =>
    contextkitPeer(`contextkit ${typeof economy === 'number' ? `economy ${economy}` : economy}`, { economy }),
);
