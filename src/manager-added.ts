/**
 * What follows a store of new messages in `ContextManager`: one warning per block type no format
 * knows, a server compaction's reset of the plan, and the `context:message_added` events. Kept
 * apart so the manager reads as the composition it is.
 */

import type { ContextEmitter } from './events.js';
import { WIRE_FORMATS, wireFormat } from './formats/registry.js';
import type { WireFormat } from './formats/wire-format.js';
import type { ManagerParts } from './manager-parts.js';
import type { HistoryEntry, Message, MessageFormat } from './messages/types.js';
import type { AddMessageOptions } from './options.js';
import { roleOf } from './wire/content.js';

let futureBlocks: WireFormat<Message>['futureBlockTypes'] | null = null;

/** The block types in a message no format documents, as the format that claims them reads them. */
function unknownBlockReader(): WireFormat<Message>['futureBlockTypes'] {
  if (futureBlocks === null) futureBlocks = WIRE_FORMATS.find((f) => f.claimsUnknownBlocks)?.futureBlockTypes;
  return futureBlocks;
}

/** The parts of the manager what follows an add reads. */
export type AddedParts = Pick<ManagerParts, 'measurer' | 'history' | 'conversation'>;

export class AfterAdded {
  /** Block types no format knows that were already warned about (one warning per type). */
  private readonly warnedBlocks = new Set<string>();

  constructor(
    private readonly parts: AddedParts,
    private readonly emitter: ContextEmitter,
  ) {}

  /** One `context:warn` (`unknown_block`) per block type no format knows, the first time it is stored. */
  warnFutureBlocks(messages: readonly Message[]): void {
    const futureBlockTypes = unknownBlockReader();
    if (futureBlockTypes === undefined) return;
    for (const message of messages) {
      for (const type of futureBlockTypes(message)) {
        if (this.warnedBlocks.has(type)) continue;
        this.warnedBlocks.add(type);
        this.parts.measurer.warn(
          'unknown_block',
          `content block type "${type}" is not one contextkit knows: stored and sent as it came, counted by an estimate`,
        );
      }
    }
  }

  /** What follows a store of new entries: warnings, a server compaction's reset, the events. */
  async added(
    entries: readonly HistoryEntry[],
    options: AddMessageOptions,
    /** The conversation's format where the history is not loaded (appended unread). */
    unloadedFormat?: MessageFormat,
  ): Promise<void> {
    const { history, conversation, measurer } = this.parts;
    this.warnFutureBlocks(entries.map((e) => e.message));
    const stored = history.format ?? unloadedFormat;
    for (const entry of entries) {
      if (stored !== undefined && wireFormat(stored).isCompactionStart?.(entry.message)) {
        // The server compacted: a plan kept beside the history was made on the view it replaced.
        await conversation.save?.({ plan: null });
        this.emitter.emit('context:provider_context', { provider: 'anthropic', compactionSeq: entry.seq });
      }
    }
    if (!this.emitter.has('context:message_added')) return;
    const format = stored ?? 'openai';
    for (const entry of entries) {
      this.emitter.emit('context:message_added', {
        seq: entry.seq,
        role: roleOf(entry.message),
        ephemeral: !!options.ephemeral,
        tokens: measurer.count(measurer.defaultCounter(stored), entry.message, format),
      });
    }
  }
}
