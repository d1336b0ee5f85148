import { jsonSchema, type Tool, tool } from 'ai';
import {
  answerCompact,
  COMPACT_TOOL_DESCRIPTION,
  COMPACT_TOOL_PARAMETERS,
  type CompactSource,
  type CompactToolInput,
} from '../../compaction/compact-tool.js';

/**
 * The `compact` tool for the AI SDK, on the `ContextManager` that fits the conversation (or any
 * `CompactSource`): `generateText({ model, tools: { compact: compactTool(ctx) } })`. The model's
 * call plans the compaction; the next request sends the compacted view; the result is its receipt.
 */
export function compactTool(source: CompactSource): Tool<CompactToolInput, string> {
  return tool({
    description: COMPACT_TOOL_DESCRIPTION,
    inputSchema: jsonSchema<CompactToolInput>(
      COMPACT_TOOL_PARAMETERS as unknown as Parameters<typeof jsonSchema>[0],
    ),
    execute: (input) => answerCompact(source, input),
  });
}
