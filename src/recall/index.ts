/**
 * Recall: the whole history searchable, as `ctx.recall()` and as a tool the model can call. The
 * public surface of `src/recall/`.
 */

export type { ScoredSeq } from './rank.js';
export type { RecallFilters, RecallHit, RecallOptions, RecallRole } from './recall-hit.js';
export type { RecallIndexOptions } from './recall-index.js';
export {
  answerRecall,
  RECALL_NOTE,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  RECALL_TOOL_PARAMETERS,
  type RecallArguments,
  type RecallCall,
  type RecallSource,
  type RecallToolInput,
  readRecallArguments,
  readRecallCall,
  recallToolDefinition,
} from './recall-tool.js';
export type { TextIndex } from './text-index.js';
