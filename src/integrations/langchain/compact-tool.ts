import { type DynamicStructuredTool, tool } from '@langchain/core/tools';
import {
  answerCompact,
  COMPACT_TOOL_DESCRIPTION,
  COMPACT_TOOL_NAME,
  COMPACT_TOOL_PARAMETERS,
  type CompactSource,
} from '../../compaction/compact-tool.js';

/**
 * The `compact` tool for LangChain.js, on the `ContextManager` that fits the messages sent:
 * `chatModel.bindTools([compactTool(ctx)])`, and run it as any tool.
 */
export function compactTool(source: CompactSource): DynamicStructuredTool {
  return tool((input: unknown) => answerCompact(source, input), {
    name: COMPACT_TOOL_NAME,
    description: COMPACT_TOOL_DESCRIPTION,
    schema: structuredClone(COMPACT_TOOL_PARAMETERS) as unknown as Record<string, unknown>,
  }) as unknown as DynamicStructuredTool;
}
