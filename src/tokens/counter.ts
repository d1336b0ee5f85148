/**
 * The token counter: what one message, a set of tool definitions and a whole request cost with
 * a provider, counting everything the provider bills: framing, text, tool calls and their JSON
 * arguments, tool results, thinking, images (by dimensions) and documents (by pages).
 */
import { ConfigurationError } from '../errors.js';
import { WIRE_FORMATS } from '../formats/registry.js';
import type { BlockCounting, WireFormat } from '../formats/wire-format.js';
import type { ResponsesContentPart, ResponsesOtherItem } from '../messages/responses-types.js';
import type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  Message,
  MessageFormat,
  OpenAIContentPart,
  ToolDefinition,
} from '../messages/types.js';
import { getTextTokenCounter, type TextTokenCounter } from './encodings.js';
import {
  flatImageCost,
  type ImageDetail,
  imageInfoFromBase64,
  imageInfoFromUrl,
  imageTokens,
  parseDataUrl,
  pdfTokens,
} from './images.js';
import type { ModelInfo, ProviderFamily, TokenCounter, TokenizerSpec } from './types.js';

/**
 * Fixed tokens a provider adds around what it is sent. Only OpenAI documents these (the
 * cookbook's "How to count tokens with tiktoken"); the Anthropic and Gemini figures are ours,
 * chosen from how their chat templates mark turns, and kept small: the estimate factor already
 * carries the uncertainty, and calibration from reported usage corrects the rest.
 */
export interface Framing {
  /** Every message: start/end-of-turn markers. */
  readonly perMessage: number;
  /** A system message (a top-level parameter for Anthropic and Gemini, so no turn markers). */
  readonly perSystemMessage: number;
  /** Whether the role name is itself tokenized (OpenAI's `<|im_start|>user`). */
  readonly countsRole: boolean;
  /** A `name` field on a message (OpenAI: the name replaces the role, costing one extra). */
  readonly perName: number;
  /** One tool call (`tool_calls[i]` or a `tool_use` block) beyond its name and arguments. */
  readonly perToolCall: number;
  /** One `tool_result` block beyond its content (OpenAI tool results are whole messages). */
  readonly perToolResult: number;
  /** Every request: reply priming (`<|im_start|>assistant`, `\n\nAssistant:`). */
  readonly perRequest: number;
  /** Any request with tools: the provider's tool-use preamble. */
  readonly toolsPreamble: number;
  /** Each tool definition beyond its JSON. */
  readonly perTool: number;
}

/** The framing each provider's counter uses; see {@link Framing} for where the numbers come from. */
export const PROVIDER_FRAMING: Readonly<Record<ProviderFamily, Framing>> = Object.freeze({
  openai: Object.freeze({
    // Cookbook: 3 per message, role and content tokenized, +1 for a name, 3 to prime the reply.
    perMessage: 3,
    perSystemMessage: 3,
    countsRole: true,
    perName: 1,
    // Tool calls and definitions are not in the cookbook; these are the overheads gpt-tokenizer
    // measured for function calls (3 per call) and the functions block (9), which tools inherit.
    perToolCall: 3,
    perToolResult: 0,
    perRequest: 3,
    toolsPreamble: 9,
    perTool: 0,
  }),
  anthropic: Object.freeze({
    // "\n\nHuman:" / "\n\nAssistant:" around each turn; the system prompt has no turn marker.
    perMessage: 3,
    perSystemMessage: 0,
    countsRole: false,
    perName: 0,
    // The block's id and type wrapper.
    perToolCall: 3,
    perToolResult: 3,
    perRequest: 3,
    // Anthropic documents the tool-use system prompt it adds whenever `tools` is non-empty:
    // 346 tokens for tool_choice auto/none (313 for any/tool) on Claude 4.x and Sonnet 3.7. We
    // cannot see tool_choice, so we take the larger.
    toolsPreamble: 346,
    perTool: 0,
  }),
  google: Object.freeze({
    // "<start_of_turn>user\n" … "<end_of_turn>\n"; system_instruction is a separate field.
    perMessage: 3,
    perSystemMessage: 0,
    countsRole: false,
    perName: 0,
    perToolCall: 3,
    perToolResult: 3,
    perRequest: 3,
    toolsPreamble: 0,
    perTool: 3,
  }),
});

/**
 * OpenAI bills audio input by duration; the audio models' documentation puts user audio at
 * about one token per 100 ms.
 */
const AUDIO_TOKENS_PER_SECOND = 10;
/** Compressed audio whose header we do not parse is assumed to be 128 kbit/s. */
const COMPRESSED_AUDIO_BYTES_PER_SECOND = 16_000;

/** Redacted thinking is encrypted: we can only scale by its size (≈4 decoded bytes per token). */
const REDACTED_THINKING_BYTES_PER_TOKEN = 4;

type BlockTokens = NonNullable<WireFormat['blockTokens']>;
type MessageTokens = NonNullable<WireFormat['messageTokens']>;

/** What the formats count that the shared walk does not know: blocks keyed by member, Gemini's parts. */
let formatCounting: { blocks: readonly BlockTokens[]; messages: readonly MessageTokens[] } | undefined;

/** The formats' own counting, gathered once (not at module load: the registry may still be loading). */
function formatCounters(): { blocks: readonly BlockTokens[]; messages: readonly MessageTokens[] } {
  formatCounting ??= {
    blocks: WIRE_FORMATS.flatMap((f) => (f.blockTokens ? [f.blockTokens.bind(f)] : [])),
    messages: WIRE_FORMATS.flatMap((f) => (f.messageTokens ? [f.messageTokens.bind(f)] : [])),
  };
  return formatCounting;
}

/** What a counter needs to know about a model: who bills it and how its text is tokenized. */
export interface CounterTarget {
  provider: ProviderFamily;
  tokenizer: TokenizerSpec;
}

type Part = OpenAIContentPart | AnthropicContentBlock | ResponsesContentPart;

/** Fields an estimate leaves out: ids, states and marks the model does not read as text. */
const SKIPPED_FIELDS = new Set(['type', 'id', 'status', 'cache_control', 'citations', 'annotations']);
type Content = string | readonly Part[] | null | undefined;

/** Multiplies a BPE count by an estimate factor, rounding up; exact counters pass factor 1. */
function scale(bpe: number, factor: number): number {
  // The epsilon keeps 10 × 1.2 = 12.000000000000002 from rounding up to 13.
  return factor === 1 ? bpe : Math.ceil(bpe * factor - 1e-9);
}

/** Decoded size of base64 text without decoding it. */
function base64Bytes(data: string): number {
  let padding = 0;
  if (data.endsWith('==')) padding = 2;
  else if (data.endsWith('=')) padding = 1;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * Seconds of audio: WAV from its header (byte rate), anything else from its size at the
 * assumed bitrate. Audio is billed by duration, and for audio the size is a fair proxy for it.
 */
function audioSeconds(data: string, format: string): number {
  const bytes = base64Bytes(data);
  if (format.toLowerCase() === 'wav') {
    const header = Buffer.from(data.slice(0, 64), 'base64');
    if (header.length >= 32 && header.toString('latin1', 0, 4) === 'RIFF') {
      const byteRate = header.readUInt32LE(28);
      if (byteRate > 0) return Math.max(0, bytes - 44) / byteRate;
    }
  }
  return bytes / COMPRESSED_AUDIO_BYTES_PER_SECOND;
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** The part of a tool definition the provider shows the model, without client-only keys. */
function toolDefinitionText(tool: ToolDefinition): string {
  const fn: unknown = Reflect.get(tool, 'function');
  const body = typeof fn === 'object' && fn !== null ? fn : tool;
  try {
    return JSON.stringify(body, (key, value: unknown) => (key === 'cache_control' ? undefined : value)) ?? '';
  } catch {
    return '';
  }
}

/** Texts up to this long are counted through the counter's cache of shapes. */
const SHORT_TEXT_CHARS = 160;
/** Shapes the cache holds before it starts over (a few hundred KB at most). */
const SHORT_TEXT_CACHE = 4096;

/**
 * A text with every ASCII digit made `0`: texts of one shape have the same count in o200k_base
 * and cl100k_base. Both encodings' pre-tokenizers cut every run of digits into pieces of one to
 * three digits that no neighbouring character joins, and every such piece (`7`, `07`, `907`) is a
 * single token in both vocabularies (counter.test.ts checks all 1,110 of them).
 */
export function digitShape(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57 && c !== 48) return text.replace(/[1-9]/g, '0');
  }
  return text;
}

function checkTarget(target: CounterTarget): void {
  const { provider, tokenizer } = target;
  if (provider !== 'openai' && provider !== 'anthropic' && provider !== 'google') {
    throw new ConfigurationError(
      'provider',
      `expected "openai", "anthropic" or "google", got ${JSON.stringify(provider)}`,
    );
  }
  if (tokenizer.encoding !== 'o200k_base' && tokenizer.encoding !== 'cl100k_base') {
    throw new ConfigurationError(
      'tokenizer.encoding',
      `expected "o200k_base" or "cl100k_base", got ${JSON.stringify(tokenizer.encoding)}`,
    );
  }
  if (tokenizer.kind === 'estimate' && !(Number.isFinite(tokenizer.factor) && tokenizer.factor > 0)) {
    throw new ConfigurationError(
      'tokenizer.factor',
      'expected a positive number (BPE tokens are multiplied by it)',
    );
  }
}

const NON_ASCII = /[^\x00-\x7f]/;

/** UTF-8 bytes of `text` (a surrogate pair is 4: 2 for each half), without encoding it. */
export function utf8Bytes(text: string): number {
  // Most text is ASCII: one regular-expression scan (native, ~10x a loop) tells.
  if (!NON_ASCII.test(text)) return text.length;
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) n += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return n;
}

/** What a counter may be told beyond its model. */
export interface TokenCounterOptions {
  /**
   * The tokens a compaction item's `encrypted_content` renders as, where the API reported them to
   * this counter's owner (a manager's `CompactionNotes`); undefined counts the item by its size.
   */
  compactionTokens?: (encryptedContent: string) => number | undefined;
}

/**
 * A counter for one model (or one provider + tokenizer). Exact for OpenAI models (their own BPE
 * encoding, the cookbook's framing); an estimate for Claude and Gemini (a BPE count times the
 * tokenizer's factor, rounded up per message), labelled `exact: false`. Image and document costs
 * follow each provider's documented formulas and are not scaled. The encoding is loaded on the
 * first count, not here, so building a counter is free.
 *
 * Counting is pure and deterministic. The manager memoizes per stored message under the counter's
 * `id`, which differs whenever counts can; the counter itself only remembers short texts by their
 * shape (see `digitShape`), so a plan that writes a thousand placeholders tokenizes a handful.
 */
export function createTokenCounter(
  info: ModelInfo | CounterTarget,
  options: TokenCounterOptions = {},
): TokenCounter {
  checkTarget(info);
  const compactionTokens = options.compactionTokens ?? (() => undefined);
  const { provider, tokenizer } = info;
  const factor = tokenizer.kind === 'estimate' ? tokenizer.factor : 1;
  const framing = PROVIDER_FRAMING[provider];
  const id =
    tokenizer.kind === 'estimate'
      ? `${provider}:${tokenizer.encoding}*${factor}`
      : `${provider}:${tokenizer.encoding}`;

  let encoder: TextTokenCounter | undefined;
  const shortTexts = new Map<string, number>();
  // While `boundMessage` runs, text is counted by its UTF-8 bytes: never fewer than its BPE tokens
  // (every token stands for at least one byte), and linear without the tokenizer.
  let bounding = false;
  const bpe = (text: string): number => {
    if (bounding) return utf8Bytes(text);
    encoder ??= getTextTokenCounter(tokenizer.encoding);
    if (text.length > SHORT_TEXT_CHARS) return encoder(text);
    // Short texts recur with only their numbers changed (placeholders, fact lines, "step 12 of
    // 40"): counted once per shape. Exact, see `digitShape`.
    const key = digitShape(text);
    let n = shortTexts.get(key);
    if (n === undefined) {
      n = encoder(text);
      if (shortTexts.size >= SHORT_TEXT_CACHE) shortTexts.clear();
      shortTexts.set(key, n);
    }
    return n;
  };
  const roleTokens: Record<string, number> = Object.create(null);

  // Tokens of the message being counted that are not text (framing, media): the factor does not
  // apply to them. Counting is synchronous and never re-entered, so one accumulator suffices and
  // the walk allocates nothing per part.
  let fixed = 0;
  const flatLow = flatImageCost(provider, 'low');

  // What the formats count their own blocks and parts with (a Converse block, keyed by its member).
  const { blocks: blockCounters, messages: messageCounters } = formatCounters();
  const lend: BlockCounting = {
    provider,
    bpe,
    fixed: (n) => {
      fixed += n;
    },
    image: (data) => imageTokens(provider, data === undefined ? undefined : imageInfoFromBase64(data)),
    pdf: (data) => pdfTokens(provider, data),
    encrypted: (data) => Math.ceil(base64Bytes(data) / REDACTED_THINKING_BYTES_PER_TOKEN),
    fields: (value) => estimateFields(value),
    perToolCall: framing.perToolCall,
    perToolResult: framing.perToolResult,
  };

  function imageUrlTokens(url: string, detail: ImageDetail | undefined): number {
    // Low detail is flat for OpenAI: no need to read the header.
    if (flatLow && detail === 'low') return imageTokens(provider, undefined, 'low');
    return imageTokens(provider, imageInfoFromUrl(url), detail);
  }

  function fileDataTokens(fileData: string): number {
    const parsed = parseDataUrl(fileData);
    if (parsed === undefined) return pdfTokens(provider, fileData);
    if (!parsed.base64) return pdfTokens(provider, undefined);
    return pdfTokens(provider, fileData.slice(parsed.dataStart));
  }

  function documentTokens(block: AnthropicDocumentBlock): number {
    let text = 0;
    if (typeof block.title === 'string') text += bpe(block.title);
    if (typeof block.context === 'string') text += bpe(block.context);
    const source = block.source;
    switch (source.type) {
      case 'base64':
        fixed += pdfTokens(provider, source.data);
        break;
      case 'text':
        text += bpe(source.data);
        break;
      case 'content':
        text += contentTokens(source.content);
        break;
      default:
        // url and file: the pages are out of sight, so one page's worth.
        fixed += pdfTokens(provider, undefined);
    }
    return text;
  }

  /** BPE tokens of one part; adds its non-text cost to `fixed`. */
  function partTokens(part: Part): number {
    switch (part.type) {
      case 'text':
        return typeof part.text === 'string' ? bpe(part.text) : 0;
      case 'refusal':
        return typeof part.refusal === 'string' ? bpe(part.refusal) : 0;
      case 'input_text':
      case 'output_text':
        return typeof part.text === 'string' ? bpe(part.text) : 0;
      case 'input_image':
        fixed +=
          typeof part.image_url === 'string'
            ? imageUrlTokens(part.image_url, part.detail as ImageDetail | undefined)
            : imageTokens(provider, undefined);
        return 0;
      case 'input_file':
        fixed +=
          typeof part.file_data === 'string'
            ? fileDataTokens(part.file_data)
            : pdfTokens(provider, undefined);
        return typeof part.filename === 'string' ? bpe(part.filename) : 0;
      case 'thinking':
        return typeof part.thinking === 'string' ? bpe(part.thinking) : 0;
      case 'redacted_thinking':
        fixed += Math.ceil(base64Bytes(part.data ?? '') / REDACTED_THINKING_BYTES_PER_TOKEN);
        return 0;
      case 'image_url':
        fixed += imageUrlTokens(part.image_url.url, part.image_url.detail);
        return 0;
      case 'image': {
        const source = part.source;
        const dims =
          source.type === 'base64' ? imageInfoFromBase64(source.data, source.media_type) : undefined;
        fixed += imageTokens(provider, dims);
        return 0;
      }
      case 'input_audio':
        fixed += Math.ceil(
          audioSeconds(part.input_audio.data ?? '', part.input_audio.format ?? '') * AUDIO_TOKENS_PER_SECOND,
        );
        return 0;
      case 'file': {
        const { file_data: fileData, filename } = part.file;
        fixed += typeof fileData === 'string' ? fileDataTokens(fileData) : pdfTokens(provider, undefined);
        return typeof filename === 'string' ? bpe(filename) : 0;
      }
      case 'document':
        return documentTokens(part);
      case 'tool_use':
        fixed += framing.perToolCall;
        return bpe(part.name ?? '') + bpe(jsonText(part.input ?? {}));
      case 'tool_result':
        fixed += framing.perToolResult;
        return contentTokens(part.content);
      case 'server_tool_use':
      case 'mcp_tool_use':
        fixed += framing.perToolCall;
        return bpe(part.name ?? '') + bpe(jsonText(part.input ?? {})) + bpe(part.server_name ?? '');
      case 'mcp_tool_result':
        fixed += framing.perToolResult;
        return typeof part.content === 'string' || Array.isArray(part.content)
          ? contentTokens(part.content as Content)
          : 0;
      case 'search_result':
        return bpe(part.source ?? '') + bpe(part.title ?? '') + contentTokens(part.content);
      default:
        for (const count of blockCounters) {
          const n = count(part as unknown as Record<string, unknown>, lend);
          if (n !== undefined) return n;
        }
        // Server-tool results (search hits, stdout, fetched pages) and blocks a newer API adds:
        // an estimate from their fields (Messages API: their content is billed as input).
        if ('tool_use_id' in part) fixed += framing.perToolResult;
        return estimateFields(part);
    }
  }

  /** BPE of every string a block holds; encrypted fields are scaled by their size instead. */
  function estimateFields(value: unknown, key = ''): number {
    if (typeof value === 'string') {
      if (key.startsWith('encrypted_')) {
        fixed += Math.ceil(base64Bytes(value) / REDACTED_THINKING_BYTES_PER_TOKEN);
        return 0;
      }
      return bpe(value);
    }
    if (typeof value === 'number' || typeof value === 'boolean') return key === '' ? 0 : 1;
    if (typeof value !== 'object' || value === null) return 0;
    let text = 0;
    if (Array.isArray(value)) {
      for (const item of value) text += estimateFields(item, key);
      return text;
    }
    for (const [k, v] of Object.entries(value)) {
      if (SKIPPED_FIELDS.has(k)) continue;
      text += estimateFields(v, k);
    }
    return text;
  }

  function contentTokens(content: Content): number {
    if (typeof content === 'string') return bpe(content);
    if (content === null || content === undefined) return 0;
    let text = 0;
    for (const part of content) {
      if (typeof part === 'object' && part !== null) text += partTokens(part);
    }
    return text;
  }

  function countMessage(message: Message, _format: MessageFormat): number {
    // The walk is driven by the message's own shape (the two formats' part types are disjoint),
    // and the framing by the provider that bills it, so `format` does not change the count: an
    // OpenAI-format conversation sent to Claude through a gateway is billed as Claude bills.
    fixed = 0;
    let text = 0;
    const role = message.role;
    if (role === undefined) return itemTokens(message as ResponsesOtherItem);
    fixed += role === 'system' || role === 'developer' ? framing.perSystemMessage : framing.perMessage;
    if (framing.countsRole) {
      let r = roleTokens[role];
      if (r === undefined) {
        r = bpe(role);
        // Only the exact count is kept (a bound made while bounding is not one).
        if (!bounding) roleTokens[role] = r;
      }
      text += r;
    }
    if ('name' in message && typeof message.name === 'string' && message.name.length > 0) {
      text += bpe(message.name);
      fixed += framing.perName;
    }
    text += contentTokens(message.content as Content);
    for (const count of messageCounters) text += count(message as unknown as Record<string, unknown>, lend);
    if (message.role === 'assistant') {
      if ('tool_calls' in message && Array.isArray(message.tool_calls)) {
        for (const call of message.tool_calls) {
          fixed += framing.perToolCall;
          const fn = call.function;
          if (fn !== undefined && fn !== null) {
            if (typeof fn.name === 'string') text += bpe(fn.name);
            if (typeof fn.arguments === 'string') text += bpe(fn.arguments);
          }
        }
      }
      if ('refusal' in message && typeof message.refusal === 'string') text += bpe(message.refusal);
    }
    const total = fixed + scale(text, factor);
    fixed = 0;
    return total;
  }

  /**
   * A Responses API item without a role (a call, an output, reasoning, a hosted tool call):
   * framed like a message, its text tokenized exactly; encrypted reasoning scaled by its size.
   */
  function itemTokens(item: ResponsesOtherItem): number {
    fixed = framing.perMessage;
    let text = 0;
    switch (item.type) {
      case 'function_call':
        fixed += framing.perToolCall;
        text += bpe(String(item.name ?? '')) + bpe(String(item.arguments ?? ''));
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output':
        fixed += framing.perToolResult;
        text += typeof item.output === 'string' ? bpe(item.output) : contentTokens(item.output as Content);
        break;
      case 'compaction': {
        // Ciphertext: what the API reported for the call that wrote it, not its length.
        const noted =
          typeof item.encrypted_content === 'string' ? compactionTokens(item.encrypted_content) : undefined;
        if (noted === undefined) text += estimateFields(item);
        else fixed += noted;
        break;
      }
      case 'reasoning':
        // Summaries are text; the encrypted reasoning only has a size.
        text += estimateFields(item.summary);
        if (typeof item.encrypted_content === 'string')
          estimateFields(item.encrypted_content, 'encrypted_content');
        break;
      default:
        text += estimateFields(item);
    }
    const total = fixed + scale(text, factor);
    fixed = 0;
    return total;
  }

  function countTools(tools: readonly ToolDefinition[] | undefined): number {
    if (tools === undefined || tools.length === 0) return 0;
    let text = 0;
    for (const tool of tools) text += bpe(toolDefinitionText(tool));
    return framing.toolsPreamble + framing.perTool * tools.length + scale(text, factor);
  }

  const counter: TokenCounter = {
    id,
    exact: tokenizer.kind === 'exact',
    provider,
    requestOverhead: framing.perRequest,
    countText: (text: string): number => scale(bpe(text), factor),
    countMessage,
    boundMessage(message: Message, format: MessageFormat): number {
      bounding = true;
      try {
        return countMessage(message, format);
      } finally {
        bounding = false;
        fixed = 0;
      }
    },
    countTools,
    async measure(messages, options) {
      const format: MessageFormat = options?.format ?? 'openai';
      let total = framing.perRequest + countTools(options?.tools);
      for (const message of messages) total += countMessage(message, format);
      return total;
    },
  };
  return Object.freeze(counter);
}
