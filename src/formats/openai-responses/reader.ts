/**
 * Reading Responses items without a role (calls, outputs, reasoning, hosted tools) for the shared
 * readers (`wire/content.ts`): what kind each is, which call it makes or answers. Their text
 * (`output`, `content`) is read the shared way.
 */
import type { Message } from '../../messages/types.js';
import type { MessageReader } from '../wire-format.js';
import { itemType, outputCallId, RESPONSES_CALLS, RESPONSES_OUTPUTS } from './items.js';

function hasCalls(item: Message): boolean {
  return (itemType(item) ?? '') in RESPONSES_CALLS;
}

function isResult(item: Message): boolean {
  return (itemType(item) ?? '') in RESPONSES_OUTPUTS;
}

/** How the shared readers read Responses items without a role. */
export const responsesReader: MessageReader = {
  owns: (message) => message.role === undefined,
  kind: itemType,
  hasCalls,
  callIds(item) {
    const id = (item as { call_id?: unknown }).call_id;
    return hasCalls(item) && typeof id === 'string' ? [id] : [];
  },
  resultIds(item) {
    const id = isResult(item) ? outputCallId(item as Record<string, unknown>) : undefined;
    return id === undefined ? [] : [id];
  },
  isResult,
};
