/**
 * `contextkit/langchain`: a LangChain.js chat message history kept in a contextkit store, and a
 * runnable step that fits `BaseMessage[]` to a budget with every tool call kept beside its result
 * (where `trimMessages` cuts between them). `@langchain/core` is an optional peer dependency.
 */

export { fromBaseMessages, toBaseMessages, toOpenAIMessage } from './langchain/base-messages.js';
export {
  ContextkitChatMessageHistory,
  type ContextkitChatMessageHistoryOptions,
} from './langchain/chat-message-history.js';
export { compactTool } from './langchain/compact-tool.js';
export { type FitMessagesOptions, fitBaseMessages, fitMessages } from './langchain/fit-messages.js';
export { memoryTool } from './langchain/memory-tool.js';
export { recallTool } from './langchain/recall-tool.js';
