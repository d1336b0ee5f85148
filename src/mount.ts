import type { StrategyOption } from './compaction/strategy.js';
import { ConfigurationError } from './errors.js';
import { ContextManager, type ContextManagerOptions } from './manager.js';

/**
 * The part of an orchestrator's coordinator that `mount` uses: contract v2.1's
 * `mount(mountPoint, module, { name })`, or the older `mount(name, module)`.
 */
export interface Coordinator {
  mount(mountPoint: string, module: unknown, options?: { name?: string }): unknown;
}

/**
 * Mount-plan configuration: the manager's options, also accepted under the seeds' snake_case
 * names (`max_tokens`, `compaction_threshold`, `auto_compact`, `storage_path`, …) so a mount plan
 * written for the Python modules works unchanged. A snake_case name that is not one of them is
 * refused with `ConfigurationError`, never dropped.
 */
export type MountConfig = ContextManagerOptions & {
  max_tokens?: number;
  /** Contract v2.1's name. */
  compaction_threshold?: number;
  /** The guide's name for the same threshold. */
  compact_threshold?: number;
  target_usage?: number;
  summary_share?: number;
  preserve_system?: boolean;
  keep_tool_results?: number;
  safety_margin?: number;
  conversation_id?: string;
  auto_compact?: boolean;
  /** `truncate`, `summarize`, `smart`, `layered`, or the context-persistent names `simple` (= truncate). */
  compaction_strategy?: string;
  recent_count?: number;
  exact_count_at?: number;
  max_compact_retries?: number;
  critical_floor?: number;
  compaction_notice?: boolean;
  /** context-simple's name for `keepToolResults`. */
  protected_tool_results?: number;
  /** context-simple's name for `compactionNotice`. */
  compaction_notice_enabled?: boolean;
  /**
   * Keys of the reference modules contextkit has no direct option for: accepted, and each raises
   * a `context:warn` (`config_not_applied`) saying what contextkit does instead and the nearest option.
   */
  protected_recent?: unknown;
  truncate_chars?: unknown;
  memory_files?: unknown;
  transcript_path?: unknown;
  compaction_notice_token_reserve?: unknown;
  compaction_notice_verbosity?: unknown;
  compaction_notice_min_level?: unknown;
  output_reserve_fraction?: unknown;
  max_tool_result_bytes?: unknown;
  token_meter?: unknown;
  truncate_boundary?: unknown;
  warn_at?: number;
  decline_at?: number;
  jump_escalation?: number;
  /** context-persistent: a directory for the file store. */
  storage_path?: string;
  /** The guide's `persistence` dict: `{ storage_path }` or `{ store }`. */
  persistence?: { storage_path?: string; store?: string };
  /**
   * context-persistent's "save a pre-compaction snapshot": contextkit never rewrites stored
   * history, so every message is always in the store; accepted and satisfied as it is.
   */
  export_on_compact?: boolean;
};

/** snake_case names read as the camelCase option of the same meaning. */
const RENAMED: Record<string, keyof ContextManagerOptions> = {
  max_tokens: 'maxTokens',
  compaction_threshold: 'compactThreshold',
  compact_threshold: 'compactThreshold',
  target_usage: 'targetUsage',
  summary_share: 'summaryShare',
  preserve_system: 'preserveSystem',
  keep_tool_results: 'keepToolResults',
  safety_margin: 'safetyMargin',
  conversation_id: 'conversationId',
  auto_compact: 'autoCompact',
  recent_count: 'recentCount',
  exact_count_at: 'exactCountAt',
  max_compact_retries: 'maxCompactRetries',
  critical_floor: 'criticalFloor',
  compaction_notice: 'compactionNotice',
  protected_tool_results: 'keepToolResults',
  compaction_notice_enabled: 'compactionNotice',
};
/** The reference modules' keys with no option of the same meaning: what contextkit does instead. */
const NOT_APPLIED: Record<string, string> = {
  protected_recent:
    'the latest user turn and the tool exchange in progress are always kept, and compaction keeps the newest messages that fit the target; the nearest options are targetUsage and, for the layered strategy, recentCount',
  truncate_chars:
    'a text too large for the window is cut by tokens, head and tail kept, only when it could never fit; the nearest option is keepToolResults (older tool results are cleared first)',
  memory_files:
    'contextkit reads no files into the context: add their text as a system message or with addMessage(message, { pinned: true }), which compaction never touches',
  transcript_path:
    'the whole history is always in the store, never rewritten; the nearest option is store (`file:DIR`, or storage_path), and `contextkit conversations export` writes a transcript',
  compaction_notice_token_reserve:
    'the compaction notice is counted exactly and its room kept inside the budget, whatever its length; nothing to reserve by hand',
  compaction_notice_verbosity:
    'the notice is one line saying what left the view and how to recall it; the nearest option is compactionNotice (on or off)',
  compaction_notice_min_level:
    'every compaction that changes the view may carry the notice; the nearest option is compactionNotice (on or off)',
  output_reserve_fraction:
    "the budget keeps the model's whole output limit aside (window − max output − safetyMargin); to send more, give tokenBudget per request or a larger maxTokens",
  max_tool_result_bytes:
    'a tool result is stored whole, never clipped on the way in; in the view it is shortened by tokens (head and tail kept) only when it could never fit, and cleared results keep their facts',
  token_meter:
    'reported usage always calibrates the counts (recordUsage, add*Response), on top of the exact or estimated tokenizer: there is no estimate-only mode',
  truncate_boundary:
    'older tool results are cleared (with their facts kept) from the oldest on, never the newest keepToolResults; the nearest option is keepToolResults',
};
const GUARD_RENAMED: Record<string, 'warnAt' | 'declineAt' | 'jumpEscalation'> = {
  warn_at: 'warnAt',
  decline_at: 'declineAt',
  jump_escalation: 'jumpEscalation',
};
/** The seeds' strategy names beside ours; `custom` needs a function, which a config cannot hold. */
const SEED_STRATEGIES: Record<string, StrategyOption> = {
  truncate: 'truncate',
  summarize: 'summarize',
  smart: 'smart',
  layered: 'layered',
  simple: 'truncate',
};
const HANDLED = new Set([
  'compaction_strategy',
  'storage_path',
  'persistence',
  'export_on_compact',
  ...Object.keys(NOT_APPLIED),
]);

/** A reference module's key read but not applied, and why (see {@link MountConfig}). */
export interface ConfigNote {
  key: string;
  message: string;
}

/** The keys of a mount-plan config contextkit accepts but does not apply, each with why. */
export function configNotes(config: MountConfig): ConfigNote[] {
  return Object.keys(NOT_APPLIED)
    .filter((key) => (config as Record<string, unknown>)[key] !== undefined)
    .map((key) => ({ key, message: `${key} is not applied: ${NOT_APPLIED[key]}` }));
}

/** Turns a mount-plan config into manager options; a name given both ways must agree. */
export function optionsFromConfig(config: MountConfig): ContextManagerOptions {
  if (typeof config !== 'object' || config === null) {
    throw new ConfigurationError('config', 'expected an object');
  }
  const options: Record<string, unknown> = {};
  const set = (name: string, key: string, value: unknown, into: Record<string, unknown> = options) => {
    if (value === undefined) return;
    if (into[key] !== undefined && into[key] !== value) {
      throw new ConfigurationError(
        name,
        `conflicts with ${key} (${JSON.stringify(value)} vs ${JSON.stringify(into[key])})`,
      );
    }
    into[key] = value;
  };
  const guard: Record<string, unknown> = { ...(config.guard ?? {}) };
  for (const [key, value] of Object.entries(config)) {
    if (!key.includes('_') && !HANDLED.has(key)) set(key, key, value);
  }
  for (const [key, value] of Object.entries(config)) {
    if (!key.includes('_')) continue;
    if (key in RENAMED) set(key, RENAMED[key]!, value);
    else if (key in GUARD_RENAMED) set(key, GUARD_RENAMED[key]!, value, guard);
    else if (!HANDLED.has(key)) {
      throw new ConfigurationError(
        key,
        `is not an option; the seeds' names read here are ${[...Object.keys(RENAMED), ...Object.keys(GUARD_RENAMED), ...HANDLED].join(', ')}`,
      );
    }
  }
  if (Object.keys(guard).length > 0) options.guard = guard;
  if (config.compaction_strategy !== undefined) {
    const strategy = SEED_STRATEGIES[config.compaction_strategy];
    if (strategy === undefined) {
      throw new ConfigurationError(
        'compaction_strategy',
        `${JSON.stringify(config.compaction_strategy)} is not one of ${Object.keys(SEED_STRATEGIES).join(', ')}` +
          (config.compaction_strategy === 'custom'
            ? ' (a custom strategy is a function: pass it as `strategy`)'
            : ''),
      );
    }
    set('compaction_strategy', 'strategy', strategy);
  }
  if (config.export_on_compact !== undefined && typeof config.export_on_compact !== 'boolean') {
    throw new ConfigurationError('export_on_compact', 'expected true or false');
  }
  const persistence = config.persistence;
  if (persistence !== undefined) {
    if (typeof persistence !== 'object' || persistence === null) {
      throw new ConfigurationError('persistence', 'expected { storage_path } or { store }');
    }
    for (const key of Object.keys(persistence)) {
      if (key !== 'storage_path' && key !== 'store') {
        throw new ConfigurationError(`persistence.${key}`, 'is not an option; use storage_path or store');
      }
    }
  }
  const path = config.storage_path ?? persistence?.storage_path;
  const stores = [config.store, persistence?.store, path].filter((s) => s !== undefined);
  if (stores.length > 1)
    throw new ConfigurationError('storage_path', 'give one of store, storage_path, persistence');
  if (path !== undefined) options.store = `file:${path}`;
  else if (persistence?.store !== undefined) options.store = persistence.store;
  return options as ContextManagerOptions;
}

/** Which form of `coordinator.mount` to call; see {@link mount}. */
export type MountContract = '2.1' | 'legacy';

/**
 * The seed contract's entry point: builds a manager from the config and mounts it. A coordinator
 * whose `mount` takes the three parameters of contract v2.1 gets
 * `coordinator.mount('session', manager, { name: 'context' })`; one written for the older contract,
 * `mount(name, module)`, gets `coordinator.mount('context', manager)`. `options.contract` says
 * which, where a coordinator's `mount` hides its parameters (`(...args)`, defaults). Returns the
 * manager (call `close()` on it when the session ends). Keys of the reference modules with no
 * option here (`protected_recent`, `truncate_chars`, `memory_files`, `transcript_path`) are accepted
 * and each raises a `context:warn` (`config_not_applied`), held for the first listener.
 */
export async function mount(
  coordinator: Coordinator,
  config: MountConfig = {},
  options: { contract?: MountContract } = {},
): Promise<ContextManager> {
  if (typeof coordinator?.mount !== 'function') {
    throw new ConfigurationError(
      'coordinator',
      'expected an object with a mount(mountPoint, module, options) method',
    );
  }
  const contract = options.contract ?? (coordinator.mount.length >= 3 ? '2.1' : 'legacy');
  if (contract !== '2.1' && contract !== 'legacy') {
    throw new ConfigurationError('contract', `${JSON.stringify(contract)} is not one of "2.1", "legacy"`);
  }
  const manager = new ContextManager(optionsFromConfig(config));
  // Raised before the caller can subscribe: held for the first `context:warn` listener.
  for (const note of configNotes(config)) {
    manager.measurer.events.hold('context:warn', { code: 'config_not_applied', message: note.message });
  }
  if (contract === '2.1') await coordinator.mount('session', manager, { name: 'context' });
  else await coordinator.mount('context', manager);
  return manager;
}
