/**
 * Reading Bedrock Converse content blocks: which member a block sets, the calls and results a
 * message holds, and the text recall and facts read.
 */
import type { BedrockToolResult, BedrockToolUse } from '../../messages/bedrock-types.js';

/** The member names a content block may set, as the ContentBlock union documents them. */
export const BEDROCK_BLOCK_MEMBERS: readonly string[] = Object.freeze([
  'text',
  'image',
  'document',
  'video',
  'audio',
  'toolUse',
  'toolResult',
  'reasoningContent',
  'cachePoint',
  'guardContent',
  'citationsContent',
  'searchResult',
]);

/** Members only Bedrock's blocks have (not `text`, which a Gemini part shares). */
export const BEDROCK_ONLY_MEMBERS: ReadonlySet<string> = new Set(
  BEDROCK_BLOCK_MEMBERS.filter((m) => m !== 'text'),
);

type Rec = Record<string, unknown>;

export function isRecord(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The member a block sets (`text`, `toolUse`, …), or undefined when it sets none or several. */
export function memberOf(block: unknown): string | undefined {
  if (!isRecord(block)) return undefined;
  let found: string | undefined;
  for (const key of Object.keys(block)) {
    if (!BEDROCK_BLOCK_MEMBERS.includes(key)) continue;
    if (found !== undefined) return undefined;
    found = key;
  }
  return found;
}

/** A message's blocks (empty when `content` is not an array). */
export function blocksOf(message: unknown): readonly Rec[] {
  if (!isRecord(message) || !Array.isArray(message.content)) return [];
  return message.content as Rec[];
}

/** The `toolUse` blocks of an assistant message, in order. */
export function toolUsesOf(message: unknown): BedrockToolUse[] {
  if (!isRecord(message) || message.role !== 'assistant') return [];
  const out: BedrockToolUse[] = [];
  for (const b of blocksOf(message))
    if (isRecord(b.toolUse)) out.push(b.toolUse as unknown as BedrockToolUse);
  return out;
}

/** The `toolResult` blocks of a user message, in order. */
export function toolResultsOf(message: unknown): BedrockToolResult[] {
  if (!isRecord(message) || message.role !== 'user') return [];
  const out: BedrockToolResult[] = [];
  for (const b of blocksOf(message))
    if (isRecord(b.toolResult)) out.push(b.toolResult as unknown as BedrockToolResult);
  return out;
}

/** Whether a text block is empty or whitespace only (Bedrock refuses it: "is blank"). */
export function isBlankText(block: Rec): boolean {
  return typeof block.text === 'string' && memberOf(block) === 'text' && block.text.trim().length === 0;
}

/** The text of a tool result's content: text blocks as they are, JSON as JSON. */
export function toolResultText(result: BedrockToolResult): string {
  const parts: string[] = [];
  for (const c of Array.isArray(result.content) ? result.content : []) {
    const r = c as Rec;
    if (typeof r.text === 'string') parts.push(r.text);
    else if ('json' in r) parts.push(JSON.stringify(r.json));
  }
  return parts.join('\n');
}

/**
 * The text a person would read in a message, for recall and facts: text blocks, tool results,
 * the calls' names and inputs, guarded text and document text. Reasoning, media and cache points
 * are left out.
 */
export function bedrockText(message: unknown): string {
  const parts: string[] = [];
  for (const b of blocksOf(message)) {
    switch (memberOf(b)) {
      case 'text':
        parts.push(String(b.text));
        break;
      case 'toolUse': {
        const use = b.toolUse as BedrockToolUse;
        parts.push(`${use.name}(${JSON.stringify(use.input ?? {})})`);
        break;
      }
      case 'toolResult':
        parts.push(toolResultText(b.toolResult as BedrockToolResult));
        break;
      case 'guardContent': {
        const g = b.guardContent as Rec;
        if (isRecord(g.text) && typeof g.text.text === 'string') parts.push(g.text.text);
        break;
      }
      case 'document': {
        const source = isRecord(b.document) ? (b.document as Rec).source : undefined;
        if (isRecord(source) && typeof source.text === 'string') parts.push(source.text);
        break;
      }
      default:
        break;
    }
  }
  return parts.filter((p) => p.length > 0).join('\n');
}
