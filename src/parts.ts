/**
 * `contextkit/parts`: the building blocks `ContextManager` is composed of, for code that assembles
 * its own: the stored log (`History`), the atoms a conversation is cut into (`buildAtoms`,
 * `AtomIndex`), what compaction may touch (`protectionsOf`), the `Planner` (entries, atoms, budget
 * and previous plan in; a plan out) and the `View` (a plan rendered into messages), with the
 * helpers they share (image and PDF counting per provider, the tokenizers, store persistence and
 * id encoding, the facts block's pieces, the memory tool's paths). `ContextGuard` and
 * `ContextMeasurer`, the seeds' two classes, stay at the root; `imageTokens(format)` and the
 * format-taking tool definitions are the root's one name per family.
 */

export { compactReceiptText } from './compaction/compact-tool.js';
export { decodePlan, encodePlan } from './compaction/plan.js';
export { Planner } from './compaction/planner.js';
export { protectionsOf } from './compaction/protections.js';
export { LEVELS, levelOf } from './compaction/zones.js';
export { economyAt } from './economy.js';
export { ContextEmitter } from './events.js';
export { bedrockOverflow } from './formats/bedrock/request.js';
export { isCompactionItem, MAX_ENCRYPTED_CONTENT } from './formats/openai-responses/items.js';
export { appliedEditsOf } from './guard/applied-edits.js';
export { ANTHROPIC_MIN_COMPACTION_TRIGGER, supportsServerCompaction } from './guard/provider-compaction.js';
export { History } from './history/history.js';
export { createCalibration } from './measure/calibration.js';
export { MEMORY_ROOT, readMemoryPath } from './memory/memory-path.js';
export { memoryDirectoryId } from './memory/memory-tool.js';
export { toolEffectClassifier } from './messages/tool-effect.js';
export { carriedInputTokens } from './meter/usage.js';
export { ECONOMY_PRESETS, economyFor } from './options.js';
export { ContextPool } from './pool.js';
export { RecallIndex } from './recall/recall-index.js';
export { recallResultMessage, recallResultText } from './recall/recall-tool.js';
export { Cache, DEFAULT_TTL_MS } from './stores/cache.js';
export { historyPages } from './stores/history-pages.js';
export { compareIds, decodeId, encodeId, isHashedName, MAX_NAME_BYTES } from './stores/keys.js';
export { type HeldMeta, metaPersistence } from './stores/meta-persistence.js';
export { FilePersistence, MemoryPersistence } from './stores/persistence.js';
export { CLAUDE_TOKENIZER, DEFAULT_TOKENIZERS, GEMINI_TOKENIZER } from './tokens/catalog.js';
export { PROVIDER_FRAMING } from './tokens/counter.js';
export { getTextTokenCounter, isEncodingLoaded } from './tokens/encodings.js';
export {
  ANTHROPIC_DEFAULT_IMAGE_TOKENS,
  ANTHROPIC_PDF_PAGE_TOKENS,
  anthropicImageTokens,
  countPdfPages,
  GEMINI_DEFAULT_IMAGE_TOKENS,
  GEMINI_PDF_PAGE_TOKENS,
  geminiImageTokens,
  imageInfoFromBase64,
  imageInfoFromBytes,
  imageInfoFromUrl,
  OPENAI_DEFAULT_IMAGE_TOKENS,
  OPENAI_PDF_PAGE_TOKENS,
  openaiImageTokens,
  parseDataUrl,
  pdfPageTokens,
  pdfTokens,
} from './tokens/images.js';
export { checkPricing } from './tokens/pricing.js';
export {
  COMPACT_FACTS_HEADING,
  categoryOf,
  compactFactPiece,
  compactKey,
  FACTS_HEADING,
  renderCompactFacts,
} from './tools/facts-block.js';
export { canPrepare } from './tools/llm.js';
export { factIdentity, mergeFacts } from './tools/merge-facts.js';
export { MAX_NEW_FACTS_PER_ENTRY } from './tools/offline-facts.js';
export { isInstructionLike, quotedData } from './tools/quoted-data.js';
export { FACT_CATEGORIES } from './tools/types.js';
export { PlanBlocks } from './view/plan-blocks.js';
export { NOTICE_RESERVE, View } from './view/view.js';
export { AtomIndex, buildAtoms } from './wire/atoms.js';
export {
  hasNonToolResultContent,
  hasToolCalls,
  isToolResultMessage,
  messageText,
  toolCallIds,
  toolResultIds,
} from './wire/content.js';
export {
  detectConversationFormat,
  detectMessageFormat,
  resolveConversationFormat,
} from './wire/detect.js';
export { messageProblems } from './wire/validate-message.js';
