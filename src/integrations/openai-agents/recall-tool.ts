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
 * The tool's schema as OpenAI's strict mode takes it: every property required, the optional ones
 * nullable (`null` meaning not given, as `readRecallArguments` reads it).
 */
function strictParameters() {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [name, schema] of Object.entries(structuredClone(RECALL_TOOL_PARAMETERS.properties))) {
    const prop: Record<string, unknown> = { ...schema };
    if (name !== 'query') {
      prop.type = [prop.type, 'null'];
      if (Array.isArray(prop.enum)) prop.enum = [...prop.enum, null];
    }
    properties[name] = prop;
  }
  return {
    type: 'object' as const,
    properties: properties as Record<string, never>,
    required: Object.keys(properties),
    additionalProperties: false as const,
  };
}

/**
 * The `recall` function tool for the OpenAI Agents SDK, searching a `ContextkitSession` (or a
 * `ContextManager`): `new Agent({ tools: [recallTool(session)] })`. Strict: the model gives a
 * `query` and every filter, `null` for those it does not use.
 */
export function recallTool(source: RecallSource, options: RecallOptions = {}): FunctionTool {
  return tool({
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL_DESCRIPTION,
    parameters: strictParameters(),
    strict: true,
    execute: (input: unknown) => answerRecall(source, input, options),
  }) as unknown as FunctionTool;
}
