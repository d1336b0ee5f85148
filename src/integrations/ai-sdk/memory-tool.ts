import { jsonSchema, type Tool, tool } from 'ai';
import type { MemoryCommand } from '../../memory/memory-commands.js';
import {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_PARAMETERS,
  type MemoryTool,
} from '../../memory/memory-tool.js';

/**
 * The memory tool for the AI SDK, on a contextkit {@link MemoryTool}:
 * `generateText({ model, tools: { memory: memoryTool(memory) } })`. The model's commands run on
 * the memory's store; what it reads back (results and refusals alike) is the tool's output.
 */
export function memoryTool(memory: MemoryTool): Tool<MemoryCommand, string> {
  return tool({
    description: MEMORY_TOOL_DESCRIPTION,
    inputSchema: jsonSchema<MemoryCommand>(
      MEMORY_TOOL_PARAMETERS as unknown as Parameters<typeof jsonSchema>[0],
    ),
    execute: async (input) => (await memory.run(input)).text,
  });
}
