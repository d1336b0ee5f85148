import type { BaseMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { ContextManager, type ContextManagerOptions } from '../../manager.js';
import type { ToolDefinition } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import { fitThrough } from '../fit-through.js';
import { fromBaseMessages, rebuild } from './base-messages.js';

/** Options of `fitMessages` / `fitBaseMessages`: the limit (or model), the tools sent, manager options. */
export interface FitMessagesOptions {
  /**
   * The context's limit: tokens of the messages (and `tools`) the model is sent (the seeds'
   * `max_tokens`; not the provider's output `max_tokens`). By default the model's window from the catalog.
   */
  maxTokens?: number;
  /** Catalog model id that decides the tokenizer and the default budget. */
  model?: string;
  /** Tool definitions the model is called with: counted in the budget. */
  tools?: readonly ToolDefinition[];
  /** Options of the manager that plans the fit (strategy, thresholds, counter…). */
  options?: Omit<ContextManagerOptions, 'store' | 'conversationId'>;
}

/**
 * Fits LangChain messages to a budget the way `ContextManager` fits a conversation: the system
 * message, the latest human message and the tool exchange in progress are kept; old tool outputs
 * are cleared first, then old turns summarized or dropped, an `AIMessage` with `tool_calls` always
 * with all its `ToolMessage`s or with none. Messages the plan leaves alone are returned as the very
 * objects given.
 */
export async function fitBaseMessages(
  messages: readonly BaseMessage[],
  options: FitMessagesOptions = {},
): Promise<BaseMessage[]> {
  checkOptionNamesOf('fitMessages', options, ['maxTokens', 'model', 'tools', 'options']);
  if (messages.length === 0) return [];
  const model = options.model ?? options.options?.model;
  const manager = new ContextManager({ ...options.options, ...(model !== undefined ? { model } : {}) });
  const proxies = fromBaseMessages(messages);
  const view = await fitThrough(manager, proxies, {
    ...(options.maxTokens !== undefined ? { tokenBudget: options.maxTokens } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
  });
  let started = false;
  return view!.map(({ message, seq }) => {
    const original = seq === undefined ? originalOf(message, messages, proxies) : messages[seq];
    const out = seq !== undefined && original ? original : rebuild(message, original, started);
    if (out.type !== 'system') started = true;
    return out;
  });
}

/** The given message a rewritten one came from, found by its tool call id. */
function originalOf(
  message: ReturnType<typeof fromBaseMessages>[number],
  messages: readonly BaseMessage[],
  proxies: ReturnType<typeof fromBaseMessages>,
): BaseMessage | undefined {
  const id =
    message.role === 'tool'
      ? message.tool_call_id
      : message.role === 'assistant'
        ? message.tool_calls?.[0]?.id
        : undefined;
  if (id === undefined) return undefined;
  const at = proxies.findIndex((p) =>
    message.role === 'tool'
      ? p.role === 'tool' && p.tool_call_id === id
      : p.role === 'assistant' && (p.tool_calls ?? []).some((c) => c.id === id),
  );
  return at >= 0 ? messages[at] : undefined;
}

/**
 * `fitBaseMessages` as a runnable step for a chain, where `trimMessages` would go:
 * `fitMessages({ model: 'gpt-4o' }).pipe(chatModel)`. Unlike `trimMessages`, it never leaves a
 * `ToolMessage` whose `AIMessage` was cut off (the API refuses such a request).
 */
export function fitMessages(options: FitMessagesOptions = {}): RunnableLambda<BaseMessage[], BaseMessage[]> {
  return RunnableLambda.from((messages: BaseMessage[]) => fitBaseMessages(messages, options));
}
