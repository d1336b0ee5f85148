/**
 * Gemini `contents` (`{ role: 'user' | 'model', parts }`, the system prompt a top-level
 * `systemInstruction`; https://ai.google.dev/api/generate-content) as a wire format.
 */

import { InvalidMessageError } from '../../errors.js';
import { usageFromGemini } from '../../guard/usage.js';
import { geminiMemoryTool } from '../../memory/memory-tool.js';
import { convertMessages } from '../../messages/convert.js';
import { userTurnProblem } from '../../messages/request-kit.js';
import { toolResultMessage } from '../../messages/tool-call.js';
import { geminiRecallTool } from '../../recall/recall-tool.js';
import type { WireFormat } from '../wire-format.js';
import { buildGemini } from './atoms.js';
import { type GeminiContent, type GeminiMessage, geminiMessageIssues, textMessageAsGemini } from './parts.js';
import { geminiProblems, toGeminiRequest } from './request.js';
import { shownGemini } from './shown.js';

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
  userTurnFirst: true,
  textMessage: (role, content) => textMessageAsGemini({ role, content }) as unknown as GeminiMessage,
  toolResultMessage: (name, id, text, isError) =>
    toolResultMessage('gemini', name, id, text, isError) as GeminiMessage,
  recallTool: geminiRecallTool,
  memoryTool: geminiMemoryTool,
  pivot: 'anthropic',
  toPivot: (messages, options) => convertMessages(messages, 'anthropic', options),
  fromPivot: (messages, options) => convertMessages(messages, 'gemini', options) as GeminiMessage[],
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
};
