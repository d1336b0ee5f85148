/**
 * What `ContextManager` does with the usage a provider reported: the measurer learns from it
 * (calibration), and for the last request the provider's cache figures are set beside the meter's
 * prediction (`compareCache`) and what it did to the context on its server is reported
 * (`recordProviderContext`). Kept apart so the manager reads as the composition it is.
 */

import type { ContextEmitter } from './events.js';
import { type AppliedEdit, appliedEditsOf } from './guard/applied-edits.js';
import { compareCache, type ManagerParts, recordProviderContext } from './manager-parts.js';
import type { Message } from './messages/types.js';
import {
  type UsageCounts,
  type UsageSample,
  usageFromAnthropic,
  usageFromCounts,
  usageFromOpenAI,
} from './meter/usage.js';

/** The parts of the manager recording usage reads. */
export type UsageParts = Pick<ManagerParts, 'measurer' | 'history' | 'conversation'>;

/** `ContextManager.recordUsage` with contextkit's own counts. */
export async function recordCounts(
  parts: UsageParts,
  emitter: ContextEmitter,
  usage: UsageCounts,
  messages?: readonly Message[],
): Promise<void> {
  await parts.measurer.recordUsage(usage, messages, parts.history.format);
  if (!messages) forLastRequest(parts, emitter, usageFromCounts(usage), []);
}

/** The provider's cache figures and what it did on its server, for the last request. */
function forLastRequest(
  parts: UsageParts,
  emitter: ContextEmitter,
  sample: UsageSample,
  edits: AppliedEdit[],
): void {
  compareCache(parts.conversation, sample, parts.measurer);
  recordProviderContext(parts.conversation, sample, edits, emitter);
}

/** `recordUsage` from an OpenAI Chat Completions or Responses API response. */
export async function recordOpenAI(
  parts: UsageParts,
  response: unknown,
  messages?: readonly Message[],
): Promise<void> {
  await parts.measurer.recordOpenAIUsage(response, messages, parts.history.format);
  if (!messages) compareCache(parts.conversation, usageFromOpenAI(response), parts.measurer);
}

/** `recordUsage` from an Anthropic Messages response. */
export async function recordAnthropic(
  parts: UsageParts,
  emitter: ContextEmitter,
  response: unknown,
  messages?: readonly Message[],
): Promise<void> {
  await parts.measurer.recordAnthropicUsage(response, messages, parts.history.format);
  if (!messages) forLastRequest(parts, emitter, usageFromAnthropic(response), appliedEditsOf(response));
}
