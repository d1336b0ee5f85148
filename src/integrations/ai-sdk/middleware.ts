import {
  asSchema,
  type LanguageModel,
  type LanguageModelMiddleware,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import type { ToolDefinition } from '../../messages/types.js';
import { checkOptionNamesOf } from '../../option-names.js';
import type { AnyModelMessage, LanguageModelPrompt } from './model-messages.js';
import { FIT_OPTION_NAMES, type FitOptions, type FitRequest, PromptFitter } from './prompt-fitter.js';
import { StoredPromptFitter } from './stored-prompt-fitter.js';

/** Options of `contextMiddleware` and `contextPrepareStep`. */
export type ContextMiddlewareOptions = FitOptions;

/** What fits a call's prompt: the stored conversation's fitter with `store`, else the in-memory one. */
function promptFitter(options: FitOptions): {
  fit(all: readonly AnyModelMessage[], request?: FitRequest): Promise<ModelMessage[]>;
} {
  checkOptionNamesOf('contextMiddleware', options, FIT_OPTION_NAMES);
  return options.store !== undefined || options.conversationId !== undefined
    ? new StoredPromptFitter(options)
    : new PromptFitter(options);
}

type CallParams = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];

/** The function tools of a call as contextkit counts them (provider tools have no schema to count). */
function toolDefinitions(tools: CallParams['tools']): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const tool of tools ?? []) {
    if (tool.type !== 'function') continue;
    const fn: { name: string; description?: string; parameters?: unknown } = {
      name: tool.name,
      parameters: tool.inputSchema,
    };
    if (tool.description !== undefined) fn.description = tool.description;
    out.push({ type: 'function', function: fn });
  }
  return out;
}

/**
 * A language-model middleware that fits the prompt of every call to the model's window, each step
 * of a multi-step tool loop included, since the SDK calls the model once per step and every call
 * goes through `transformParams`. Nothing the SDK keeps is changed: only what this call sends.
 *
 * ```ts
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: contextMiddleware() });
 * ```
 *
 * The prompt keeps the system prompt, the latest user message and the tool exchange in progress;
 * tool calls stay with their results; older tool results are cleared, then older turns summarized
 * or dropped, as `ContextManager` plans it. Throws `ContextOverflowError` when what must be kept
 * cannot fit.
 */
export function contextMiddleware(options: ContextMiddlewareOptions = {}): LanguageModelMiddleware {
  const fitter = promptFitter(options);
  return {
    specificationVersion: 'v3',
    transformParams: async ({ params, model }) => {
      const prompt = await fitter.fit(params.prompt, {
        modelId: model.modelId,
        provider: model.provider,
        tools: toolDefinitions(params.tools),
      });
      return { ...params, prompt: prompt as unknown as LanguageModelPrompt };
    },
  };
}

/** Options of `contextPrepareStep`. */
export interface ContextPrepareStepOptions extends ContextMiddlewareOptions {
  /**
   * The tools given to `generateText` / `streamText`: the SDK does not pass them to `prepareStep`,
   * yet every step sends their definitions, so they are counted in `maxTokens` (their descriptions
   * and input schemas; provider-defined tools have none to count).
   */
  tools?: ToolSet;
}

/** A tool set's function tools as contextkit counts them. */
async function toolSetDefinitions(tools: ToolSet): Promise<ToolDefinition[]> {
  const out: ToolDefinition[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    if (tool.type !== undefined && tool.type !== 'function' && tool.type !== 'dynamic') continue;
    const fn: { name: string; description?: string; parameters?: unknown } = {
      name,
      parameters: await asSchema(tool.inputSchema).jsonSchema,
    };
    if (tool.description !== undefined) fn.description = tool.description;
    out.push({ type: 'function', function: fn });
  }
  return out;
}

/** What the SDK passes to `prepareStep` that this helper reads. */
export interface PrepareStepInput {
  messages: ModelMessage[];
  model?: LanguageModel;
}

/**
 * A `prepareStep` for `generateText` / `streamText` that fits each step's `messages` to the budget,
 * for when wrapping the model is not an option. The SDK passes neither the tools nor the system
 * prompt to `prepareStep`: give the same `tools` here to have them counted
 * (`contextPrepareStep({ maxTokens, tools })`), and leave room for a `system` prompt in `maxTokens`, or use
 * `contextMiddleware`, which sees the whole prompt. The returned messages are used for that step only.
 */
export function contextPrepareStep(
  options: ContextPrepareStepOptions = {},
): (step: PrepareStepInput) => Promise<{ messages: ModelMessage[] }> {
  const { tools, ...fitOptions } = options;
  const fitter = promptFitter(fitOptions);
  let definitions: Promise<ToolDefinition[]> | undefined;
  return async ({ messages, model }) => {
    definitions ??= tools ? toolSetDefinitions(tools) : Promise.resolve([]);
    const counted = await definitions;
    const request =
      typeof model === 'string'
        ? { modelId: model }
        : model === undefined
          ? {}
          : { modelId: model.modelId, provider: model.provider };
    return {
      messages: await fitter.fit(messages, { ...request, ...(counted.length > 0 ? { tools: counted } : {}) }),
    };
  };
}
