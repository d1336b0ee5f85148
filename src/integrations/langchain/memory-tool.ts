import { type DynamicStructuredTool, tool } from '@langchain/core/tools';
import {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_PARAMETERS,
  type MemoryTool,
} from '../../memory/memory-tool.js';

/**
 * The memory tool for LangChain.js, on a contextkit {@link MemoryTool}:
 * `chatModel.bindTools([memoryTool(memory)])`, and run it as any tool.
 */
export function memoryTool(memory: MemoryTool): DynamicStructuredTool {
  return tool(async (input: unknown) => (await memory.run(input)).text, {
    name: MEMORY_TOOL_NAME,
    description: MEMORY_TOOL_DESCRIPTION,
    schema: structuredClone(MEMORY_TOOL_PARAMETERS) as unknown as Record<string, unknown>,
  }) as unknown as DynamicStructuredTool;
}
