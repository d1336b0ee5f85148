/**
 * Mastra's `TokenLimiter` memory processor (`@mastra/memory/processors` 0.15, for `@mastra/core`
 * 0.24, the line that runs on Node 20). This version has one mode: it walks back from the newest
 * message and stops at the first that does not fit (contiguous); the best-fit mode of later
 * releases is not in it. System prompts are given to it as `systemMessage`, as Mastra's memory
 * does, and stand first in the view.
 */
import { TokenLimiter } from '@mastra/memory/processors';
import type { MessageFormat, OpenAIMessage } from '../../src/messages/types.js';
import { inFormat, openaiFromMessage } from './openai-form.js';
import type { Peer, View } from './peer.js';

type CoreMessages = Parameters<TokenLimiter['process']>[0];

type CorePart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; args: unknown }
  | { type: 'tool-result'; toolCallId: string; toolName: string; result: unknown };

interface CoreMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string | CorePart[];
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return { input: args };
  }
}

function textOf(content: string | ReadonlyArray<{ text: string }>): string {
  return typeof content === 'string' ? content : content.map((p) => p.text).join('');
}

/** An OpenAI conversation message as the AI SDK v4 `CoreMessage` Mastra 0.x works on. */
function toCore(m: OpenAIMessage, toolNames: Map<string, string>): CoreMessage {
  if (m.role === 'tool') {
    const toolName = toolNames.get(m.tool_call_id) ?? 'unknown';
    return {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: m.tool_call_id, toolName, result: textOf(m.content) }],
    };
  }
  if (m.role === 'user') {
    if (typeof m.content === 'string') return { role: 'user', content: m.content };
    return {
      role: 'user',
      content: m.content.map((p) =>
        p.type === 'image_url'
          ? { type: 'image', image: p.image_url.url }
          : { type: 'text', text: p.type === 'text' ? p.text : `[${p.type}]` },
      ),
    };
  }
  const a = m as Extract<OpenAIMessage, { role: 'assistant' }>;
  const text = typeof a.content === 'string' ? a.content : '';
  const parts: CorePart[] = text === '' ? [] : [{ type: 'text', text }];
  for (const c of a.tool_calls ?? []) {
    toolNames.set(c.id, c.function.name);
    parts.push({
      type: 'tool-call',
      toolCallId: c.id,
      toolName: c.function.name,
      args: parseArgs(c.function.arguments),
    });
  }
  return { role: 'assistant', content: parts };
}

function fromCore(m: CoreMessage): OpenAIMessage[] {
  if (typeof m.content === 'string')
    return [{ role: m.role === 'tool' ? 'user' : m.role, content: m.content }];
  if (m.role === 'tool') {
    return m.content.flatMap((p) =>
      p.type === 'tool-result'
        ? [{ role: 'tool' as const, tool_call_id: p.toolCallId, content: String(p.result) }]
        : [],
    );
  }
  if (m.role === 'user') {
    return [
      {
        role: 'user',
        content: m.content.map((p) =>
          p.type === 'image'
            ? { type: 'image_url' as const, image_url: { url: p.image } }
            : { type: 'text' as const, text: p.type === 'text' ? p.text : '' },
        ),
      },
    ];
  }
  let text = '';
  const calls: NonNullable<Extract<OpenAIMessage, { role: 'assistant' }>['tool_calls']> = [];
  for (const p of m.content) {
    if (p.type === 'text') text += p.text;
    else if (p.type === 'tool-call') {
      calls.push({
        id: p.toolCallId,
        type: 'function',
        function: { name: p.toolName, arguments: JSON.stringify(p.args) },
      });
    }
  }
  const out: OpenAIMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) out.tool_calls = calls;
  return [out];
}

let shared: TokenLimiter | undefined;

/**
 * A limiter with this budget. Constructing one builds js-tiktoken's o200k rank table (about half
 * a second here), which an app does once, not per conversation; so sessions share one limiter's
 * fields (its encoder) and differ only in `maxTokens`, the field its constructor sets from the limit.
 */
function limiterFor(budget: number): TokenLimiter {
  shared ??= new TokenLimiter(budget);
  return Object.assign(Object.create(TokenLimiter.prototype) as TokenLimiter, shared, { maxTokens: budget });
}

/**
 * The limiter with each message's count remembered (by the message object; a string is counted
 * afresh): the same counts, so the same views, without js-tiktoken encoding a budget's worth of
 * text on every call, which only helps the peer.
 */
function remembering(limiter: TokenLimiter): TokenLimiter {
  const count = limiter.countTokens.bind(limiter);
  const memo = new WeakMap<object, number>();
  limiter.countTokens = (message) => {
    if (typeof message === 'string') return count(message);
    let n = memo.get(message);
    if (n === undefined) {
      n = count(message);
      memo.set(message, n);
    }
    return n;
  };
  return limiter;
}

function tokenLimiterPeer(remember: boolean): Peer {
  return {
    name: 'Mastra TokenLimiter',
    start(format: MessageFormat, budget: number) {
      const limiter = remember ? remembering(limiterFor(budget)) : limiterFor(budget);
      const system: string[] = [];
      const history: CoreMessage[] = [];
      const toolNames = new Map<string, string>();
      return {
        async add(message) {
          for (const m of openaiFromMessage(message, format)) {
            if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
            else history.push(toCore(m, toolNames));
          }
        },
        async view(): Promise<View> {
          const systemMessage = system.join('\n\n');
          const kept = limiter.process(
            history as unknown as CoreMessages,
            systemMessage === '' ? {} : { systemMessage },
          );
          return {
            ok: true,
            messages: () => {
              const head: OpenAIMessage[] =
                systemMessage === '' ? [] : [{ role: 'system', content: systemMessage }];
              return inFormat([...head, ...(kept as unknown as CoreMessage[]).flatMap(fromCore)], format);
            },
          };
        },
      };
    },
  };
}

/** `new TokenLimiter(budget).process(memory, { systemMessage })`. */
export const mastraTokenLimiter: Peer = tokenLimiterPeer(false);

/**
 * The same, each message's count remembered: the agent benchmark's sessions hold hundreds of
 * large results, and its figures are what the agent does, not the peer's time.
 */
export const mastraTokenLimiterRemembering: Peer = tokenLimiterPeer(true);
