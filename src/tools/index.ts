/**
 * Context tools: summaries and facts for compaction, offline by default, from a model when one is
 * configured. The public surface of `src/tools/`.
 */
export { FACTS_CLOSE, FACTS_OPEN, parseFactsBlock, renderFactsBlock, viewFacts } from './facts-block.js';
export {
  createAnthropicTools,
  createOpenAITools,
  type LLMToolsOptions,
  type LLMWarning,
  type MemoryRequest,
  type PreparedMemory,
  type PreparingTools,
} from './llm.js';

export { createOfflineTools } from './offline.js';
export { extractFactsOffline } from './offline-facts.js';
export { estimateTokens, summarizeOffline } from './offline-summarizer.js';
export { inertMarkers } from './quoted-data.js';
export { renderTranscript, type TranscriptOptions } from './transcript.js';
export type {
  ContextTools,
  ExtractedFact,
  ExtractFactsOptions,
  FactCategory,
  SummarizeOptions,
} from './types.js';
