/**
 * Anthropic's token-counting endpoint (`POST /v1/messages/count_tokens`,
 * https://docs.anthropic.com/en/api/messages-count-tokens): the whole request (system prompt and
 * tools included) in the Messages API's shape, a view of any format converted to it first.
 */

import type { AnthropicTextBlock, ToolDefinition } from '../../messages/types.js';
import type { CountEndpoint, CountRequest, ViewReader } from '../wire-format.js';
import { toAnthropicRequest } from './request.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function anthropicTools(tools: readonly ToolDefinition[]): Array<Record<string, unknown>> {
  return tools.map((tool) => {
    if ('function' in tool && isRecord(tool.function)) {
      const fn = tool.function;
      const out: Record<string, unknown> = { name: fn.name };
      if (fn.description !== undefined) out.description = fn.description;
      // Anthropic requires a schema for a custom tool; an OpenAI tool may omit it.
      out.input_schema = fn.parameters ?? { type: 'object', properties: {} };
      return out;
    }
    return { ...tool };
  });
}

function anthropicBody(request: CountRequest, view: ViewReader): Record<string, unknown> {
  const split = toAnthropicRequest(view.as('anthropic'));
  const blocks: AnthropicTextBlock[] = [];
  let allStrings = true;
  for (const part of [request.system, split.system]) {
    if (part === undefined) continue;
    if (typeof part === 'string') {
      if (part !== '') blocks.push({ type: 'text', text: part });
    } else {
      allStrings = false;
      blocks.push(...part);
    }
  }
  const body: Record<string, unknown> = { model: request.model, messages: split.messages };
  if (blocks.length > 0) body.system = allStrings ? blocks.map((b) => b.text).join('\n\n') : blocks;
  if (request.tools !== undefined && request.tools.length > 0) body.tools = anthropicTools(request.tools);
  return body;
}

/** The Messages API's counting endpoint. */
export const anthropicCountEndpoint: CountEndpoint = {
  provider: 'anthropic',
  baseURL: 'https://api.anthropic.com',
  field: 'input_tokens',
  target: (baseURL, _model, apiKey, version) => ({
    url: `${baseURL}/v1/messages/count_tokens`,
    headers: { 'x-api-key': apiKey, 'anthropic-version': version, 'content-type': 'application/json' },
  }),
  body: anthropicBody,
};
