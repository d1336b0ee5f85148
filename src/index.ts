/**
 * contextkit: conversation memory for LLM agents. Add every message; before each model call ask
 * `getMessagesForRequest()` for a list that fits the window, is valid for the provider, keeps
 * what matters, and leaves the stored history whole.
 */

export {
  answerCompact,
  COMPACT_TOOL_DESCRIPTION,
  COMPACT_TOOL_NAME,
  COMPACT_TOOL_PARAMETERS,
  type CompactCall,
  type CompactSource,
  type CompactToolInput,
  compactToolDefinition,
  readCompactArguments,
  readCompactCall,
} from './compaction/compact-tool.js';
export type { ClearingOptions, Protection } from './compaction/draft.js';
export type {
  AfterCompactionResult,
  BeforeCompactionInfo,
  BeforeCompactionResult,
  CompactionHooks,
} from './compaction/hooks.js';
export type { CompactionPlan, PlanEdits, PlanSummary } from './compaction/plan.js';
export type { PlannerSettings, PlanRequest, PlanResult } from './compaction/planner.js';
export {
  createResponsesCompact,
  type ProviderCompactor,
  type ResponsesCompact,
  type ResponsesCompactInput,
} from './compaction/provider-compaction.js';
export type {
  CustomStrategy,
  StrategyDecision,
  StrategyInput,
  StrategyOption,
} from './compaction/strategy.js';
export type { FactsSite, SummaryRole } from './compaction/summary-message.js';
export type { Level } from './compaction/zones.js';

export {
  ConfigurationError,
  ConflictError,
  ContextDeclinedError,
  ContextkitError,
  ContextOverflowError,
  DuplicateMessageIdError,
  EpochConflictError,
  FormatMismatchError,
  InvalidArgumentError,
  InvalidMessageError,
  InvalidStoredMessageError,
  MessageIdConflictError,
  type MessageIssue,
  type OverflowBreakdown,
  StoreError,
} from './errors.js';
export type { CompactionReceipt, ContextEventName, ContextEvents, Listener } from './events.js';
export type { AnthropicRequestParts } from './formats/anthropic/request.js';
export type { BEDROCK_BLOCK_MEMBERS, BEDROCK_ONLY_MEMBERS } from './formats/bedrock/blocks.js';
export { anthropicToBedrock, bedrockToAnthropic } from './formats/bedrock/convert.js';
export {
  type BedrockRequest,
  type BedrockRequestOptions,
  type BedrockTool,
  usageFromBedrock,
} from './formats/bedrock/request.js';
export type { GeminiRequest } from './formats/gemini/request.js';
export type * from './formats/openai-responses/items.js';
export type { AppliedEdit } from './guard/applied-edits.js';
export {
  ContextGuard,
  type ContextGuardOptions,
  type GuardAction,
  type GuardConversation,
  type GuardDecision,
  type GuardState,
} from './guard/guard.js';
export { isContextOverflowError, type OverflowNumbers, overflowNumbers } from './guard/overflow-errors.js';
export {
  ANTHROPIC_COMPACTION_BETA,
  ANTHROPIC_CONTEXT_EDITING_BETA,
  type AnthropicContextManagement,
} from './guard/provider-compaction.js';
export type { HistoryOptions } from './history/history.js';
export { addResponse } from './integrations/providers.js';
export { ContextManager } from './manager.js';
export type {
  Calibration,
  CalibrationEntry,
  CalibrationOptions,
  CalibrationSample,
} from './measure/calibration.js';
export {
  type CountClient,
  type CountClientOptions,
  CountFailedError,
  type CountRequest,
  createCountClient,
} from './measure/count-endpoints.js';
export {
  ContextMeasurer,
  type ContextMeasurerOptions,
  type Measurement,
  type MeasureRequest,
  type ResolvedRequest,
  type SentRequest,
} from './measure/measurer.js';
export * from './memory/index.js';
export type * from './messages/bedrock-types.js';
export type {
  GeminiContent,
  GeminiContentPart,
  GeminiMessage,
  GeminiSystemMessage,
} from './messages/gemini-types.js';
export type * from './messages/responses-types.js';
export { type ToolEffect, type ToolEffectOptions, toolEffectByName } from './messages/tool-effect.js';
export type * from './messages/types.js';
export {
  type CacheComparison,
  CostMeter,
  type CostTotals,
  type MeterBlock,
  type RequestCost,
  type UsageCost,
} from './meter/cost-meter.js';
export {
  InvalidUsageError,
  type UsageCounts,
  type UsageIteration,
  type UsageSample,
  usageFromAnthropic,
  usageFromCounts,
  usageFromGemini,
  usageFromOpenAI,
  usageFromResponse,
} from './meter/usage.js';
export { type Coordinator, type MountConfig, type MountContract, mount, optionsFromConfig } from './mount.js';
export {
  type AddedMessage,
  type AddMessageOptions,
  type ContextManagerOptions,
  DEFAULTS,
  ECONOMY,
  type Economy,
  type EconomyPreset,
  type EconomySettings,
  type GuardLevels,
  type ProviderCompactionOptions,
  type ProviderInfo,
  type RequestOptions,
  type Usage,
} from './options.js';
export type { ContextPoolOptions } from './pool.js';
export { type ProviderRequests, type ToRequestOptions, toRequest } from './provider-request.js';
export * from './recall/index.js';
export { type ReportHtmlOptions, renderReportHtml } from './report/html.js';
export {
  type ReplayCompaction,
  type ReplayOptions,
  type ReplayReport,
  type ReplayTotals,
  type ReplayTurn,
  replayConversation,
} from './report/replay.js';
export type { KeptTotals } from './report/view-keeps.js';
export * from './stores/index.js';
export * from './tokens/index.js';
export * from './tools/index.js';
export type { BuiltView, SentView, ViewCounting } from './view/view.js';
export type { Atom, AtomKind, Repair, ToolResultSlot } from './wire/atoms.js';
export { type ConvertOptions, convertMessages } from './wire/convert.js';
export { validateMessage } from './wire/validate-message.js';
export {
  type RequestProblem,
  type RequestValidation,
  validateRequest,
} from './wire/validate-request.js';
