/**
 * `contextkit/openai-agents`: a `Session` for the OpenAI Agents SDK backed by a contextkit store,
 * whose history is fitted to the budget with every tool call kept beside its result.
 * `@openai/agents` is an optional peer dependency: only its types are used.
 */

export { agentItemsToResponses, responsesToAgentItems } from './openai-agents/agent-items.js';
export { compactTool } from './openai-agents/compact-tool.js';
export { memoryTool } from './openai-agents/memory-tool.js';
export { recallTool } from './openai-agents/recall-tool.js';
export { ContextkitSession, type ContextkitSessionOptions } from './openai-agents/session.js';
