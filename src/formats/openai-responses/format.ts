/**
 * The OpenAI Responses API's input items (`input` of messages, `function_call`,
 * `function_call_output`, `reasoning`, `compaction`, …; https://platform.openai.com/docs/api-reference/responses/create)
 * as a wire format.
 */

import { InvalidMessageError } from '../../errors.js';
import type { ResponsesItem } from '../../messages/responses-types.js';
import { toolShapes } from '../../messages/tool-shapes.js';
import type { Message, OpenAIMessage } from '../../messages/types.js';
import { usageFromOpenAI } from '../../meter/usage.js';
import type { WireFormat } from '../wire-format.js';
import { buildResponses } from './atoms.js';
import { chatToResponses, responsesToChat } from './convert.js';
import { isCompactionItem, RESPONSES_ITEM_TYPES, RESPONSES_PART_TYPES } from './items.js';
import { responsesReader } from './reader.js';
import { responsesProblems } from './request.js';
import { shownResponses } from './shown.js';
import { responsesMemoryTool, responsesRecallTool, responsesToolResult } from './tools.js';
import { responsesItemIssues } from './validate.js';

/** Part types both OpenAI APIs have: they tell Chat Completions from Anthropic only. */
const SHARED_PARTS = new Set(['refusal', 'input_audio']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The OpenAI Responses format (`'openai-responses'`). */
export const openaiResponses: WireFormat<ResponsesItem> = {
  name: 'openai-responses',
  label: 'OpenAI Responses',
  provider: 'openai',
  defaultModel: 'gpt-4o',
  detectRank: 1,
  messageEvidence(message) {
    if (typeof message.type === 'string' && RESPONSES_ITEM_TYPES.has(message.type))
      return { field: 'type', found: `a "${message.type}" item` };
    if (!Array.isArray(message.content)) return undefined;
    const k = message.content.findIndex(
      (p: unknown) =>
        isRecord(p) && !SHARED_PARTS.has(String(p.type)) && RESPONSES_PART_TYPES.has(String(p.type)),
    );
    if (k < 0) return undefined;
    const type = (message.content[k] as Record<string, unknown>).type;
    return { field: `content[${k}].type`, found: `an "${String(type)}" part` };
  },
  // A developer message fits both OpenAI APIs: a Responses conversation takes one, and a
  // conversation it alone made "openai" is a Responses one once a Responses item comes.
  accepts: (evidence, earlier) =>
    evidence.format === 'openai' &&
    evidence.field === 'role' &&
    (!earlier || evidence.found === 'role "developer"'),
  messageIssues: responsesItemIssues,
  requestProblems: responsesProblems,
  // Responses items are many types, each with its own fields: sent as stored.
  wireFields: () => undefined,
  shownMessage: shownResponses,
  buildAtoms: buildResponses,
  uniqueToolIds: true,
  reader: responsesReader,
  userTurnFirst: false,
  textMessage: (role, content) => ({ role, content }) as ResponsesItem,
  serverCompaction: 'endpoint',
  isCompactionItem,
  holdsCompaction: isCompactionItem,
  // A `function_call` item stands alone.
  callAlone: (call) => call as ResponsesItem,
  toolResultMessage: (_name, id, text) => responsesToolResult(id, text),
  recallTool: responsesRecallTool,
  functionTool: (name, description, parameters) => toolShapes(name, description, parameters).responses,
  memoryTool: responsesMemoryTool,
  pivot: 'openai',
  apiName: 'Responses API',
  toPivot: (messages, options) => responsesToChat(messages as Message[], options),
  fromPivot: (messages) => chatToResponses(messages as OpenAIMessage[]) as ResponsesItem[],
  fromPlain: (messages) => chatToResponses(messages as OpenAIMessage[]) as ResponsesItem[],
  toRequest: (view) => view,
  replyMessages(response) {
    const output = isRecord(response) ? response.output : undefined;
    if (!Array.isArray(output) || output.length === 0)
      throw new InvalidMessageError([
        {
          path: 'response.output',
          message: 'expected a Responses API response with at least one output item',
        },
      ]);
    return output as ResponsesItem[];
  },
  usage: usageFromOpenAI,
};
