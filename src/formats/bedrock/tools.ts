/**
 * contextkit's own tools (recall, memory) as Converse tools, `{ toolSpec: { name, description,
 * inputSchema: { json } } }` (API_runtime_ToolSpecification), for `toolConfig.tools`.
 */
import { MEMORY_TOOL_SHAPES } from '../../memory/memory-spec.js';
import type { ToolShapes } from '../../messages/tool-shapes.js';
import type { ToolDefinition } from '../../messages/types.js';
import { RECALL_TOOL_SHAPES } from '../../recall/recall-spec.js';

/** The recall tool as a Converse tool (`toolConfig: { tools: [bedrockRecallTool] }`). */
export const bedrockRecallTool = Object.freeze(RECALL_TOOL_SHAPES.bedrock) as unknown as ToolDefinition;

/**
 * The memory tool as a Converse tool (`toolConfig: { tools: [bedrockMemoryTool] }`), a `toolSpec`
 * with its JSON Schema under `inputSchema.json` (API_runtime_ToolSpecification).
 */
export const bedrockMemoryTool: ToolShapes['bedrock'] = MEMORY_TOOL_SHAPES.bedrock;
