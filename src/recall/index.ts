/**
 * Recall: the whole history searchable, as `ctx.recall()` and as a tool the model can call. The
 * public surface of `src/recall/`.
 */

export type { ScoredSeq } from './rank.js';
export type { RecallHit, RecallOptions } from './recall-hit.js';
export { RecallIndex, type RecallIndexOptions } from './recall-index.js';
export {
  answerRecall,
  anthropicRecallTool,
  geminiRecallTool,
  openAIRecallTool,
  RECALL_NOTE,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
  type RecallCall,
  type RecallSource,
  readRecallCall,
  recallResultMessage,
  recallResultText,
  recallToolDefinition,
} from './recall-tool.js';
export type { TextIndex } from './text-index.js';
