/**
 * The chat evaluation: a long conversation cut to a share of its size, and questions about its
 * turns. For each chat it asks whether each answer is still in the view (the turns kept, the
 * summary, the facts block), and whether `recall(question)` reaches it over the whole history,
 * side by side with plain truncation to the same budget (which has no lookup).
 */

import { ConfigurationError, ContextOverflowError } from '../errors.js';
import { wireFormat } from '../formats/registry.js';
import { ContextManager, type ContextManagerOptions } from '../manager.js';
import type { Message, MessageFormat } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { TokenCounter } from '../tokens/types.js';
import { messageText } from '../wire/content.js';
import { convertMessages } from '../wire/convert.js';
import { validateRequest } from '../wire/validate-request.js';
import { type ChatConversation, normalizeAnswer } from './chat-file.js';
import { truncationBaseline } from './truncation-baseline.js';

/** What `recall` is asked with: the top 5 hits within 1,000 tokens. */
export const CHAT_RECALL = { limit: 5, maxTokens: 1000 } as const;

/** How to evaluate chats. */
export interface ChatEvalOptions {
  /** Budget of each chat's view as a share of the chat's own token count, in (0, 1]. */
  budgetRatio: number;
  format?: MessageFormat;
  /** Model whose counter sets the budgets (default gpt-4o, or claude-sonnet-4-5 for Anthropic). */
  model?: string;
  strategy?: 'summarize' | 'truncate';
  /** Further options of every chat's manager (default: none, the library's defaults). */
  manager?: Omit<ContextManagerOptions, 'model' | 'strategy' | 'store' | 'conversationId'>;
  onChat?: (done: number, total: number) => void;
}

/** One view of one chat, measured. */
export interface ChatViewEvaluation {
  tokens: number;
  withinBudget: boolean;
  valid: boolean;
  /** Questions (by index) whose answer the view holds. */
  inView: number[];
}

/** One chat at its budget. */
export interface ChatEvaluation {
  name: string;
  messages: number;
  tokens: number;
  budget: number;
  /** Questions whose answer occurs in the whole chat as sent (the only ones counted). */
  present: number[];
  questions: number;
  /** Null when the manager could not fit the chat's latest turn into the budget. */
  contextkit: (ChatViewEvaluation & { recalled: number[] }) | null;
  contextkitError?: string;
  truncation: ChatViewEvaluation;
  /** Messages summarized and dropped by contextkit's last compaction. */
  summarized: number;
  dropped: number;
}

/** Totals over the chats. */
export interface ChatEvalSummary {
  budgetRatio: number;
  format: MessageFormat;
  model: string;
  strategy: 'summarize' | 'truncate';
  chats: number;
  /** Chats with a view from both sides. */
  compared: number;
  /** Questions counted: their answer is stated in the chat and the chat was compared. */
  questions: number;
  contextkit: {
    inView: number;
    recalled: number;
    either: number;
    valid: number;
    withinBudget: number;
    budgetShare: number;
  };
  truncation: { inView: number; valid: number; withinBudget: number; budgetShare: number };
}

/** Per-chat results and their totals. */
export interface ChatEvalResult {
  summary: ChatEvalSummary;
  chats: ChatEvaluation[];
}

function defaultModel(format: MessageFormat): string {
  return wireFormat(format).defaultModel;
}

function requestTokens(messages: readonly Message[], counter: TokenCounter, format: MessageFormat): number {
  let sum = counter.requestOverhead;
  for (const m of messages) sum += counter.countMessage(m, format);
  return sum;
}

/** The view's readable text, normalized like the answers. */
function viewText(messages: readonly Message[]): string {
  return normalizeAnswer(messages.map(messageText).join('\n'));
}

function holding(text: string, chat: ChatConversation, among: readonly number[]): number[] {
  return among.filter((i) => text.includes(chat.questions[i]!.answer));
}

function measure(
  view: readonly Message[],
  budget: number,
  counter: TokenCounter,
  format: MessageFormat,
  chat: ChatConversation,
  present: readonly number[],
): ChatViewEvaluation {
  const tokens = requestTokens(view, counter, format);
  return {
    tokens,
    withinBudget: tokens <= budget,
    valid: validateRequest(view, format).valid,
    inView: holding(viewText(view), chat, present),
  };
}

/** One chat at the options' budget ratio. */
export async function evaluateChat(
  chat: ChatConversation,
  options: ChatEvalOptions,
): Promise<ChatEvaluation> {
  const r = options.budgetRatio;
  if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0 || r > 1) {
    throw new ConfigurationError('budgetRatio', `expected a number in (0, 1], got ${JSON.stringify(r)}`);
  }
  const format = options.format ?? 'openai';
  const modelId = options.model ?? defaultModel(format);
  const info = getModelInfo(modelId);
  if (!info) throw new ConfigurationError('model', `${JSON.stringify(modelId)} is not in the model catalog`);
  const counter = createTokenCounter(info);
  const messages: Message[] = convertMessages(chat.messages, format);
  const tokens = requestTokens(messages, counter, format);
  const budget = Math.floor(r * tokens);
  const all = chat.questions.map((_, i) => i);
  const present = holding(viewText(messages), chat, all);
  const truncated = truncationBaseline(messages, { budget, counter, format });
  const result: ChatEvaluation = {
    name: chat.name,
    messages: messages.length,
    tokens,
    budget,
    present,
    questions: chat.questions.length,
    contextkit: null,
    truncation: measure(truncated.messages, budget, counter, format, chat, present),
    summarized: 0,
    dropped: 0,
  };
  const manager = new ContextManager({
    ...options.manager,
    model: info.id,
    strategy: options.strategy ?? 'summarize',
  });
  manager.on('context:post_compact', (event) => {
    result.summarized = event.receipt.summarized.length;
    result.dropped = event.receipt.dropped.length;
  });
  try {
    for (const message of messages) await manager.addMessage(message);
    const view = await manager.getMessagesForRequest({ tokenBudget: budget, provider: format });
    const recalled: number[] = [];
    for (const i of present) {
      const q = chat.questions[i]!;
      const hits = await manager.recall(q.question, CHAT_RECALL);
      if (normalizeAnswer(hits.map((h) => h.text).join('\n')).includes(q.answer)) recalled.push(i);
    }
    result.contextkit = { ...measure(view, budget, counter, format, chat, present), recalled };
  } catch (error) {
    if (!(error instanceof ContextOverflowError)) throw error;
    result.contextkitError = error.message;
  } finally {
    await manager.close();
  }
  return result;
}

/** Totals over per-chat results. */
export function summarizeChats(
  results: readonly ChatEvaluation[],
  options: ChatEvalOptions,
): ChatEvalSummary {
  const format = options.format ?? 'openai';
  const model = options.model ?? defaultModel(format);
  const summary: ChatEvalSummary = {
    budgetRatio: options.budgetRatio,
    format,
    model: getModelInfo(model)?.id ?? model,
    strategy: options.strategy ?? 'summarize',
    chats: results.length,
    compared: 0,
    questions: 0,
    contextkit: { inView: 0, recalled: 0, either: 0, valid: 0, withinBudget: 0, budgetShare: 0 },
    truncation: { inView: 0, valid: 0, withinBudget: 0, budgetShare: 0 },
  };
  for (const r of results) {
    const ours = r.contextkit;
    if (!ours || r.present.length === 0) continue;
    summary.compared++;
    summary.questions += r.present.length;
    const c = summary.contextkit;
    c.inView += ours.inView.length;
    c.recalled += ours.recalled.length;
    c.either += new Set([...ours.inView, ...ours.recalled]).size;
    if (ours.valid) c.valid++;
    if (ours.withinBudget) c.withinBudget++;
    c.budgetShare += ours.tokens / r.budget;
    const t = summary.truncation;
    t.inView += r.truncation.inView.length;
    if (r.truncation.valid) t.valid++;
    if (r.truncation.withinBudget) t.withinBudget++;
    t.budgetShare += r.truncation.tokens / r.budget;
  }
  return summary;
}

/** Evaluates every chat, one after another, each with a fresh manager. */
export async function evaluateChats(
  chats: readonly ChatConversation[],
  options: ChatEvalOptions,
): Promise<ChatEvalResult> {
  const results: ChatEvaluation[] = [];
  for (const chat of chats) {
    results.push(await evaluateChat(chat, options));
    options.onChat?.(results.length, chats.length);
  }
  return { summary: summarizeChats(results, options), chats: results };
}
