/**
 * LangChain.js `trimMessages` (strategy `last`, system kept, starting on a human message, as its
 * docs recommend for chat models), with two token counters: gpt-tokenizer's o200k count with
 * OpenAI's framing, and the chars/4 approximation LangChain's `countTokensApproximately` makes
 * (written here: that helper ships in the `langchain` package, which is not installed; see
 * bench/results/peers.md). Both counters remember each message's count, which only helps the peer.
 */
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import type { MessageFormat, OpenAIContentPart, OpenAIMessage } from '../../src/messages/types.js';
import { messageTokens } from './o200k-count.js';
import { inFormat, openaiFromMessage } from './openai-form.js';
import type { Peer, PeerSession, View } from './peer.js';

function parseArgs(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { input: parsed };
  } catch {
    return { input: args };
  }
}

/** An OpenAI message as the LangChain message a LangChain app would hold. */
export function toLangChain(m: OpenAIMessage): BaseMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return new SystemMessage({
        content: typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''),
      });
    case 'user':
      return new HumanMessage({
        content: typeof m.content === 'string' ? m.content : m.content.map((p) => ({ ...p })),
      });
    case 'tool':
      return new ToolMessage({
        content: typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''),
        tool_call_id: m.tool_call_id,
      });
    default:
      return new AIMessage({
        content: typeof m.content === 'string' ? m.content : '',
        tool_calls: (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          args: parseArgs(c.function.arguments),
          type: 'tool_call' as const,
        })),
      });
  }
}

/** A LangChain message back as the OpenAI message it would be sent as. */
export function fromLangChain(m: BaseMessage): OpenAIMessage {
  const text = typeof m.content === 'string' ? m.content : undefined;
  switch (m.type) {
    case 'system':
      return { role: 'system', content: text ?? '' };
    case 'human':
      return { role: 'user', content: text ?? (m.content as unknown as OpenAIContentPart[]) };
    case 'tool':
      return { role: 'tool', tool_call_id: (m as ToolMessage).tool_call_id, content: text ?? '' };
    default: {
      const calls = (m as AIMessage).tool_calls ?? [];
      const out: OpenAIMessage = {
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : (text ?? ''),
      };
      if (calls.length > 0) {
        out.tool_calls = calls.map((c) => ({
          id: c.id ?? '',
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        }));
      }
      return out;
    }
  }
}

type Counter = (m: BaseMessage) => number;

/** LangChain's approximation: characters of the content and tool calls over 4, plus 3 a message. */
function approximateTokens(m: BaseMessage): number {
  const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  const calls = m.type === 'ai' ? JSON.stringify((m as AIMessage).tool_calls ?? []) : '';
  return Math.ceil((content.length + (calls === '[]' ? 0 : calls.length)) / 4) + 3;
}

function trimPeer(name: string, perMessage: Counter, perRequest: number): Peer {
  return {
    name,
    start(format: MessageFormat, budget: number): PeerSession {
      const history: BaseMessage[] = [];
      const memo = new WeakMap<BaseMessage, number>();
      const tokenCounter = (messages: BaseMessage[]): number => {
        let n = perRequest;
        for (const m of messages) {
          let t = memo.get(m);
          if (t === undefined) {
            t = perMessage(m);
            memo.set(m, t);
          }
          n += t;
        }
        return n;
      };
      return {
        async add(message) {
          for (const m of openaiFromMessage(message, format)) history.push(toLangChain(m));
        },
        async view(): Promise<View> {
          const trimmed = await trimMessages(history, {
            maxTokens: budget,
            strategy: 'last',
            tokenCounter,
            includeSystem: true,
            startOn: 'human',
          });
          // Below the system prompt's size trimMessages returns `[undefined]`: kept as a null entry, so the
          // view is judged as what would be sent.
          const back = trimmed.map((m) =>
            m === undefined ? (null as unknown as OpenAIMessage) : fromLangChain(m),
          );
          return { ok: true, messages: () => inFormat(back, format) };
        },
      };
    },
  };
}

/** `trimMessages` counting with gpt-tokenizer (o200k) and OpenAI's framing. */
export const langchainTrimExact: Peer = trimPeer(
  'LC trim (o200k)',
  (m) => messageTokens(fromLangChain(m)),
  3,
);

/** `trimMessages` counting with the chars/4 approximation. */
export const langchainTrimApprox: Peer = trimPeer('LC trim (approx)', approximateTokens, 0);
