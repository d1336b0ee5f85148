/**
 * Driving the provider's own compaction from contextkit's budget (`providerCompaction`). For
 * Anthropic, every request to a model that supports it carries `context_management` edits:
 *
 * - `compact_20260112` (beta `compact-2026-01-12`) with its trigger at contextkit's own trigger
 *   (`compactThreshold` × the budget, in billed tokens), never under the documented minimum:
 *   "trigger: {type: input_tokens, value}; default 150,000; must be at least 50,000"
 *   (platform.claude.com/docs/en/build-with-claude/compaction, "Parameters"), so the server
 *   compacts exactly when the guard would;
 * - where asked, `clear_tool_uses_20250919` (beta `context-management-2025-06-27`), clearing old
 *   tool results on the server, and `clear_thinking_20251015` (same beta), clearing the thinking
 *   of older turns: `keep` is `{type: "thinking_turns", value: N}` with N > 0, or `"all"`, and
 *   "when using multiple strategies, the `clear_thinking_20251015` strategy must be listed first in
 *   the `edits` array" (platform.claude.com/docs/en/build-with-claude/context-editing).
 *
 * When the guard finds a compaction due and the server will run it (the input is past the trigger
 * and fits), the guard sends the view whole and the reply's `compaction` block starts the next
 * view (see `LiveEntries`). Where the server cannot (a model without compaction, a history under
 * the minimum, a view over the budget, or a reply that came back without the block), the guard's
 * own summarizer runs as it does without the option, with a `context:warn`.
 */

import { wireFormat } from '../formats/registry.js';
import type { ResolvedRequest } from '../measure/measurer.js';
import type { ProviderCompactionOptions } from '../options.js';

/** The smallest `compact_20260112` trigger the API accepts. */
export const ANTHROPIC_MIN_COMPACTION_TRIGGER = 50_000;
/** The beta header server compaction needs. */
export const ANTHROPIC_COMPACTION_BETA = 'compact-2026-01-12';
/** The beta header context editing (tool-result and thinking clearing) needs. */
export const ANTHROPIC_CONTEXT_EDITING_BETA = 'context-management-2025-06-27';

/**
 * Models the compaction page lists as supporting `compact_20260112` (read 2026-11-26: Claude Opus
 * 4.6 and Sonnet 4.6, and the models released after them; Bedrock's copy of the page lists the
 * same two).
 */
const COMPACTION_MODELS: ReadonlySet<string> = new Set([
  'claude-opus-4-6',
  'claude-sonnet-4-6',
  'claude-opus-4-7',
  'claude-opus-4-8',
  'claude-mythos-preview',
]);

/** Whether a catalog model id supports Anthropic's server-side compaction. */
export function supportsServerCompaction(modelKey: string): boolean {
  return COMPACTION_MODELS.has(modelKey);
}

/** What an Anthropic request adds to its body for the provider's context management. */
export interface AnthropicContextManagement {
  /** The request's `context_management` parameter. */
  context_management: { edits: Array<Record<string, unknown>> };
  /** The beta headers it needs: the SDK's `betas` (`client.beta.messages.create`), or `anthropic-beta`. */
  betas: string[];
}

/**
 * A handoff to the server: where the live history started and how long it was then, and how many
 * handoffs in a row found no compaction block in the reply.
 */
export interface ProviderHandoff {
  compactionSeq: number | undefined;
  entries: number;
  misses: number;
}

/** Whether the request's provider compacts inside a request that asks for it (`serverCompaction`). */
function drivenInRequest(r: ResolvedRequest): boolean {
  return wireFormat(r.format).serverCompaction === 'in-request';
}

/** The policy; one per guard. */
export class ProviderCompaction {
  constructor(
    private readonly options: ProviderCompactionOptions,
    private readonly compactThreshold: number,
    private readonly warn: (code: string, message: string) => void,
  ) {}

  /** The server trigger for a request: contextkit's own, in billed tokens, at least the minimum. */
  trigger(r: ResolvedRequest): number {
    return Math.max(ANTHROPIC_MIN_COMPACTION_TRIGGER, Math.floor(this.compactThreshold * r.declared));
  }

  /** The `context_management` a request carries; null where the provider has none to drive. */
  request(r: ResolvedRequest): AnthropicContextManagement | null {
    if (!drivenInRequest(r) || !supportsServerCompaction(r.modelKey)) return null;
    const edits: Array<Record<string, unknown>> = [];
    const betas = [ANTHROPIC_COMPACTION_BETA];
    const thinking = this.options.clearThinking;
    if (thinking) {
      const keep = thinking === true ? undefined : thinking.keep;
      edits.push({
        type: 'clear_thinking_20251015',
        ...(keep === 'all'
          ? { keep: 'all' }
          : keep !== undefined
            ? { keep: { type: 'thinking_turns', value: keep } }
            : {}),
      });
    }
    const clear = this.options.clearToolUses;
    if (clear) {
      const o = clear === true ? {} : clear;
      edits.push({
        type: 'clear_tool_uses_20250919',
        ...(o.trigger !== undefined ? { trigger: { type: 'input_tokens', value: o.trigger } } : {}),
        ...(o.keep !== undefined ? { keep: { type: 'tool_uses', value: o.keep } } : {}),
        ...(o.clearAtLeast !== undefined
          ? { clear_at_least: { type: 'input_tokens', value: o.clearAtLeast } }
          : {}),
        ...(o.excludeTools !== undefined ? { exclude_tools: [...o.excludeTools] } : {}),
        ...(o.clearToolInputs !== undefined ? { clear_tool_inputs: o.clearToolInputs } : {}),
      });
    }
    if (thinking || clear) betas.push(ANTHROPIC_CONTEXT_EDITING_BETA);
    edits.push({
      type: 'compact_20260112',
      trigger: { type: 'input_tokens', value: this.trigger(r) },
      ...(this.options.instructions !== undefined ? { instructions: this.options.instructions } : {}),
    });
    return { context_management: { edits }, betas };
  }

  /**
   * The handoff when the server compacts this request in contextkit's place (the guard then sends
   * the view whole), given the view's `total` in counted tokens; null when it cannot, said with a
   * `context:warn`. `pending`: the last handoff. The server counts with its own tokenizer, so one
   * reply without the block (its count a hair under the trigger) is handed off again; a second
   * in a row is a failure.
   */
  takes(
    r: ResolvedRequest,
    total: number,
    pending: ProviderHandoff | undefined,
    now: { compactionSeq: number | undefined; entries: number },
  ): ProviderHandoff | null {
    if (!drivenInRequest(r)) return null;
    if (!supportsServerCompaction(r.modelKey)) {
      this.warn(
        'provider_compaction_unavailable',
        `${r.modelKey} has no server-side compaction; contextkit compacts the view itself`,
      );
      return null;
    }
    const missed =
      pending !== undefined && pending.compactionSeq === now.compactionSeq && now.entries > pending.entries;
    const misses = missed ? pending.misses + 1 : 0;
    if (misses >= 2) {
      this.warn(
        'provider_compaction_failed',
        `the replies to the last ${misses} requests carried no compaction block; contextkit compacts the view itself`,
      );
      return null;
    }
    const billed = total * r.correction;
    const trigger = this.trigger(r);
    if (billed <= trigger) {
      this.warn(
        'provider_compaction_unavailable',
        `the view (${Math.round(billed)} tokens) is under the server's ${trigger}-token compaction minimum; contextkit compacts it itself`,
      );
      return null;
    }
    if (total > r.budget) {
      this.warn(
        'provider_compaction_unavailable',
        `the view (${Math.round(billed)} tokens) is over the ${r.declared}-token budget; contextkit compacts it itself`,
      );
      return null;
    }
    return { ...now, misses };
  }
}
