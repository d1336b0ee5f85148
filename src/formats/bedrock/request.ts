/**
 * What goes to and comes back from the Converse API (docs.aws.amazon.com/bedrock/latest/
 * APIReference/API_runtime_Converse.html, read 2026-11-26): the request body for a view, the
 * messages a reply adds, its usage, and whether an error is Bedrock saying the input is too long.
 */
import { InvalidMessageError } from '../../errors.js';
import {
  isContextOverflowError,
  type OverflowNumbers,
  overflowNumbers,
} from '../../guard/overflow-errors.js';
import type {
  BedrockContentBlock,
  BedrockConversationMessage,
  BedrockMessage,
  BedrockSystemBlock,
} from '../../messages/bedrock-types.js';
import type { Message } from '../../messages/types.js';
import { InvalidUsageError, type UsageSample, usageCount } from '../../meter/usage.js';
import { blocksOf, isRecord, memberOf, toolResultsOf, toolUsesOf } from './blocks.js';

type Rec = Record<string, unknown>;

/** A Converse `toolConfig.tools` entry. */
export type BedrockTool =
  | { toolSpec: { name: string; description?: string; inputSchema: { json: unknown } } }
  | {
      cachePoint: { type: 'default' };
    };

/** Options of `toBedrockRequest`. */
export interface BedrockRequestOptions {
  /**
   * The tools to offer: Converse tools (`{ toolSpec }`, `{ cachePoint }`) go as they are; Anthropic
   * (`{ name, input_schema }`), OpenAI (`{ type: 'function', function }`) and Gemini
   * (`{ name, parametersJsonSchema }`) definitions become `toolSpec`s.
   */
  tools?: readonly unknown[];
  /** `toolConfig.toolChoice`: `{ auto: {} }`, `{ any: {} }` or `{ tool: { name } }`. */
  toolChoice?: Rec;
  /** `inferenceConfig` (`maxTokens`, `temperature`, `topP`, `stopSequences`), sent as it is. */
  inferenceConfig?: Rec;
}

/** The body of a Converse request: `messages`, and `system` and `toolConfig` where there are any. */
export interface BedrockRequest {
  messages: BedrockConversationMessage[];
  system?: BedrockSystemBlock[];
  toolConfig?: { tools: BedrockTool[]; toolChoice?: Rec };
  inferenceConfig?: Rec;
}

const OBJECT_SCHEMA = Object.freeze({ type: 'object' });

/** One tool definition as a Converse tool (see `BedrockRequestOptions.tools`). */
export function bedrockTool(tool: unknown): BedrockTool {
  if (!isRecord(tool)) throw new InvalidMessageError([{ path: 'tools', message: 'expected tool objects' }]);
  if (isRecord(tool.toolSpec) || isRecord(tool.cachePoint)) return tool as unknown as BedrockTool;
  const fn = tool.type === 'function' && isRecord(tool.function) ? tool.function : tool;
  const name = String(fn.name ?? '');
  const schema = fn.input_schema ?? fn.parameters ?? fn.parametersJsonSchema ?? OBJECT_SCHEMA;
  const spec: Rec = { name, inputSchema: { json: schema } };
  if (typeof fn.description === 'string' && fn.description.length > 0) spec.description = fn.description;
  return { toolSpec: spec } as BedrockTool;
}

/**
 * The Converse request body for a view: system messages lifted into `system` (their cache
 * points kept where they stand), consecutive messages of one role joined into one turn (Converse
 * wants the roles to alternate; a view may put two user turns side by side where an atom between
 * them was dropped), cache points kept where they stand, and `toolConfig` with the tools given.
 * A conversation holding tool blocks needs a `toolConfig` ("The toolConfig field must be defined
 * when using toolUse and toolResult content blocks"): without `tools`, the tools its calls name
 * are declared with an open input schema.
 */
export function toBedrockRequest(
  view: readonly Message[],
  options: BedrockRequestOptions = {},
): BedrockRequest {
  const system: BedrockSystemBlock[] = [];
  const messages: BedrockConversationMessage[] = [];
  const called = new Set<string>();
  let toolBlocks = false;
  for (const raw of view as readonly BedrockMessage[]) {
    if (raw.role === 'system') {
      for (const b of raw.content) system.push(b);
      continue;
    }
    const uses = toolUsesOf(raw);
    for (const use of uses) called.add(use.name);
    if (uses.length > 0 || toolResultsOf(raw).length > 0) toolBlocks = true;
    const last = messages[messages.length - 1];
    if (last && last.role === raw.role) {
      messages[messages.length - 1] = {
        role: last.role,
        content: [...last.content, ...(raw.content as BedrockContentBlock[])],
      };
    } else messages.push(raw as BedrockConversationMessage);
  }
  const out: BedrockRequest = { messages: withinCachePointLimit(messages, system) };
  if (system.length > 0) out.system = system;
  let tools = (options.tools ?? []).map(bedrockTool);
  if (tools.length === 0 && toolBlocks)
    tools = [...called].sort().map((name) => ({ toolSpec: { name, inputSchema: { json: OBJECT_SCHEMA } } }));
  if (tools.length > 0) {
    out.toolConfig = { tools };
    if (options.toolChoice) out.toolConfig.toolChoice = options.toolChoice;
  }
  if (options.inferenceConfig) out.inferenceConfig = options.inferenceConfig;
  return out;
}

/** The most cache checkpoints Claude takes in one Converse request (system, tools and messages). */
export const MAX_CACHE_POINTS = 4;

/**
 * The messages with the earliest of their cache points left out where the request would hold
 * more than `MAX_CACHE_POINTS` (the system prompt's count first): Bedrock refuses the request
 * otherwise, and the latest points cover the longest prefixes.
 */
function withinCachePointLimit(
  messages: BedrockConversationMessage[],
  system: readonly BedrockSystemBlock[],
): BedrockConversationMessage[] {
  const isPoint = (b: unknown) => isRecord(b) && memberOf(b) === 'cachePoint';
  let total = system.filter(isPoint).length;
  for (const m of messages) total += m.content.filter(isPoint).length;
  if (total <= MAX_CACHE_POINTS) return messages;
  let excess = total - MAX_CACHE_POINTS;
  return messages.map((m) => {
    if (excess === 0 || !m.content.some(isPoint)) return m;
    const content = m.content.filter((b) => !(isPoint(b) && excess > 0 && excess-- > 0));
    return { role: m.role, content };
  });
}

/**
 * The assistant message a Converse reply adds (`output.message`), as it came: its reasoning,
 * signature included, is kept verbatim. Throws `InvalidMessageError` for a reply that is not one.
 */
export function bedrockReplyMessages(response: unknown): BedrockConversationMessage[] {
  const output = isRecord(response) ? response.output : undefined;
  const message = isRecord(output) ? output.message : undefined;
  if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) {
    throw new InvalidMessageError([
      {
        path: 'response.output.message',
        message: 'expected a Converse response with an assistant output.message and its content blocks',
      },
    ]);
  }
  return [{ role: 'assistant', content: message.content as BedrockContentBlock[] }];
}

function tokenCount(value: unknown, path: string, optional: boolean): number {
  if (value === undefined || value === null) {
    if (optional) return 0;
    throw new InvalidUsageError(path, 'expected a token count, got nothing');
  }
  return usageCount(value, path);
}

/**
 * Reads a Converse response's `usage` (TokenUsage: `inputTokens`, `outputTokens`, `totalTokens`,
 * `cacheReadInputTokens`, `cacheWriteInputTokens`). `inputTokens` leaves out what was read from
 * or written to the cache, as Claude's own API does, so the whole input is the sum of the three.
 */
export function usageFromBedrock(response: unknown): UsageSample {
  const direct = isRecord(response) && isRecord(response.usage) ? response.usage : undefined;
  const usage = direct ?? (isRecord(response) && 'inputTokens' in response ? response : undefined);
  const path = direct ? 'usage' : 'response';
  if (!usage) throw new InvalidUsageError('usage', 'expected a Converse response with usage (TokenUsage)');
  const input = tokenCount(usage.inputTokens, `${path}.inputTokens`, false);
  const read = tokenCount(usage.cacheReadInputTokens, `${path}.cacheReadInputTokens`, true);
  const write = tokenCount(usage.cacheWriteInputTokens, `${path}.cacheWriteInputTokens`, true);
  tokenCount(usage.outputTokens, `${path}.outputTokens`, true);
  tokenCount(usage.totalTokens, `${path}.totalTokens`, true);
  return {
    inputTokens: input,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    totalInputTokens: input + read + write,
  };
}

/**
 * What a Bedrock error says about the context window: undefined when `err` is not Bedrock saying
 * the input is too long (a `ValidationException` "Input is too long for requested model.", or
 * Claude's "prompt is too long: N tokens > M maximum" passed through), the numbers it gives
 * otherwise (none for the first). Reads the SDK's error (`name`, `message`) and the raw HTTP answer
 * (`x-amzn-ErrorType` header, `{"message"}` body) alike.
 */
export function bedrockOverflow(err: unknown): OverflowNumbers | undefined {
  if (!isRecord(err) && !(err instanceof Error)) return undefined;
  const e = err as Rec;
  const headers = isRecord(e.headers) ? e.headers : {};
  const type = String(e.name ?? e.__type ?? headers['x-amzn-errortype'] ?? headers['x-amzn-ErrorType'] ?? '');
  if (type !== '' && !type.startsWith('ValidationException')) return undefined;
  if (!isContextOverflowError(err)) return undefined;
  return overflowNumbers(err);
}

/** Whether a message holds blocks only Converse has (`toolUse`, `cachePoint`, …). */
export function holdsConverseBlocks(message: unknown): boolean {
  return blocksOf(message).some((b) => {
    const m = memberOf(b);
    return m !== undefined && m !== 'text';
  });
}
