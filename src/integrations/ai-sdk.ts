/**
 * `contextkit/ai-sdk`: contextkit for the Vercel AI SDK (v6). A middleware that fits every model
 * call's prompt to the window, a `prepareStep` helper that does the same per step, and lossless
 * conversion between the SDK's `ModelMessage`s and contextkit's messages. `ai` is an optional peer
 * dependency (its `tool`, `jsonSchema` and `asSchema` are used by these helpers).
 */

export { compactTool } from './ai-sdk/compact-tool.js';
export { memoryTool } from './ai-sdk/memory-tool.js';
export {
  type ContextMiddlewareOptions,
  type ContextPrepareStepOptions,
  contextMiddleware,
  contextPrepareStep,
  type PrepareStepInput,
} from './ai-sdk/middleware.js';
export {
  type AnyModelMessage,
  type ConvertedModelMessages,
  fromModelMessages,
  type LanguageModelPrompt,
  type ModelMessageSideMap,
  type ToModelMessagesOptions,
  toModelMessages,
} from './ai-sdk/model-messages.js';
export type { FitOptions } from './ai-sdk/prompt-fitter.js';
export { type RecallToolOptions, recallTool } from './ai-sdk/recall-tool.js';
