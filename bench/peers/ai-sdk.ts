/**
 * The AI SDK's `pruneMessages` (`ai` v6) as its docs show it: reasoning and tool calls pruned
 * before the last messages, empty messages removed. It does not count tokens, so it is given no
 * budget; its fit is what it happens to be.
 */
import { type ModelMessage, pruneMessages } from 'ai';
import type { MessageFormat, OpenAIMessage } from '../../src/messages/types.js';
import { inFormat, openaiFromMessage } from './openai-form.js';
import type { Peer, View } from './peer.js';

function parseInput(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return { input: args };
  }
}

/** An OpenAI message as the SDK's `ModelMessage`; tool results need their call's tool name. */
export function toModelMessage(m: OpenAIMessage, toolNames: Map<string, string>): ModelMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return {
        role: 'system',
        content: typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''),
      };
    case 'user':
      if (typeof m.content === 'string') return { role: 'user', content: m.content };
      return {
        role: 'user',
        content: m.content.map((p) =>
          p.type === 'image_url'
            ? { type: 'image' as const, image: p.image_url.url }
            : { type: 'text' as const, text: p.type === 'text' ? p.text : `[${p.type}]` },
        ),
      };
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: m.tool_call_id,
            toolName: toolNames.get(m.tool_call_id) ?? 'unknown',
            output: {
              type: 'text',
              value: typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''),
            },
          },
        ],
      };
    default: {
      const text = typeof m.content === 'string' ? m.content : '';
      const parts: Array<
        | { type: 'text'; text: string }
        | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
      > = text === '' ? [] : [{ type: 'text', text }];
      for (const c of m.tool_calls ?? []) {
        toolNames.set(c.id, c.function.name);
        parts.push({
          type: 'tool-call',
          toolCallId: c.id,
          toolName: c.function.name,
          input: parseInput(c.function.arguments),
        });
      }
      return { role: 'assistant', content: parts };
    }
  }
}

/** A `ModelMessage` back as the OpenAI messages it would be sent as. */
export function fromModelMessage(m: ModelMessage): OpenAIMessage[] {
  if (m.role === 'system') return [{ role: 'system', content: m.content }];
  if (m.role === 'user') {
    if (typeof m.content === 'string') return [{ role: 'user', content: m.content }];
    return [
      {
        role: 'user',
        content: m.content.map((p) =>
          p.type === 'image'
            ? { type: 'image_url' as const, image_url: { url: String(p.image) } }
            : { type: 'text' as const, text: p.type === 'text' ? p.text : '[file]' },
        ),
      },
    ];
  }
  if (m.role === 'tool') {
    const out: OpenAIMessage[] = [];
    for (const p of m.content) {
      if (p.type !== 'tool-result') continue;
      const o = p.output;
      const value = o.type === 'text' || o.type === 'error-text' ? o.value : JSON.stringify(o);
      out.push({ role: 'tool', tool_call_id: p.toolCallId, content: value });
    }
    return out;
  }
  if (typeof m.content === 'string') return [{ role: 'assistant', content: m.content }];
  let text = '';
  const calls: NonNullable<Extract<OpenAIMessage, { role: 'assistant' }>['tool_calls']> = [];
  for (const p of m.content) {
    if (p.type === 'text') text += p.text;
    else if (p.type === 'tool-call') {
      calls.push({
        id: p.toolCallId,
        type: 'function',
        function: { name: p.toolName, arguments: JSON.stringify(p.input) },
      });
    }
  }
  const out: OpenAIMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) out.tool_calls = calls;
  return [out];
}

/** `pruneMessages` with the options its documentation gives as the example. */
export const aiSdkPrune: Peer = {
  name: 'AI SDK prune',
  start(format: MessageFormat) {
    const history: ModelMessage[] = [];
    const toolNames = new Map<string, string>();
    return {
      async add(message) {
        for (const m of openaiFromMessage(message, format)) history.push(toModelMessage(m, toolNames));
      },
      async view(): Promise<View> {
        const pruned = pruneMessages({
          messages: history,
          reasoning: 'before-last-message',
          toolCalls: 'before-last-2-messages',
          emptyMessages: 'remove',
        });
        return { ok: true, messages: () => inFormat(pruned.flatMap(fromModelMessage), format) };
      },
    };
  },
};
