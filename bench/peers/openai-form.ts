/**
 * The bridge between a workload's format and the OpenAI-shaped messages the peers' converters
 * start from, written here (not the library's `convertMessages`) so that a repair in the library's
 * conversion cannot make a peer's view look valid when the peer itself left it broken.
 */
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  Message,
  MessageFormat,
  OpenAIContentPart,
  OpenAIMessage,
  OpenAIToolCall,
} from '../../src/messages/types.js';

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`))
    .join('\n');
}

function imagePart(block: AnthropicContentBlock): OpenAIContentPart | undefined {
  if (block.type !== 'image') return undefined;
  const s = block.source;
  if (s.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${s.media_type};base64,${s.data}` } };
  if (s.type === 'url') return { type: 'image_url', image_url: { url: s.url } };
  return { type: 'text', text: `[file ${s.file_id}]` };
}

/** One stored message as OpenAI messages (an Anthropic user message with results becomes several). */
export function openaiFromMessage(message: Message, format: MessageFormat): OpenAIMessage[] {
  if (format === 'openai') return [message as OpenAIMessage];
  const m = message as AnthropicMessage;
  if (m.role === 'system') return [{ role: 'system', content: blockText(m.content) }];
  if (typeof m.content === 'string') return [{ role: m.role, content: m.content }];
  const blocks = m.content;
  if (m.role === 'assistant') {
    const text = blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const calls: OpenAIToolCall[] = [];
    for (const b of blocks) {
      if (b.type === 'tool_use') {
        calls.push({
          id: b.id,
          type: 'function',
          function: { name: b.name, arguments: JSON.stringify(b.input) },
        });
      }
    }
    const out: OpenAIMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
    if (calls.length > 0) out.tool_calls = calls;
    return [out];
  }
  const out: OpenAIMessage[] = [];
  const rest: OpenAIContentPart[] = [];
  for (const b of blocks) {
    if (b.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: blockText(b.content ?? '') });
    } else if (b.type === 'text') {
      rest.push({ type: 'text', text: b.text });
    } else {
      const part = imagePart(b);
      if (part) rest.push(part);
    }
  }
  if (rest.length > 0) out.push({ role: 'user', content: rest });
  return out;
}

function parseInput(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return { input: args };
  }
}

function anthropicBlocks(content: OpenAIMessage['content']): string | AnthropicContentBlock[] {
  if (typeof content === 'string' || content == null) return content ?? '';
  return content.map((p): AnthropicContentBlock => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
      return m
        ? { type: 'image', source: { type: 'base64', media_type: m[1] ?? '', data: m[2] ?? '' } }
        : { type: 'image', source: { type: 'url', url: p.image_url.url } };
    }
    if (p.type === 'refusal') return { type: 'text', text: p.refusal };
    return { type: 'text', text: `[${p.type}]` };
  });
}

/**
 * OpenAI messages as Anthropic would be sent them: a run of tool messages becomes one user message
 * of `tool_result` blocks. Nothing is repaired: an orphan result stays an orphan.
 */
export function anthropicFromOpenAI(messages: readonly OpenAIMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  let results: AnthropicContentBlock[] | undefined;
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) {
      out.push(m);
      continue;
    }
    if (m.role === 'tool') {
      const block: AnthropicContentBlock = { type: 'tool_result', tool_use_id: m.tool_call_id };
      const text = blockText(m.content);
      if (text !== '') block.content = text;
      if (results === undefined) {
        results = [];
        out.push({ role: 'user', content: results });
      }
      results.push(block);
      continue;
    }
    results = undefined;
    if (m.role === 'system' || m.role === 'developer') {
      out.push({ role: 'system', content: blockText(m.content) });
    } else if (m.role === 'user') {
      out.push({ role: 'user', content: anthropicBlocks(m.content) });
    } else {
      const blocks: AnthropicContentBlock[] = [];
      const text = typeof m.content === 'string' ? m.content : blockText(m.content ?? '');
      if (text !== '') blocks.push({ type: 'text', text });
      for (const call of m.role === 'assistant' ? (m.tool_calls ?? []) : []) {
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.function.name,
          input: parseInput(call.function.arguments),
        });
      }
      out.push({
        role: 'assistant',
        content: blocks.length === 1 && blocks[0]?.type === 'text' ? text : blocks,
      });
    }
  }
  return out;
}

/** A peer's OpenAI-shaped view in the workload's format. */
export function inFormat(messages: readonly OpenAIMessage[], format: MessageFormat): Message[] {
  return format === 'openai' ? messages.slice() : anthropicFromOpenAI(messages);
}
