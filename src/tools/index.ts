/**
 * Context tools: summaries and facts for compaction, offline by default, from a model when one is
 * configured. The public surface of `src/tools/`.
 */
export {
  COMPACT_FACTS_HEADING,
  categoryOf,
  compactFactPiece,
  compactKey,
  FACTS_CLOSE,
  FACTS_HEADING,
  FACTS_OPEN,
  parseFactsBlock,
  renderCompactFacts,
  renderFactsBlock,
  viewFacts,
} from './facts-block.js';
export {
  canPrepare,
  createAnthropicTools,
  createOpenAITools,
  type LLMToolsOptions,
  type LLMWarning,
  type MemoryRequest,
  type PreparedMemory,
  type PreparingTools,
} from './llm.js';
export { factIdentity, mergeFacts } from './merge-facts.js';
export { createOfflineTools } from './offline.js';
export { extractFactsOffline, MAX_NEW_FACTS_PER_ENTRY } from './offline-facts.js';
export { estimateTokens, summarizeOffline } from './offline-summarizer.js';
export { inertMarkers, isInstructionLike, quotedData } from './quoted-data.js';
export { renderTranscript, type TranscriptOptions } from './transcript.js';
export {
  type ContextTools,
  type ExtractedFact,
  type ExtractFactsOptions,
  FACT_CATEGORIES,
  type FactCategory,
  type SummarizeOptions,
} from './types.js';
