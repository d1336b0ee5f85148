/**
 * `ContextManager.handleToolCall`'s body: a call of the model's `recall` or `compact` tool, in any
 * provider's shape, answered with the tool result message in the conversation's format. Kept apart
 * so the manager reads as the composition it is; the manager lends what the answer needs
 * (`ToolCallHost`).
 */

import { COMPACT_TOOL_NAME, compactReceiptText, readCompactCall } from './compaction/compact-tool.js';
import type { CompactionReceipt } from './events.js';
import type { GeminiContent } from './messages/gemini-types.js';
import type { ResponsesItem } from './messages/responses-types.js';
import type { AnthropicUserMessage, MessageFormat, OpenAIToolMessage } from './messages/types.js';
import type { RecallHit, RecallOptions } from './recall/recall-hit.js';
import { readRecallCall, recallAnswer, recallResultMessage } from './recall/recall-tool.js';
import { toolResultMessage } from './wire/tool-result.js';

/** A tool result message in any of the formats a call can come in. */
export type ToolResult = OpenAIToolMessage | AnthropicUserMessage | GeminiContent | ResponsesItem;

/** What the manager lends the answer to a tool call. */
export interface ToolCallHost {
  /** The conversation's format once a message has shown it. */
  format(): MessageFormat | undefined;
  /** Runs an operation in the manager's queue. */
  enqueue<T>(op: () => Promise<T> | T): Promise<T>;
  /** `ContextManager.requestCompaction`. */
  requestCompaction(options: { focus?: string }): Promise<CompactionReceipt | null>;
  /** Searches the whole stored history (the recall index). */
  recall(query: string, options: RecallOptions): Promise<RecallHit[]>;
}

/** See `ContextManager.handleToolCall`. */
export function handleToolCall(host: ToolCallHost, call: unknown): Promise<ToolResult | null> {
  const compact = readCompactCall(call);
  if (compact !== null) {
    const format = () => host.format() ?? compact.format;
    if ('error' in compact.args) {
      const text = `compact: ${compact.args.error}`;
      return host.enqueue(() => toolResultMessage(format(), COMPACT_TOOL_NAME, compact.id, text, true));
    }
    return host
      .requestCompaction(compact.args)
      .then((receipt) =>
        toolResultMessage(format(), COMPACT_TOOL_NAME, compact.id, compactReceiptText(receipt), false),
      );
  }
  const read = readRecallCall(call);
  if (read === null) return Promise.resolve(null);
  return host.enqueue(async () => {
    const format = host.format() ?? read.format;
    const answer = await recallAnswer((q, o) => host.recall(q, o), read.args);
    return recallResultMessage(format, read.id, answer.text, answer.error);
  });
}
