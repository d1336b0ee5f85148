/**
 * Gemini `contents` (`{ role: 'user' | 'model', parts }`, the system prompt a top-level
 * `systemInstruction`; https://ai.google.dev/api/generate-content) as a wire format.
 */

import { InvalidMessageError } from '../../errors.js';
import type { GeminiContent, GeminiMessage } from '../../messages/gemini-types.js';
import { userTurnProblem } from '../../messages/request-kit.js';
import { toolShapes } from '../../messages/tool-shapes.js';
import type { AnthropicMessage } from '../../messages/types.js';
import { usageFromGemini } from '../../meter/usage.js';
import type { WireFormat } from '../wire-format.js';
import { buildGemini } from './atoms.js';
import { anthropicToGemini, geminiToAnthropic } from './convert.js';
import { geminiCountEndpoint } from './count.js';
import { geminiClearedResult, geminiEdits, geminiResultSize } from './edits.js';
import { geminiMessageIssues, textMessageAsGemini } from './parts.js';
import { geminiReader } from './reader.js';
import { geminiProblems, toGeminiRequest } from './request.js';
import { shownGemini } from './shown.js';
import { geminiPartsTokens } from './tokens.js';
import { geminiMemoryTool, geminiRecallTool, geminiToolResult } from './tools.js';

/** A Content's fields (https://ai.google.dev/api/caching#Content). */
const FIELDS: ReadonlySet<string> = new Set(['role', 'parts']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The Gemini format (`'gemini'`). */
export const gemini: WireFormat<GeminiMessage> = {
  name: 'gemini',
  label: 'Gemini',
  provider: 'google',
  defaultModel: 'gemini-2.5-flash',
  detectRank: 0,
  messageEvidence(message) {
    if (Array.isArray(message.parts)) return { field: 'parts', found: 'a "parts" array' };
    if (message.role === 'model') return { field: 'role', found: 'role "model"' };
    return undefined;
  },
  messageIssues: (message, path) => geminiMessageIssues(message as Record<string, unknown>, path),
  requestProblems(messages, problems) {
    geminiProblems(messages, problems);
    userTurnProblem(messages, problems);
  },
  wireFields: () => FIELDS,
  shownMessage: shownGemini,
  buildAtoms: (entries, from) => buildGemini(entries, from),
  uniqueToolIds: false,
  reader: geminiReader,
  messageTokens: geminiPartsTokens,
  edits: geminiEdits,
  clearResult: geminiClearedResult,
  resultSize: geminiResultSize,
  userTurnFirst: true,
  textMessage: (role, content) => textMessageAsGemini({ role, content }) as unknown as GeminiMessage,
  callAlone: (call) => ({ role: 'model', parts: [call] }) as GeminiMessage,
  toolResultMessage: geminiToolResult,
  recallTool: geminiRecallTool,
  functionTool: (name, description, parameters) => toolShapes(name, description, parameters).gemini,
  memoryTool: geminiMemoryTool,
  pivot: 'anthropic',
  apiName: 'Gemini API',
  toPivot: (messages, options) => geminiToAnthropic(messages, options),
  fromPivot: (messages, options) => anthropicToGemini(messages as AnthropicMessage[], options),
  // Plain text fits Anthropic's shape, from which Gemini's parts are made.
  fromPlain: (messages, options) => anthropicToGemini(messages as AnthropicMessage[], options),
  toRequest: toGeminiRequest,
  requestFields: { system: 'systemInstruction', messages: 'contents' },
  replyMessages(response) {
    const candidates = isRecord(response) ? response.candidates : undefined;
    const first: unknown = Array.isArray(candidates) ? candidates[0] : undefined;
    const content = isRecord(first) ? first.content : undefined;
    if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) {
      throw new InvalidMessageError([
        {
          path: 'response.candidates[0].content.parts',
          message: 'expected a Gemini generateContent response with a candidate content that has parts',
        },
      ]);
    }
    return [{ ...content, role: content.role ?? 'model' } as GeminiContent];
  },
  usage: usageFromGemini,
  countEndpoint: geminiCountEndpoint,
};
