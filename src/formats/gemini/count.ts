/**
 * Gemini's token-counting endpoint (`POST /v1beta/models/{model}:countTokens`,
 * https://ai.google.dev/api/tokens): the whole `generateContentRequest` (system instruction and
 * tools included), a view of any format made Gemini contents first (see contents.ts).
 */

import type { CountEndpoint, CountRequest, ViewReader } from '../wire-format.js';
import { geminiContentsOf, toGeminiTools } from './contents.js';

/** Gemini model ids are accepted with or without their `models/` prefix. */
function geminiModelId(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

function geminiBody(request: CountRequest, view: ViewReader): Record<string, unknown> {
  const parts = geminiContentsOf(view, request.system);
  const generateContentRequest: Record<string, unknown> = {
    model: `models/${geminiModelId(request.model)}`,
    contents: parts.contents,
  };
  if (parts.systemInstruction) generateContentRequest.systemInstruction = parts.systemInstruction;
  const tools = toGeminiTools(request.tools);
  if (tools.length > 0) generateContentRequest.tools = tools;
  return { generateContentRequest };
}

/** Gemini's counting endpoint. */
export const geminiCountEndpoint: CountEndpoint = {
  provider: 'google',
  baseURL: 'https://generativelanguage.googleapis.com',
  field: 'totalTokens',
  target: (baseURL, model, apiKey) => ({
    url: `${baseURL}/v1beta/models/${encodeURIComponent(geminiModelId(model))}:countTokens`,
    headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
  }),
  body: geminiBody,
};
