/**
 * Conversion between Gemini contents and Anthropic messages, the hub the other formats go
 * through. What goes across as it is:
 *
 * - text parts and text blocks; a system message's parts and the system prompt (a system
 *   message after the conversation started becomes a user content: the system instruction
 *   stands before the contents);
 * - `inlineData` images and PDFs and base64 image / document blocks; `fileData` and URL sources;
 * - `functionCall { name, args, id }` and `tool_use { id, name, input }` (a call without an id
 *   gets `gemini_<seq>_<n>` on the way out, and its response the same, paired as Gemini pairs);
 * - `functionResponse { name, response, id }` and `tool_result` (`response.content` or
 *   `response.error` as the result's text; any other response as its JSON).
 *
 * What cannot go across is listed in one `InvalidMessageError` (code `not_convertible`) rather
 * than left out: thought parts and thought signatures, code execution parts, audio and video,
 * Anthropic thinking, server-tool, MCP, upload and search-result blocks, and file-id sources.
 * With `{ dropThinking: true }` the reasoning (thought parts and signatures, Anthropic thinking
 * and redacted thinking) is left out instead, as the view does for another provider.
 */

import { InvalidMessageError, type MessageIssue } from '../../errors.js';
import type { GeminiContentPart, GeminiMessage } from '../../messages/gemini-types.js';
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
} from '../../messages/types.js';
import { THINKING_BLOCKS } from '../anthropic/blocks.js';
import { type GeminiCallRef, geminiCalls, geminiResponses, pairGemini, partKind } from './parts.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function notConvertible(issues: MessageIssue[]): void {
  if (issues.length > 0) throw new InvalidMessageError(issues, 'not_convertible');
}

// ------------------------------------------------------------------------------ Gemini → Anthropic

function geminiIssues(messages: readonly GeminiMessage[], dropThinking: boolean): MessageIssue[] {
  const issues: MessageIssue[] = [];
  messages.forEach((m, i) => {
    m.parts.forEach((raw, k) => {
      const part = raw as GeminiContentPart;
      const at = `messages[${i}].parts[${k}]`;
      if (dropThinking && part.thought === true) return;
      if (part.thoughtSignature !== undefined && !dropThinking)
        issues.push({
          path: `${at}.thoughtSignature`,
          message:
            'a thought signature has no counterpart elsewhere and cannot be converted; pass { dropThinking: true } to leave it out',
        });
      if (part.thought === true)
        issues.push({
          path: `${at}.thought`,
          message:
            'a thought part has no counterpart elsewhere and cannot be converted; pass { dropThinking: true } to leave it out',
        });
      const kind = partKind(part);
      if (kind === 'executableCode' || kind === 'codeExecutionResult')
        issues.push({
          path: `${at}.${kind}`,
          message: `a "${kind}" part has no counterpart elsewhere and cannot be converted`,
        });
      const media = part.inlineData ?? part.fileData;
      const type = String(media?.mimeType ?? '');
      if (media && !type.startsWith('image/') && type !== 'application/pdf')
        issues.push({
          path: `${at}.${kind}.mimeType`,
          message: `"${type}" media has no counterpart elsewhere and cannot be converted`,
        });
    });
  });
  return issues;
}

function resultText(response: Record<string, unknown>): { text: string; error: boolean } {
  if (typeof response.error === 'string') return { text: response.error, error: true };
  if (typeof response.content === 'string') return { text: response.content, error: false };
  return { text: JSON.stringify(response), error: false };
}

function mediaBlock(part: GeminiContentPart): AnthropicContentBlock {
  if (part.inlineData) {
    const { mimeType, data } = part.inlineData;
    return mimeType === 'application/pdf'
      ? { type: 'document', source: { type: 'base64', media_type: mimeType, data } }
      : { type: 'image', source: { type: 'base64', media_type: mimeType, data } };
  }
  const file = part.fileData!;
  return file.mimeType === 'application/pdf'
    ? { type: 'document', source: { type: 'url', url: file.fileUri } }
    : { type: 'image', source: { type: 'url', url: file.fileUri } };
}

/**
 * Gemini contents as Anthropic messages (see the module note); throws for what cannot go. With
 * `dropThinking`, thought parts are left out and thought signatures dropped from their parts
 * instead (a model turn left with nothing goes too).
 */
export function geminiToAnthropic(
  messages: readonly GeminiMessage[],
  options: { dropThinking?: boolean } = {},
): AnthropicMessage[] {
  const dropThinking = options.dropThinking === true;
  notConvertible(geminiIssues(messages, dropThinking));
  const out: AnthropicMessage[] = [];
  let lastCalls: string[] = [];
  let lastRefs: GeminiCallRef[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'system') {
      out.push({
        role: 'system',
        content: m.parts.map((p) => ({ type: 'text', text: p.text }) as AnthropicTextBlock),
      });
      return;
    }
    const blocks: AnthropicContentBlock[] = [];
    if (m.role === 'model') {
      const ids: string[] = [];
      m.parts.forEach((part, k) => {
        if (part.thought === true) return;
        if (part.functionCall) {
          const id = part.functionCall.id ?? `gemini_${i}_${k}`;
          ids.push(id);
          blocks.push({
            type: 'tool_use',
            id,
            name: part.functionCall.name,
            input: part.functionCall.args ?? {},
          });
        } else if (typeof part.text === 'string') {
          if (part.text.length > 0) blocks.push({ type: 'text', text: part.text });
        } else blocks.push(mediaBlock(part));
      });
      lastCalls = ids;
      lastRefs = geminiCalls(m);
      if (blocks.length > 0 || !dropThinking) out.push({ role: 'assistant', content: blocks });
      return;
    }
    const responses = geminiResponses(m);
    const pairing = pairGemini(lastRefs, responses);
    m.parts.forEach((part, k) => {
      if (part.thought === true) return;
      if (part.functionResponse) {
        const n = responses.findIndex((r) => r.index === k);
        const call = pairing.indexOf(n);
        const id = call >= 0 ? lastCalls[call]! : (part.functionResponse.id ?? `gemini_${i}_${k}`);
        const { text, error } = resultText(part.functionResponse.response ?? {});
        const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: id, content: text };
        if (error) block.is_error = true;
        blocks.push(block);
      } else if (typeof part.text === 'string') {
        if (part.text.length > 0) blocks.push({ type: 'text', text: part.text });
      } else blocks.push(mediaBlock(part));
    });
    // Responses split over several user contents answer the calls the earlier ones left open.
    lastCalls = lastCalls.filter((_, c) => pairing[c]! < 0);
    lastRefs = lastRefs.filter((_, c) => pairing[c]! < 0);
    out.push({ role: 'user', content: blocks });
  });
  return out;
}

// ------------------------------------------------------------------------------ Anthropic → Gemini

const GEMINI_BLOCKS = new Set(['text', 'image', 'document', 'tool_use', 'tool_result']);

function anthropicIssues(messages: readonly AnthropicMessage[], dropThinking: boolean): MessageIssue[] {
  const issues: MessageIssue[] = [];
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as unknown as Array<Record<string, unknown>>).forEach((b, k) => {
      const at = `messages[${i}].content[${k}]`;
      if (dropThinking && THINKING_BLOCKS.has(String(b.type))) return;
      if (!GEMINI_BLOCKS.has(String(b.type))) {
        const hint = THINKING_BLOCKS.has(String(b.type))
          ? '; pass { dropThinking: true } to leave it out'
          : '';
        issues.push({
          path: at,
          message: `a "${String(b.type)}" block has no Gemini counterpart and cannot be converted${hint}`,
        });
        return;
      }
      const source = isRecord(b.source) ? b.source : undefined;
      if (source && source.type !== 'base64' && source.type !== 'url')
        issues.push({
          path: `${at}.source`,
          message: `a "${String(source.type)}" source has no Gemini counterpart and cannot be converted`,
        });
      if (
        b.type === 'tool_result' &&
        Array.isArray(b.content) &&
        b.content.some((c) => isRecord(c) && c.type !== 'text')
      )
        issues.push({
          path: `${at}.content`,
          message: 'media inside a tool result has no Gemini counterpart and cannot be converted',
        });
    });
  });
  return issues;
}

function blockPart(
  block: AnthropicContentBlock,
  names: ReadonlyMap<string, string>,
): GeminiContentPart | undefined {
  switch (block.type) {
    case 'text':
      return block.text.length > 0 ? { text: block.text } : undefined;
    case 'image':
    case 'document': {
      const source = block.source as Record<string, string>;
      const fallback = block.type === 'image' ? 'image/jpeg' : 'application/pdf';
      return source.type === 'base64'
        ? { inlineData: { mimeType: source.media_type ?? fallback, data: source.data! } }
        : { fileData: { mimeType: fallback, fileUri: source.url! } };
    }
    case 'tool_use':
      return {
        functionCall: {
          id: block.id,
          name: block.name,
          args: isRecord(block.input) ? block.input : { value: block.input },
        },
      };
    case 'tool_result': {
      const content = block.content;
      const text =
        typeof content === 'string'
          ? content
          : (content ?? []).map((c) => (c as AnthropicTextBlock).text).join('\n');
      return {
        functionResponse: {
          id: block.tool_use_id,
          name: names.get(block.tool_use_id) ?? block.tool_use_id,
          response: block.is_error ? { error: text } : { content: text },
        },
      };
    }
    default:
      return undefined;
  }
}

/**
 * Anthropic messages as Gemini contents (see the module note); throws for what cannot go. With
 * `dropThinking`, `thinking` and `redacted_thinking` blocks are left out instead (an assistant
 * turn left with nothing goes too, as Gemini refuses a content without parts).
 */
export function anthropicToGemini(
  messages: readonly AnthropicMessage[],
  options: { dropThinking?: boolean } = {},
): GeminiMessage[] {
  notConvertible(anthropicIssues(messages, options.dropThinking === true));
  const names = new Map<string, string>();
  const out: GeminiMessage[] = [];
  for (const m of messages) {
    const blocks: AnthropicContentBlock[] =
      typeof m.content === 'string'
        ? [{ type: 'text', text: m.content }]
        : (m.content as AnthropicContentBlock[]);
    for (const b of blocks) if (b.type === 'tool_use') names.set(b.id, b.name);
    const parts = blocks
      .map((b) => blockPart(b, names))
      .filter((p): p is GeminiContentPart => p !== undefined);
    if (m.role === 'system') {
      const texts = parts.filter((p): p is { text: string } => typeof p.text === 'string');
      // The system instruction only exists before the contents: a system message after the
      // conversation started becomes a user content (as it becomes a user turn for Anthropic).
      const started = out.some((c) => c.role !== 'system');
      if (texts.length > 0) out.push({ role: started ? 'user' : 'system', parts: texts });
      continue;
    }
    // Gemini refuses a content without parts: an empty assistant turn is left out.
    if (parts.length === 0) continue;
    out.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  return out;
}
