/**
 * Anthropic Messages (`messages` of `{ role: 'user' | 'assistant', content }`, the system prompt
 * a top-level `system`; https://docs.anthropic.com/en/api/messages) as a wire format.
 */

import { InvalidMessageError } from '../../errors.js';
import { usageFromAnthropic } from '../../guard/usage.js';
import { hasCompactionBlock } from '../../history/live-entries.js';
import { anthropicMemoryTool } from '../../memory/memory-tool.js';
import { convertMessages } from '../../messages/convert.js';
import { toolResultMessage } from '../../messages/tool-call.js';
import type { AnthropicAssistantMessage, AnthropicMessage } from '../../messages/types.js';
import { anthropicRecallTool } from '../../recall/recall-tool.js';
import type { WireFormat } from '../wire-format.js';
import { buildAnthropic } from './atoms.js';
import { KNOWN_ANTHROPIC_BLOCKS } from './blocks.js';
import { toAnthropicRequest } from './request.js';
import { anthropicRequestProblems } from './request-rules.js';
import { anthropicMessageIssues } from './validate.js';

/** Every documented Anthropic block but `text` (which every format has). */
const BLOCKS = new Set([...KNOWN_ANTHROPIC_BLOCKS].filter((t) => t !== 'text'));
/** The Messages API's message fields. */
const FIELDS: ReadonlySet<string> = new Set(['role', 'content']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The Anthropic Messages format (`'anthropic'`). */
export const anthropic: WireFormat<AnthropicMessage> = {
  name: 'anthropic',
  label: 'Anthropic',
  provider: 'anthropic',
  defaultModel: 'claude-sonnet-4-5',
  detectRank: 3,
  messageEvidence: () => undefined,
  blockEvidence: (type) => (BLOCKS.has(type) ? `a "${type}" content block` : undefined),
  claimsUnknownBlocks: true,
  messageIssues: (message, path) => anthropicMessageIssues(message as Record<string, unknown>, path),
  requestProblems: anthropicRequestProblems,
  wireFields: () => FIELDS,
  buildAtoms: buildAnthropic,
  uniqueToolIds: true,
  userTurnFirst: true,
  textMessage: (role, content) => ({ role, content }),
  toolResultMessage: (name, id, text, isError) =>
    toolResultMessage('anthropic', name, id, text, isError) as AnthropicMessage,
  recallTool: anthropicRecallTool,
  memoryTool: anthropicMemoryTool,
  isCompactionStart: (message) => message.role === 'assistant' && hasCompactionBlock(message),
  pivot: 'openai',
  toPivot: (messages, options) => convertMessages(messages, 'openai', options),
  fromPivot: (messages, options) => convertMessages(messages, 'anthropic', options),
  toRequest: toAnthropicRequest,
  requestFields: { system: 'system', messages: 'messages' },
  replyMessages(response) {
    const content = isRecord(response) ? response.content : undefined;
    if (!Array.isArray(content) && typeof content !== 'string') {
      throw new InvalidMessageError([
        { path: 'response.content', message: 'expected an Anthropic Messages response with content blocks' },
      ]);
    }
    return [{ role: 'assistant', content } as AnthropicAssistantMessage];
  },
  usage: usageFromAnthropic,
};
