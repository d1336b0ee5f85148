/**
 * contextkit's own tools (recall, memory) as Converse tools, `{ toolSpec: { name, description,
 * inputSchema: { json } } }` (API_runtime_ToolSpecification), for `toolConfig.tools`.
 */
import {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_PARAMETERS,
} from '../../memory/memory-spec.js';
import { toolShapes } from '../../messages/tool-shapes.js';
import type { ToolDefinition } from '../../messages/types.js';
import {
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
} from '../../recall/recall-spec.js';

/** The recall tool as a Converse tool (`toolConfig: { tools: [bedrockRecallTool] }`). */
export const bedrockRecallTool = Object.freeze(
  toolShapes(RECALL_TOOL_NAME, RECALL_TOOL_DESCRIPTION, RECALL_TOOL_PARAMETERS).bedrock,
) as unknown as ToolDefinition;

/**
 * The memory tool as a Converse tool (`toolConfig: { tools: [bedrockMemoryTool] }`), a `toolSpec`
 * with its JSON Schema under `inputSchema.json` (API_runtime_ToolSpecification).
 */
export const bedrockMemoryTool = {
  toolSpec: {
    name: MEMORY_TOOL_NAME,
    description: MEMORY_TOOL_DESCRIPTION,
    inputSchema: { json: MEMORY_TOOL_PARAMETERS },
  },
} as const;
