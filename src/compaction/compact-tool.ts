/**
 * `compact` as a tool the model can call when it finishes a subtask: its definition in each
 * provider's shape, reading a call, and the receipt the model reads as the result. The manager
 * plans the compaction when the call is handled (`ContextManager.handleToolCall`,
 * `requestCompaction`), so the receipt is real; the new plan applies from the next request on.
 */
import type { CompactionReceipt } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import { readToolCall } from '../messages/tool-call.js';
import type { MessageFormat, ToolDefinition } from '../messages/types.js';

/** The tool's name. */
export const COMPACT_TOOL_NAME = 'compact';

/** What the tool does, for the model. */
export const COMPACT_TOOL_DESCRIPTION =
  'Compact the conversation now: older turns are summarized (their key facts kept) so that the ' +
  'next requests have more room. Call it when you finish a subtask and the details of earlier ' +
  'steps are no longer needed. Nothing is lost: the full history stays searchable. Takes effect ' +
  'from your next turn; the result says what was summarized.';

/** The JSON Schema of the tool's arguments. */
export const COMPACT_TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    focus: {
      type: 'string',
      description:
        'Optional: what the summary must keep, e.g. "the open questions and the file paths changed".',
    },
  },
  additionalProperties: false,
} as const;

/** The arguments as the model gives them. */
export interface CompactToolInput {
  focus?: string | null;
}

/** Most characters of `focus` passed on to the summarizer. */
export const MAX_FOCUS_CHARS = 500;

const DEFINITIONS = new Map<MessageFormat, ToolDefinition>();

/** The tool definition in `format` (one object per format). */
export function compactToolDefinition(format: MessageFormat): ToolDefinition {
  let definition = DEFINITIONS.get(format);
  if (definition === undefined) {
    definition = wireFormat(format).functionTool(
      COMPACT_TOOL_NAME,
      COMPACT_TOOL_DESCRIPTION,
      COMPACT_TOOL_PARAMETERS,
    );
    DEFINITIONS.set(format, definition);
  }
  return definition;
}

/** The tool as an OpenAI Chat Completions function tool. */
export const openAICompactTool: ToolDefinition = compactToolDefinition('openai');
/** The tool as an OpenAI Responses function tool. */
export const responsesCompactTool: ToolDefinition = compactToolDefinition('openai-responses');
/** The tool as an Anthropic Messages tool. */
export const anthropicCompactTool: ToolDefinition = compactToolDefinition('anthropic');
/** The tool as a Gemini function declaration. */
export const geminiCompactTool: ToolDefinition = compactToolDefinition('gemini');
/** The tool as an AWS Bedrock Converse tool (`toolConfig: { tools: [bedrockCompactTool] }`). */
export const bedrockCompactTool = compactToolDefinition('bedrock') as unknown as {
  toolSpec: { name: string; description: string; inputSchema: { json: object } };
};

/** The arguments of a compact call, or what is wrong with them. */
export function readCompactArguments(input: unknown): { focus?: string } | { error: string } {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { error: 'the arguments must be an object, such as {} or {"focus": "the open questions"}' };
  }
  const { focus, ...rest } = input as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined)
    return { error: `unknown argument "${extra.slice(0, 40)}": the only argument is focus` };
  if (focus === undefined || focus === null) return {};
  if (typeof focus !== 'string') return { error: `focus must be a string, got ${typeof focus}` };
  const trimmed = focus.trim().slice(0, MAX_FOCUS_CHARS);
  return trimmed === '' ? {} : { focus: trimmed };
}

/** A `compact` call read from a provider's shape. */
export interface CompactCall {
  format: MessageFormat;
  id: string;
  args: { focus?: string } | { error: string };
}

/** Reads a call of `compact` in any provider's shape (see `readToolCall`); null for anything else. */
export function readCompactCall(call: unknown): CompactCall | null {
  const read = readToolCall(call, COMPACT_TOOL_NAME);
  if (read === null) return null;
  const args = read.unreadable ? (read.input as { error: string }) : readCompactArguments(read.input);
  return { format: read.format, id: read.id, args };
}

function seqRanges(seqs: readonly number[]): string {
  if (seqs.length === 0) return '';
  const sorted = [...seqs].sort((a, b) => a - b);
  const out: string[] = [];
  let start = sorted[0] as number;
  let end = start;
  for (const seq of sorted.slice(1)) {
    if (seq === end + 1) {
      end = seq;
      continue;
    }
    out.push(start === end ? `#${start}` : `#${start}–#${end}`);
    start = end = seq;
  }
  out.push(start === end ? `#${start}` : `#${start}–#${end}`);
  return out.length > 4 ? `${out.slice(0, 4).join(', ')}, …` : out.join(', ');
}

/** Told to the model when the application's `onBeforeCompaction` vetoed the compaction. */
export const COMPACT_VETOED_TEXT =
  'The application declined this compaction: nothing changed. Carry on; it compacts when needed.';

/**
 * The receipt as the model reads it: what left the view, and the tokens before and after (null:
 * the application vetoed the compaction).
 */
export function compactReceiptText(receipt: CompactionReceipt | null): string {
  if (receipt === null) return COMPACT_VETOED_TEXT;
  const parts: string[] = [];
  if (receipt.summarized.length > 0)
    parts.push(`${receipt.summarized.length} older messages summarized (${seqRanges(receipt.summarized)})`);
  if (receipt.dropped.length > 0)
    parts.push(`${receipt.dropped.length} left out with their facts kept (${seqRanges(receipt.dropped)})`);
  if (receipt.cleared.length > 0) parts.push(`${receipt.cleared.length} old tool results cleared`);
  if (receipt.truncated.length > 0) parts.push(`${receipt.truncated.length} long texts shortened`);
  const figures = `${receipt.tokensBefore.toLocaleString('en-US')} → ${receipt.tokensAfter.toLocaleString('en-US')} tokens of a ${receipt.budget.toLocaleString('en-US')}-token budget`;
  if (parts.length === 0) {
    return `Nothing to compact: every message still shown must stay (${figures}).`;
  }
  const facts = receipt.facts.kept > 0 ? ` ${receipt.facts.kept} key facts are kept in view.` : '';
  return `Compacted from your next turn: ${parts.join('; ')}; ${figures}.${facts} The full history is kept and can still be searched.`;
}

/** Anything the compact tool can compact: a `ContextManager`, the Agents `ContextkitSession`. */
export interface CompactSource {
  requestCompaction(options?: { focus?: string }): Promise<CompactionReceipt | null>;
}

/** What a framework's compact tool returns for the model's arguments: the receipt, or what is wrong. */
export async function answerCompact(source: CompactSource, input: unknown): Promise<string> {
  const args = readCompactArguments(input);
  if ('error' in args) return `compact: ${args.error}`;
  return compactReceiptText(await source.requestCompaction(args));
}
