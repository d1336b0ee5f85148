/**
 * Anthropic Messages (`messages` of `{ role: 'user' | 'assistant', content }`, the system prompt
 * a top-level `system`; https://docs.anthropic.com/en/api/messages) as a wire format.
 */

import { InvalidMessageError } from '../../errors.js';
import { toolShapes } from '../../messages/tool-shapes.js';
import type { AnthropicAssistantMessage, AnthropicMessage, OpenAIMessage } from '../../messages/types.js';
import { usageFromAnthropic } from '../../meter/usage.js';
import type { WireFormat } from '../wire-format.js';
import { buildAnthropic } from './atoms.js';
import {
  futureBlockTypes,
  hasCompactionBlock,
  KNOWN_ANTHROPIC_BLOCKS,
  readableCompactionBlock,
} from './blocks.js';
import { withCacheBreakpoints } from './cache-breakpoints.js';
import { hasLateSystem, notConvertibleBlocks, toAnthropic, toOpenAI } from './convert-openai.js';
import { anthropicCountEndpoint } from './count.js';
import { anthropicClearedResult, anthropicResultContent } from './edits.js';
import { toAnthropicRequest } from './request.js';
import { anthropicRequestProblems } from './request-rules.js';
import { anthropicMemoryTool, anthropicRecallTool, anthropicToolResult } from './tools.js';
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
  readsPlain: true,
  detectRank: 3,
  messageEvidence: () => undefined,
  blockEvidence: (type) => (BLOCKS.has(type) ? `a "${type}" content block` : undefined),
  claimsUnknownBlocks: true,
  futureBlockTypes,
  messageIssues: (message, path) => anthropicMessageIssues(message as Record<string, unknown>, path),
  requestProblems: anthropicRequestProblems,
  wireFields: () => FIELDS,
  buildAtoms: buildAnthropic,
  uniqueToolIds: true,
  clearResult: anthropicClearedResult,
  resultContent: anthropicResultContent,
  userTurnFirst: true,
  textMessage: (role, content) => ({ role, content }),
  callAlone: (call) => ({ role: 'assistant', content: [call] }) as AnthropicMessage,
  toolResultMessage: (_name, id, text, isError) => anthropicToolResult(id, text, isError),
  recallTool: anthropicRecallTool,
  functionTool: (name, description, parameters) => toolShapes(name, description, parameters).anthropic,
  memoryTool: anthropicMemoryTool,
  withCacheBreakpoints,
  serverCompaction: 'in-request',
  isCompactionStart: (message) => message.role === 'assistant' && hasCompactionBlock(message),
  holdsCompaction: hasCompactionBlock,
  readableCompaction: readableCompactionBlock,
  pivot: 'openai',
  apiName: 'Messages API',
  toPivot(messages, options, to) {
    notConvertibleBlocks(messages, to.apiName ?? to.label, options);
    return toOpenAI(messages);
  },
  fromPivot: (messages) => toAnthropic(messages as OpenAIMessage[]),
  // An Anthropic system prompt exists only at the top: a plain system message after the first
  // turn (a summary standing after a kept user turn) goes through the OpenAI reading, as a user turn.
  fromPlain: (messages) =>
    hasLateSystem(messages)
      ? toAnthropic(messages as OpenAIMessage[])
      : (messages.slice() as AnthropicMessage[]),
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
  countEndpoint: anthropicCountEndpoint,
};
