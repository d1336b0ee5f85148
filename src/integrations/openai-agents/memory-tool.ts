import { type FunctionTool, tool } from '@openai/agents';
import {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_PARAMETERS,
  type MemoryTool,
} from '../../memory/memory-tool.js';

/**
 * The memory tool for the OpenAI Agents SDK, on a contextkit {@link MemoryTool}:
 * `new Agent({ tools: [memoryTool(memory)] })`. Not strict (the SDK then allows extra
 * properties): each command takes its own fields.
 */
export function memoryTool(memory: MemoryTool): FunctionTool {
  return tool({
    name: MEMORY_TOOL_NAME,
    description: MEMORY_TOOL_DESCRIPTION,
    parameters: {
      type: 'object' as const,
      properties: structuredClone(MEMORY_TOOL_PARAMETERS.properties) as unknown as Record<string, never>,
      required: ['command'],
      additionalProperties: true as const,
    },
    strict: false,
    execute: async (input: unknown) => (await memory.run(input)).text,
  }) as unknown as FunctionTool;
}
