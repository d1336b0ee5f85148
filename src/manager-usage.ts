/**
 * What `ContextManager.recordUsage` does with the usage a provider reported (contextkit's own
 * counts or any provider's response, see src/meter/usage-reader.ts): the measurer learns from it
 * (calibration), and for the last request the provider's cache figures are set beside the meter's
 * prediction (`compareCache`) and what it did to the context on its server (Anthropic's compaction
 * steps and applied context edits) is reported (`recordProviderContext`). Kept apart so the manager
 * reads as the composition it is.
 */

import type { ContextEmitter } from './events.js';
import { appliedEditsOf } from './guard/applied-edits.js';
import { compareCache, type ManagerParts, recordProviderContext } from './manager-parts.js';
import type { Message, MessageFormat } from './messages/types.js';
import { readUsage, type UsageInput, usageSource } from './meter/usage-reader.js';

/** The parts of the manager recording usage reads. */
export type UsageParts = Pick<ManagerParts, 'measurer' | 'conversation'>;

/** `ContextManager.recordUsage`'s body, run in the queue. */
export async function recordUsage(
  parts: UsageParts,
  /** The conversation's format (the history's, or the stored view record's before a load). */
  format: MessageFormat | undefined,
  emitter: ContextEmitter,
  usageOrResponse: UsageInput,
  messages?: readonly Message[],
): Promise<void> {
  await parts.measurer.recordUsage(usageOrResponse, messages, format);
  if (messages) return;
  const source = usageSource(usageOrResponse);
  const sample = readUsage(usageOrResponse, source);
  compareCache(parts.conversation, sample, parts.measurer);
  // Applied context edits are Anthropic's (`context_management.applied_edits`).
  const edits = source === 'anthropic' ? appliedEditsOf(usageOrResponse) : [];
  recordProviderContext(parts.conversation, sample, edits, emitter);
}
