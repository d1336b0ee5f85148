import { type DynamicStructuredTool, tool } from '@langchain/core/tools';
import type { RecallOptions } from '../../recall/recall-hit.js';
import {
  answerRecall,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
  type RecallSource,
} from '../../recall/recall-tool.js';

/**
 * The `recall` tool for LangChain.js, searching a `ContextkitChatMessageHistory` (or a
 * `ContextManager`): `chatModel.bindTools([recallTool(history)])`, and run it as any tool.
 */
export function recallTool(source: RecallSource, options: RecallOptions = {}): DynamicStructuredTool {
  return tool((input: unknown) => answerRecall(source, input, options), {
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL_DESCRIPTION,
    schema: structuredClone(RECALL_TOOL_PARAMETERS) as unknown as Record<string, unknown>,
  }) as unknown as DynamicStructuredTool;
}
