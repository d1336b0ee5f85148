/**
 * OpenAI Chat Completions (`messages` of `{ role, content, tool_calls?, tool_call_id? }`;
 * https://platform.openai.com/docs/api-reference/chat/create) as a wire format.
 */

import { InvalidMessageError } from '../../errors.js';
import { toolShapes } from '../../messages/tool-shapes.js';
import type { AnthropicMessage, OpenAIAssistantMessage, OpenAIMessage } from '../../messages/types.js';
import { roleContentIssues } from '../../messages/validate-kit.js';
import { usageFromOpenAI } from '../../meter/usage.js';
import { notConvertibleBlocks, toAnthropic, toOpenAI } from '../anthropic/convert-openai.js';
import type { WireFormat } from '../wire-format.js';
import { buildOpenAI } from './atoms.js';
import { openaiProblems } from './request-rules.js';
import { openAIMemoryTool, openAIRecallTool, openAIToolResult } from './tools.js';
import { openaiMessageIssues, plainRules } from './validate.js';

const ROLES = new Set(['tool', 'developer']);
const PARTS = new Set(['image_url', 'input_audio', 'file', 'refusal']);

/**
 * Chat Completions message fields by role (https://platform.openai.com/docs/api-reference/chat/create:
 * `messages`). A `role: "system"` message is how a view carries the system prompt.
 */
const FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'refusal', 'audio', 'tool_calls', 'function_call']),
  tool: new Set(['role', 'content', 'tool_call_id']),
  function: new Set(['role', 'content', 'name']),
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The OpenAI Chat Completions format (`'openai'`). */
export const openaiChat: WireFormat<OpenAIMessage> = {
  name: 'openai',
  label: 'OpenAI',
  provider: 'openai',
  defaultModel: 'gpt-4o',
  detectRank: 2,
  messageEvidence(message) {
    const role = message.role;
    if (typeof role === 'string' && ROLES.has(role)) return { field: 'role', found: `role "${role}"` };
    if ('tool_calls' in message && message.tool_calls !== undefined)
      return { field: 'tool_calls', found: 'a "tool_calls" field' };
    if ('tool_call_id' in message && message.tool_call_id !== undefined)
      return { field: 'tool_call_id', found: 'a "tool_call_id" field' };
    return undefined;
  },
  blockEvidence: (type) => (PARTS.has(type) ? `a "${type}" content part` : undefined),
  messageIssues: (message, path) => openaiMessageIssues(message as Record<string, unknown>, path),
  plainIssues: (message, path) => roleContentIssues(message, path, plainRules),
  requestProblems: openaiProblems,
  wireFields: (message) => (message.role === undefined ? undefined : FIELDS[message.role]),
  buildAtoms: (entries, from) => buildOpenAI(entries, from),
  uniqueToolIds: false,
  userTurnFirst: false,
  textMessage: (role, content) => ({ role, content }),
  callAlone: (call) => ({ role: 'assistant', content: null, tool_calls: [call] }) as OpenAIMessage,
  toolResultMessage: (_name, id, text) => openAIToolResult(id, text),
  recallTool: openAIRecallTool,
  functionTool: (name, description, parameters) => toolShapes(name, description, parameters).openai,
  memoryTool: openAIMemoryTool,
  pivot: 'anthropic',
  apiName: 'Chat Completions',
  toPivot: (messages) => toAnthropic(messages),
  fromPivot(messages, options) {
    notConvertibleBlocks(messages, 'Chat Completions', options);
    return toOpenAI(messages as AnthropicMessage[]);
  },
  toRequest: (view) => view,
  replyMessages(response) {
    const choices = isRecord(response) ? response.choices : undefined;
    const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
    const message = isRecord(first) ? first.message : undefined;
    if (!isRecord(message)) {
      throw new InvalidMessageError([
        {
          path: 'response.choices[0].message',
          message:
            'expected a Chat Completions response with a message, or a Responses API response with output',
        },
      ]);
    }
    const reply = { ...message } as unknown as OpenAIAssistantMessage;
    // A reply of nothing (no text, no calls, no refusal) is stored as empty text, which OpenAI accepts back.
    const hasCalls = Array.isArray(reply.tool_calls) && reply.tool_calls.length > 0;
    if (reply.content === null && !hasCalls && typeof reply.refusal !== 'string') reply.content = '';
    return [reply];
  },
  usage: usageFromOpenAI,
};
