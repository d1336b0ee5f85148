/**
 * How `ContextManager` answers a request: the view fitted (`fitRequest`), the summaries due
 * prepared after it, the Anthropic request body built from it, and the retry after the provider
 * refused a request as too long. Kept apart so the manager reads as the composition it is; the
 * manager lends its parts, its counting and its queue (`RequestHost`).
 */

import type { AnthropicRequestParts } from './formats/anthropic/request.js';
import { wireFormat } from './formats/registry.js';
import { isContextOverflowError, overflowNumbers } from './guard/overflow-errors.js';
import type { AnthropicContextManagement } from './guard/provider-compaction.js';
import type { ManagerCounting } from './manager-counting.js';
import type { ManagerParts } from './manager-parts.js';
import type { ContextMeasurer, ResolvedRequest } from './measure/measurer.js';
import type { Message } from './messages/types.js';
import type { RequestOptions } from './options.js';

/** What the manager lends the answer to a request. */
export interface RequestHost {
  parts: Pick<ManagerParts, 'history' | 'measurer' | 'conversation' | 'guard'>;
  counting: ManagerCounting;
  /** Runs an operation in the manager's queue. */
  enqueue<T>(op: () => Promise<T> | T): Promise<T>;
  /** After a view was fitted from the whole history (the stored view record kept: src/manager-stored-view.ts). */
  afterFit?(r: ResolvedRequest): Promise<void>;
}

/** `getMessagesForRequest`'s body, run in the queue. */
export async function fitRequest(host: RequestHost, request: RequestOptions): Promise<Message[]> {
  const { history, measurer, conversation: c, guard } = host.parts;
  await history.checkGeneration();
  const prepared = measurer.prepare(request, history.format);
  const r = prepared instanceof Promise ? await prepared : prepared;
  // Counted ahead, and the counts taken from the store checked (`ManagerCounting.beforeView`).
  await host.counting.beforeView(r);
  // The atoms and the view built ahead in slices too (a cold start): the guard finds them built.
  const building = c.view.buildAhead(c.entries, c.format ?? r.format, r.counter);
  if (building) await building;
  const decision = await guard.fit(c, r, request);
  if (decision.action !== 'decline') await host.afterFit?.(r);
  host.counting.countBounded(r);
  if (decision.action !== 'decline') compactAfter(host, r);
  prepareAhead(host);
  if (decision.action === 'decline') throw decision.error;
  return decision.messages!;
}

/**
 * `compactAfterRequest`: the compaction the request put off runs after it, in the queue, right
 * behind the request (so it works on the history the request saw, and the next call and `close()`
 * wait for it), as `runDeferredCompaction` makes it.
 */
function compactAfter(host: RequestHost, r: ResolvedRequest): void {
  if (!host.parts.conversation.compactDue) return;
  host
    .enqueue(() => runDeferredCompaction(host.parts, () => host.afterFit?.(r)))
    // The queue's own failures (a store that cannot load) are the next operation's to report.
    .catch(() => undefined);
}

/**
 * The compaction a request put off (`compactAfterRequest`), made on the conversation as it stands
 * (loaded), then `keep` (the view's stored record kept for the new plan) and the summary it makes
 * due prepared, as after a request that compacted. Its failures (the store down) are warnings
 * (`compaction_failed`): the plan stays as it was, and the next request past the trigger tries again.
 */
export async function runDeferredCompaction(
  parts: Pick<ManagerParts, 'measurer' | 'conversation' | 'guard'>,
  keep: () => Promise<void> | undefined,
): Promise<void> {
  const { guard, conversation, measurer } = parts;
  const compact = guard.deferredCompaction(conversation);
  if (!compact) return;
  try {
    await compact();
  } catch (error) {
    measurer.warn(
      'compaction_failed',
      `the compaction put off until after the request failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    return;
  }
  await keep();
  await guard.preparation(conversation)?.();
}

/**
 * Summaries prepared ahead (`summaryAhead`): the preparation the request found due runs after it,
 * in the queue (so it sees a history no operation is changing), never inside the request; the
 * model's answer is a promise the guard keeps, which no request awaits. Queued right behind the
 * request (this runs inside it), so it works on the history the request saw whenever the next
 * call comes, as a worker serving from the stored record prepares (src/manager-stored-view.ts),
 * and `close()` waits for it: a worker that closes after its turn still prepares.
 */
function prepareAhead(host: RequestHost): void {
  const prepare = host.parts.guard.preparation(host.parts.conversation);
  if (!prepare) return;
  // The queue's own failures (a store that cannot load) are the next operation's to report.
  host.enqueue(prepare).catch(() => undefined);
}

/** `getAnthropicRequest`'s body: the view as an Anthropic request, with the edits the server makes. */
export async function anthropicRequest(
  host: RequestHost,
  request: RequestOptions,
): Promise<AnthropicRequestParts & Partial<AnthropicContextManagement>> {
  return anthropicBody(host.parts.conversation, await fitRequest(host, anthropicOptions(request)));
}

/** The request options of `getAnthropicRequest`: Anthropic's format unless another is asked. */
export function anthropicOptions(request: RequestOptions): RequestOptions {
  return { provider: 'anthropic', ...request };
}

/** A view fitted for Anthropic as the body of a Messages request, with the edits the server makes. */
export function anthropicBody(
  conversation: Pick<ManagerParts['conversation'], 'provider'>,
  view: Message[],
): AnthropicRequestParts & Partial<AnthropicContextManagement> {
  const body = wireFormat('anthropic').toRequest(view) as AnthropicRequestParts;
  const managed = conversation.provider?.request;
  return managed ? { ...body, ...structuredClone(managed) } : body;
}

/** `recoverFromOverflow`'s body: `refit` fits the view again within the budget it is given. */
export async function recoverFromOverflow(
  measurer: ContextMeasurer,
  err: unknown,
  refit: (request: RequestOptions) => Promise<Message[]>,
): Promise<Message[]> {
  const last = measurer.last;
  if (!isContextOverflowError(err) || last?.recovered) throw err;
  const budget = await measurer.recoveryBudget(overflowNumbers(err) ?? {}, last);
  measurer.warn(
    'overflow_recovery',
    last
      ? `the provider refused ${last.tokens} tokens; retrying within ${budget}`
      : `the provider refused a request this manager did not make; fitting the stored history within ${budget}`,
  );
  const view = await refit({ ...(last?.request ?? {}), tokenBudget: budget });
  if (measurer.last) measurer.last.recovered = true;
  return view;
}
