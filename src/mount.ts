import { ConfigurationError } from './errors.js';
import { ContextManager, type ContextManagerOptions } from './manager.js';

/** The part of an orchestrator's coordinator that `mount` uses. */
export interface Coordinator {
  mount(name: string, module: unknown, options?: { name?: string }): unknown;
}

/**
 * Mount-plan configuration: the manager's options, also accepted under the seeds' snake_case
 * names (`max_tokens`, `compact_threshold`, `preserve_system`, `storage_path`, …) so a mount plan
 * written for the Python modules works unchanged.
 */
export type MountConfig = ContextManagerOptions & {
  max_tokens?: number;
  compact_threshold?: number;
  target_usage?: number;
  preserve_system?: boolean;
  keep_tool_results?: number;
  safety_margin?: number;
  storage_path?: string;
  conversation_id?: string;
};

/** Turns a mount-plan config into manager options; a name given both ways must agree. */
export function optionsFromConfig(config: MountConfig): ContextManagerOptions {
  const pairs: Array<[keyof ContextManagerOptions, keyof MountConfig]> = [
    ['maxTokens', 'max_tokens'],
    ['compactThreshold', 'compact_threshold'],
    ['targetUsage', 'target_usage'],
    ['preserveSystem', 'preserve_system'],
    ['keepToolResults', 'keep_tool_results'],
    ['safetyMargin', 'safety_margin'],
    ['conversationId', 'conversation_id'],
  ];
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (!key.includes('_')) options[key] = value;
  }
  for (const [camel, snake] of pairs) {
    const a = config[camel];
    const b = config[snake];
    if (a !== undefined && b !== undefined && a !== b) {
      throw new ConfigurationError(
        String(snake),
        `conflicts with ${camel} (${JSON.stringify(b)} vs ${JSON.stringify(a)})`,
      );
    }
    if (b !== undefined) options[camel] = b;
  }
  if (config.storage_path !== undefined) {
    if (config.store !== undefined)
      throw new ConfigurationError('storage_path', 'give either store or storage_path');
    options.store = `file:${config.storage_path}`;
  }
  return options as ContextManagerOptions;
}

/**
 * The seed contract's entry point: builds a manager from the config, mounts it on the
 * coordinator at `"context"`, and returns it (call `close()` on it when the session ends).
 */
export async function mount(coordinator: Coordinator, config: MountConfig = {}): Promise<ContextManager> {
  const manager = new ContextManager(optionsFromConfig(config));
  await coordinator.mount('context', manager);
  return manager;
}
