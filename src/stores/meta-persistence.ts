import { ConflictError } from '../errors.js';
import type { Persistence } from './persistence.js';
import type { ConversationStore, MetaRecord } from './types.js';

/**
 * Metadata its owner has just read (`record`), lent to the next `get` of a `metaPersistence` over
 * the same conversation instead of reading it again; that `get` takes it (once), and the owner
 * takes it back when it is done (so only a read made meanwhile can use it).
 */
export interface HeldMeta {
  record: MetaRecord | undefined;
}

/**
 * A key-value `Persistence` kept inside one conversation's metadata (under one field), so state
 * that belongs beside a conversation (the usage calibration, guard state) travels with it through
 * any store driver. Writes go through the store's compare-and-set and retry on a lost race (they
 * always read the metadata afresh). `held`: see `HeldMeta`.
 */
export function metaPersistence(
  store: ConversationStore,
  conversationId: string,
  field: string,
  held?: HeldMeta,
): Persistence {
  const read = async () => {
    const meta = await store.getMeta(conversationId);
    const bag = (meta.value?.[field] ?? {}) as Record<string, unknown>;
    return { meta, bag };
  };
  const readForGet = async () => {
    const meta = held?.record;
    if (meta === undefined) return (await read()).bag;
    held!.record = undefined;
    return (meta.value?.[field] ?? {}) as Record<string, unknown>;
  };
  // Writes from this process queue up; only another process's write can make one retry.
  let queue: Promise<unknown> = Promise.resolve();
  const write = (change: (bag: Record<string, unknown>) => void): Promise<void> => {
    const run = queue.then(() => writeNow(change));
    queue = run.catch(() => undefined);
    return run;
  };
  const writeNow = async (change: (bag: Record<string, unknown>) => void) => {
    for (let attempt = 0; ; attempt++) {
      const { meta, bag } = await read();
      const next = structuredClone(bag);
      change(next);
      try {
        await store.setMeta(
          conversationId,
          { ...(meta.value ?? {}), [field]: next },
          { expectedVersion: meta.version },
        );
        return;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= 20) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
      }
    }
  };
  return {
    async get<T>(key: string): Promise<T | null> {
      const bag = await readForGet();
      return key in bag ? (structuredClone(bag[key]) as T) : null;
    },
    async set<T>(key: string, value: T): Promise<void> {
      await write((bag) => {
        bag[key] = structuredClone(value);
      });
    },
    async delete(key: string): Promise<void> {
      await write((bag) => {
        delete bag[key];
      });
    },
    async list(prefix = ''): Promise<string[]> {
      const { bag } = await read();
      return Object.keys(bag)
        .filter((k) => k.startsWith(prefix))
        .sort();
    },
    async has(key: string): Promise<boolean> {
      return key in (await read()).bag;
    },
  };
}
