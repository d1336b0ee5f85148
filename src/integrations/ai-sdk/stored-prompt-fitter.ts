/**
 * Issue 32 item 4: the AI SDK middleware on a store, so a call costs its new messages and its
 * view, not the prompt, in whichever process serves it. The SDK sends the whole conversation on
 * every call; the store holds it as contextkit's messages (one per SDK message, one per tool
 * result), with, in the conversation's metadata, a record of how many of the prompt's messages
 * that is and a digest of them (`PromptRecord`). A call hashes the prompt (the one pass over all
 * of it, cheap), adds only the messages past the stored prefix, and asks the conversation's
 * manager for the view: served from the stored plan and view record by a manager that never
 * loaded the conversation (src/manager-stored-view.ts). The view's messages that are stored ones
 * unchanged name their seq (`ContextManager.storedSeqOf`), which names the prompt's SDK message
 * (`PromptLayout`), so the SDK's own objects are given back without a map of the whole prompt.
 */

import type { ModelMessage } from 'ai';
import { ConfigurationError, ConflictError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import type { OpenAIMessage } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import { resolveStore } from '../../stores/resolve.js';
import type { ConversationStore } from '../../stores/types.js';
import { createModelCatalog } from '../../tokens/catalog.js';
import { type AnyModelMessage, fromModelMessages, type ProxyEntry } from './model-messages.js';
import { promptDigests } from './prompt-digest.js';
import {
  FIT_OPTION_NAMES,
  type FitOptions,
  type FitRequest,
  holdsCompactionPart,
  requestOptionsFor,
  sdkPrompt,
} from './prompt-fitter.js';
import { PromptLayout } from './prompt-layout.js';

/** The key of the middleware's record in its conversation's metadata. */
export const PROMPT_RECORD_KEY = 'aiSdkPrompt';

/** The record's version: a record of another is not trusted (the conversation is replaced). */
const PROMPT_RECORD_VERSION = 1;

/** What the conversation's metadata says of the prompt the store holds. */
export interface PromptRecord {
  v: typeof PROMPT_RECORD_VERSION;
  /** The store generation it was written in: a conversation replaced since is not the one recorded. */
  epoch: string | null;
  /** How many of the prompt's messages (SDK messages) are stored. */
  messages: number;
  /** How many entries they are stored as (the conversation's head when it was written). */
  entries: number;
  /** `promptDigests` of those messages. */
  digest: string;
}

/** The record in `meta`, or null when there is none or it is not one this version wrote. */
export function promptRecordOf(meta: Record<string, unknown> | null): PromptRecord | null {
  const r = meta?.[PROMPT_RECORD_KEY] as Partial<PromptRecord> | undefined;
  if (typeof r !== 'object' || r === null || r.v !== PROMPT_RECORD_VERSION) return null;
  const count = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  if (!count(r.messages) || !count(r.entries) || typeof r.digest !== 'string') return null;
  if (r.epoch !== null && typeof r.epoch !== 'string') return null;
  return r as PromptRecord;
}

/** Options the stored fitter refuses, with why. */
const NOT_WITH_STORE: ReadonlyArray<[keyof FitOptions, string]> = [
  [
    'manager',
    'not with store: the middleware makes the stored conversation’s manager (give one or the other)',
  ],
  [
    'conversations',
    'not with store: a middleware with a store serves the one conversation conversationId names',
  ],
];

/**
 * Fits each call's prompt through the manager of one stored conversation (see the module note).
 * Calls on one instance run one at a time; instances in other processes may serve the same
 * conversation in turn (not at once: two calls adding the same messages together store them
 * twice, and the next call, finding the store is not what the record says, replaces it).
 */
export class StoredPromptFitter {
  readonly conversationId: string;
  private readonly store: ConversationStore;
  private readonly manager: ContextManager;
  private readonly catalog = createModelCatalog();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly settings: FitOptions) {
    checkOptionNamesOf('contextMiddleware', settings, FIT_OPTION_NAMES);
    for (const [name, why] of NOT_WITH_STORE) {
      if (settings[name] !== undefined) throw new ConfigurationError(name, why);
    }
    const { store, conversationId, options } = settings;
    if (store === undefined) throw new ConfigurationError('store', 'is required with conversationId');
    if (typeof conversationId !== 'string' || conversationId === '') {
      throw new ConfigurationError('conversationId', 'must be a non-empty string, the conversation in store');
    }
    for (const name of ['store', 'conversationId'] as const) {
      if (options !== undefined && Object.hasOwn(options, name)) {
        throw new ConfigurationError(
          `options.${name}`,
          `give ${name} to the middleware itself, not in options`,
        );
      }
    }
    this.conversationId = conversationId;
    this.store = resolveStore(store);
    this.manager = new ContextManager({ ...options, store: this.store, conversationId });
    if (settings.onWarning) this.manager.on('context:warn', settings.onWarning);
  }

  /** Fits the prompt of one call (see the module note); calls run one at a time. */
  fit(all: readonly AnyModelMessage[], request: FitRequest = {}): Promise<ModelMessage[]> {
    const run = this.queue.then(() => this.fitNow(all, request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async fitNow(all: readonly AnyModelMessage[], request: FitRequest): Promise<ModelMessage[]> {
    const id = this.conversationId;
    const [meta, epoch, head] = await Promise.all([
      this.store.getMeta(id),
      this.store.epoch(id),
      this.store.head(id),
    ]);
    const record = promptRecordOf(meta.value);
    const known =
      record !== null && record.epoch === epoch && record.entries === head && record.messages <= all.length
        ? record
        : null;
    const digests = promptDigests(all, known?.messages ?? 0);
    const extends_ = known !== null && (known.messages === 0 || digests.prefix === known.digest);
    const layout = new PromptLayout(all);
    let from = known?.messages ?? 0;
    if (!extends_) {
      from = 0;
      if (head > 0) {
        this.manager.measurer.warn(
          'prompt_replaced_conversation',
          `the prompt does not extend conversation ${JSON.stringify(id)} as stored (${head} stored messages): the stored conversation is replaced by the prompt's ${all.length} messages`,
        );
      }
      // Whatever was kept beside what is stored (a plan, a view record) goes with it.
      if (head > 0 || meta.value !== null) await this.manager.clear();
    }
    if (!extends_ || from < all.length) {
      await this.addFrom(all, from);
      const written: PromptRecord = {
        v: PROMPT_RECORD_VERSION,
        epoch: await this.store.epoch(id),
        messages: all.length,
        entries: layout.proxiesBefore(all.length),
        digest: digests.whole,
      };
      await this.writeRecord(written);
    }
    const view = await this.manager.getMessagesForRequest({
      ...requestOptionsFor(this.settings, this.catalog, request),
      provider: 'openai',
    });
    const total = layout.proxiesBefore(all.length);
    const entries: ProxyEntry[] = view.map((message) => {
      const seq = this.manager.storedSeqOf(message);
      return { message: message as OpenAIMessage, proxy: seq !== undefined && seq < total ? seq : undefined };
    });
    return sdkPrompt(entries, layout.sideMapFor(entries), request.provider);
  }

  /**
   * Adds the prompt's messages from `from` on: converted (those only), in one batch, or one per
   * run of messages alike in being pinned (a server compaction's reply is: its summary stands for
   * all before it, so contextkit's compaction keeps it verbatim).
   */
  private async addFrom(all: readonly AnyModelMessage[], from: number): Promise<void> {
    const added = all.slice(from);
    const { messages: proxies, sideMap } = fromModelMessages(added);
    let run: OpenAIMessage[] = [];
    let pinned = false;
    const flush = async () => {
      if (run.length > 0) await this.manager.addMessages(run, pinned ? { pinned: true } : {});
      run = [];
    };
    for (const [i, proxy] of proxies.entries()) {
      const isPinned = holdsCompactionPart(added[sideMap.origins[i]!.message]!);
      if (isPinned !== pinned) {
        await flush();
        pinned = isPinned;
      }
      run.push(proxy);
    }
    await flush();
  }

  /** Writes the record beside what other writers keep in the metadata (compare-and-set, retried). */
  private async writeRecord(record: PromptRecord): Promise<void> {
    for (;;) {
      const meta = await this.store.getMeta(this.conversationId);
      try {
        await this.store.setMeta(
          this.conversationId,
          { ...(meta.value ?? {}), [PROMPT_RECORD_KEY]: record },
          { expectedVersion: meta.version },
        );
        return;
      } catch (error) {
        // Another writer changed the metadata in between (the manager's plan): read it again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }
}
