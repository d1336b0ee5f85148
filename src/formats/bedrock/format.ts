/**
 * AWS Bedrock Converse (`messages` of `{ role: 'user' | 'assistant', content: ContentBlock[] }`,
 * the system prompt a top-level `system`; docs.aws.amazon.com/bedrock/latest/APIReference/
 * API_runtime_Converse.html) as a wire format. Claude on Bedrock bills Claude's tokens, so the
 * format counts as Anthropic does and converts through Anthropic.
 */

import type { BedrockMessage } from '../../messages/bedrock-types.js';
import { toolShapes } from '../../messages/tool-shapes.js';
import type { Message, ToolDefinition } from '../../messages/types.js';
import type { WireFormat } from '../wire-format.js';
import { buildBedrock } from './atoms.js';
import { isRecord } from './blocks.js';
import { anthropicToBedrock, bedrockToAnthropic } from './convert.js';
import { bedrockEvidence, bedrockShown, bedrockTextMessage, bedrockToolResultMessage } from './messages.js';
import { bedrockReader } from './reader.js';
import { bedrockReplyMessages, toBedrockRequest, usageFromBedrock } from './request.js';
import { bedrockProblems, bedrockTurnBreaks } from './request-problems.js';
import {
  bedrockClearedResult,
  bedrockInputsCleared,
  bedrockTextParts,
  bedrockTruncated,
  isConverseMessage,
} from './shorten.js';
import { bedrockBlockTokens } from './tokens.js';
import { bedrockMemoryTool, bedrockRecallTool } from './tools.js';
import { bedrockMessageIssues } from './validate.js';

/** A Converse Message's fields (API_runtime_Message). */
const FIELDS: ReadonlySet<string> = new Set(['role', 'content']);

/** The Bedrock Converse format (`'bedrock'`). */
export const bedrock: WireFormat<BedrockMessage> = {
  name: 'bedrock',
  label: 'AWS Bedrock Converse',
  provider: 'anthropic',
  defaultModel: 'claude-sonnet-4-5',
  detectRank: 4,
  messageEvidence: bedrockEvidence,
  messageIssues: bedrockMessageIssues,
  requestProblems: bedrockProblems,
  turnBreaks: { at: bedrockTurnBreaks, message: (text) => bedrockTextMessage('assistant', text) },
  wireFields: () => FIELDS,
  shownMessage: (message) => bedrockShown(message),
  buildAtoms: buildBedrock,
  uniqueToolIds: true,
  // Converse blocks are keyed by their member and have no `type`.
  blockTokens: (block, c) => (block.type === undefined ? bedrockBlockTokens(block, c) : undefined),
  edits: {
    owns: isConverseMessage,
    textParts: (message) =>
      bedrockTextParts(message).map((p) => ({ ...p, slotBlock: p.inner < 0 ? -1 : p.block })),
    truncated: bedrockTruncated,
    inputsCleared: bedrockInputsCleared,
  },
  reader: bedrockReader,
  clearResult: bedrockClearedResult,
  // A toolResult keeps its content one level down (`{ toolResult: { content } }`).
  resultContent: (block) => (isRecord(block.toolResult) ? block.toolResult.content : undefined),
  userTurnFirst: true,
  textMessage: (role, content) => bedrockTextMessage(role, content),
  toolResultMessage: (_name, id, text, isError) => bedrockToolResultMessage(id, text, isError),
  recallTool: bedrockRecallTool,
  functionTool: (name, description, parameters) =>
    toolShapes(name, description, parameters).bedrock as unknown as ToolDefinition,
  memoryTool: bedrockMemoryTool as unknown as ToolDefinition,
  pivot: 'anthropic',
  toPivot: (messages, options) => bedrockToAnthropic(messages, options),
  fromPivot: (messages, options) => anthropicToBedrock(messages as never, options),
  fromPlain: (messages, options) => anthropicToBedrock(messages as never, options),
  apiName: 'Converse API',
  toRequest: (view) => toBedrockRequest(view as readonly Message[]),
  requestFields: { system: 'system', messages: 'messages' },
  replyMessages: bedrockReplyMessages,
  usage: usageFromBedrock,
};
