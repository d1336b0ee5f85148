/** The memory tool (`memory_20250818`) on contextkit's stores. */
export type { MemoryCommand, MemoryFiles, MemoryLimits } from './memory-commands.js';
export type { MemoryPath, MemoryPathCode } from './memory-path.js';
export {
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_PARAMETERS,
  type MemoryResult,
  type MemoryScope,
  MemoryTool,
  type MemoryToolOptions,
  memoryToolDefinition,
} from './memory-tool.js';
