/** What tests of workers sharing a store need: the store kept open across managers, a session's turns. */
import { ContextManager, type ContextManagerOptions } from '../../src/manager.js';
import type { Message } from '../../src/messages/types.js';
import type { ConversationStore, ReadOptions } from '../../src/stores/types.js';

/**
 * The store as workers in one process share it: a manager's `close()` closes its store, so each
 * manager gets this view of the one connected store, whose `close` does nothing.
 */
export function keepOpen<S extends ConversationStore>(store: S): S {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'close') return async () => {};
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * `keepOpen(store)` that also counts the loads: reads of the whole log (a `read` with no options,
 * what loading a conversation does; a served view's reads always name a range).
 */
export function countingLoads<S extends ConversationStore>(store: S): S & { readonly wholeReads: number } {
  let wholeReads = 0;
  return new Proxy(store, {
    get(target, key) {
      if (key === 'wholeReads') return wholeReads;
      if (key === 'close') return async () => {};
      if (key === 'read')
        return (id: string, options?: ReadOptions) => {
          if (options === undefined) wholeReads++;
          return target.read(id, options);
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as S & { readonly wholeReads: number };
}

/** A session cut into turns: each starts at a user message (the system prompt goes with the first). */
export function turnsOf(messages: readonly Message[]): Message[][] {
  const turns: Message[][] = [];
  for (const m of messages) {
    if (m.role === 'user' && typeof m.content === 'string' && turns.length > 0) turns.push([m]);
    else if (turns.length === 0) turns.push([m]);
    else turns.at(-1)!.push(m);
  }
  return turns;
}

/** What a worker's step ended with: its view as JSON, or the error it refused the request with. */
export type WorkerOutcome = { view: string } | { error: string };

/**
 * One step of a worker that keeps no conversation: a new manager made with `options` runs `add`
 * (its messages for this step), serves a view within `budget`, and closes.
 */
export async function workerStep(
  options: ContextManagerOptions,
  add: (ctx: ContextManager) => Promise<unknown>,
  budget: number,
): Promise<WorkerOutcome> {
  const ctx = new ContextManager(options);
  try {
    await add(ctx);
    return { view: JSON.stringify(await ctx.getMessagesForRequest({ tokenBudget: budget })) };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  } finally {
    await ctx.close();
  }
}
