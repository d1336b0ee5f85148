import { type FunctionTool, tool } from '@openai/agents';
import type { RecallOptions } from '../../recall/recall-hit.js';
import {
  answerRecall,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
  type RecallSource,
} from '../../recall/recall-tool.js';

/**
 * The `recall` function tool for the OpenAI Agents SDK, searching a `ContextkitSession` (or a
 * `ContextManager`): `new Agent({ tools: [recallTool(session)] })`. Strict: the model must give
 * a `query`.
 */
export function recallTool(source: RecallSource, options: RecallOptions = {}): FunctionTool {
  return tool({
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL_DESCRIPTION,
    parameters: {
      type: 'object',
      properties: structuredClone(RECALL_TOOL_PARAMETERS.properties),
      required: ['query'],
      additionalProperties: false,
    },
    strict: true,
    execute: (input: unknown) => answerRecall(source, input, options),
  }) as unknown as FunctionTool;
}
