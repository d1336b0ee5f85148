/**
 * What the benchmark compares the manager against: a trimmer that recounts the whole history on
 * every request and drops the oldest messages until the rest fits. This is how the trimmers
 * people use today work (LangChain's `trimMessages` with a tiktoken counter; the seeds' own
 * example with chars/4): no memo, no plan kept between requests. Written plainly, the way such a
 * trimmer is written, with nothing added that would make it slower than it needs to be.
 */
import type { Message } from '../src/messages/types.js';
import { PROVIDER_FRAMING } from '../src/tokens/counter.js';
import { getTextTokenCounter } from '../src/tokens/encodings.js';
import { OPENAI_DEFAULT_IMAGE_TOKENS } from '../src/tokens/images.js';

/** What one message costs by some counting rule, and what every request costs on top. */
export interface RecountRule {
  readonly name: string;
  readonly perRequest: number;
  cost(message: Message): number;
}

/**
 * Baseline A, "exact recount": the same o200k_base tokenizer the manager uses, called on every
 * text of every message, with the same OpenAI framing (per message, role, name, tool calls, reply
 * priming). Images cost OpenAI's documented flat default: a tokenizer-based trimmer does not read
 * image headers, and the session has few images, so this changes neither the time nor the trim.
 */
export function exactRecountRule(): RecountRule {
  const bpe = getTextTokenCounter('o200k_base');
  const framing = PROVIDER_FRAMING.openai;
  const contentTokens = (content: unknown): number => {
    if (typeof content === 'string') return bpe(content);
    if (!Array.isArray(content)) return 0;
    let n = 0;
    for (const part of content as Array<Record<string, unknown>>) {
      if (typeof part.text === 'string') n += bpe(part.text);
      else if (typeof part.refusal === 'string') n += bpe(part.refusal);
      else if (part.type === 'image_url' || part.type === 'image') n += OPENAI_DEFAULT_IMAGE_TOKENS;
    }
    return n;
  };
  return {
    name: 'exact recount (o200k_base)',
    perRequest: framing.perRequest,
    cost(message) {
      let n = framing.perMessage + bpe(message.role ?? '') + contentTokens(message.content);
      if ('name' in message && typeof message.name === 'string') n += framing.perName + bpe(message.name);
      if (message.role === 'assistant' && 'tool_calls' in message && Array.isArray(message.tool_calls)) {
        for (const call of message.tool_calls) {
          n += framing.perToolCall + bpe(call.function.name) + bpe(call.function.arguments);
        }
      }
      return n;
    },
  };
}

/**
 * Baseline B, "chars/4": the seeds' estimate, `len(str(content)) // 4`, as JavaScript writes it.
 * It ignores tool calls and framing and counts base64 images by their length, which is why it is
 * wrong; it is here because it is fast, and the manager should not be slower than it.
 */
export function charsPer4Rule(): RecountRule {
  return {
    name: 'chars/4 recount',
    perRequest: 0,
    cost: (message) => (JSON.stringify(message.content ?? '') ?? '').length / 4,
  };
}

/**
 * A history trimmed by recounting: every request counts every stored message, and when the sum
 * is over the budget drops the oldest non-system messages until it fits, then keeps dropping until
 * the view opens on a user message, so no tool result is left without its call (LangChain's
 * `strategy: 'last'` with `startOn: 'human'`).
 */
export class RecountTrimmer {
  private readonly history: Message[] = [];

  constructor(private readonly rule: RecountRule) {}

  addMessage(message: Message): void {
    this.history.push(message);
  }

  /** The view for one request, and what it costs by the rule. */
  getMessagesForRequest(budget: number): { messages: Message[]; tokens: number } {
    const history = this.history;
    const costs = new Array<number>(history.length);
    let total = this.rule.perRequest;
    for (let i = 0; i < history.length; i++) {
      const cost = this.rule.cost(history[i]!);
      costs[i] = cost;
      total += cost;
    }
    if (total <= budget) return { messages: history.slice(), tokens: total };
    let head = 0;
    while (head < history.length && history[head]!.role === 'system') head++;
    let start = head;
    const last = history.length - 1;
    while (start < last && total > budget) total -= costs[start++]!;
    while (start < last && history[start]!.role !== 'user') total -= costs[start++]!;
    return { messages: [...history.slice(0, head), ...history.slice(start)], tokens: total };
  }
}
