import { type FunctionTool, tool } from '@openai/agents';
import {
  answerCompact,
  COMPACT_TOOL_DESCRIPTION,
  COMPACT_TOOL_NAME,
  type CompactSource,
} from '../../compaction/compact-tool.js';

/**
 * The `compact` function tool for the OpenAI Agents SDK, on a `ContextkitSession` (or a
 * `ContextManager`): `new Agent({ tools: [compactTool(session)] })`. Strict: `focus` is given,
 * `null` when the model has nothing to say.
 */
export function compactTool(source: CompactSource): FunctionTool {
  return tool({
    name: COMPACT_TOOL_NAME,
    description: COMPACT_TOOL_DESCRIPTION,
    parameters: {
      type: 'object' as const,
      properties: {
        focus: {
          type: ['string', 'null'],
          description: 'What the summary must keep, or null.',
        },
      } as unknown as Record<string, never>,
      required: ['focus'],
      additionalProperties: false as const,
    },
    strict: true,
    execute: (input: unknown) => answerCompact(source, input),
  }) as unknown as FunctionTool;
}
