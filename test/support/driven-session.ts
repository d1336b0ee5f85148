/**
 * An agent session against the fake Messages API with contextkit driving the server's compaction
 * (`providerCompaction`): what the test and the cost bench measure.
 */

import { toAnthropicRequest } from '../../src/formats/anthropic/request.js';
import { addAnthropicResponse } from '../../src/integrations/providers.js';
import type { ContextManager } from '../../src/manager.js';
import { seededRandom } from './arbitraries.js';

/** The model the session talks to (one with server compaction). */
export const MODEL = 'claude-sonnet-4-6';

/** POSTs a Messages request to the fake with its beta headers. */
export async function postMessages(
  url: string,
  body: Record<string, unknown>,
  betas: readonly string[] = [],
) {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-beta': betas.join(',') },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const WORDS = ['order', 'refund', 'ship', 'window', 'ticket', 'invoice', 'account', 'retry', 'path', 'note'];

/** One turn's user text: a numbered fact (found later by recall) and filler. */
export function userText(turn: number, r: ReturnType<typeof seededRandom>): string {
  const filler = Array.from({ length: r.int(250, 600) }, () => WORDS[r.int(0, WORDS.length - 1)]).join(' ');
  return `turn ${turn}: the code word of turn ${turn} is zq${turn}x. ${filler}`;
}

export interface SessionFigures {
  turns: number;
  serverCompactions: number;
  ownCompactions: number;
  worstCountError: number;
  meterInput: number;
  billedInput: number;
  stored: number;
  added: number;
  refused: number;
}

/**
 * How each request is made: `manager` from `getAnthropicRequest` (with `providerCompaction` on,
 * contextkit drives the server's compaction; off, it compacts itself); `provider-default` sends the
 * whole stored history with the one-line switch (`compact_20260112` at its default trigger).
 */
export type SessionMode = 'manager' | 'provider-default';

const DEFAULT_SWITCH = { context_management: { edits: [{ type: 'compact_20260112' }] } };

/**
 * A session of `turns` user turns (every fifth with a tool exchange): each reply added with
 * `addAnthropicResponse`.
 */
export async function drivenSession(
  url: string,
  turns: number,
  ctx: ContextManager,
  tokenBudget: number,
  mode: SessionMode = 'manager',
): Promise<SessionFigures> {
  const r = seededRandom(22);
  let ownCompactions = 0;
  let serverCompactions = 0;
  ctx.on('context:post_compact', () => ownCompactions++);
  ctx.on('context:provider_context', (e) => {
    if (e.compactionSeq !== undefined) serverCompactions++;
  });
  let worst = 0;
  let billed = 0;
  let added = 0;
  let refused = 0;
  for (let turn = 0; turn < turns; turn++) {
    await ctx.addMessage({ role: 'user', content: userText(turn, r) });
    added++;
    if (turn % 5 === 4) {
      await ctx.addMessage({
        role: 'assistant',
        content: [{ type: 'tool_use', id: `t${turn}`, name: 'lookup', input: { turn } }],
      });
      await ctx.addMessage({
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: `t${turn}`,
            content: `record ${turn}: ${userText(turn, r).slice(0, 600)}`,
          },
        ],
      });
      added += 2;
    }
    const { betas, ...body } =
      mode === 'manager'
        ? await ctx.getAnthropicRequest({ tokenBudget })
        : {
            ...toAnthropicRequest(await ctx.getMessages()),
            ...DEFAULT_SWITCH,
            betas: ['compact-2026-01-12'],
          };
    const counted = mode === 'manager' ? ctx.usage().tokens : 0;
    const res = await postMessages(url, { model: MODEL, max_tokens: 1024, ...body }, betas ?? []);
    if (res.status !== 200) {
      refused++;
      continue;
    }
    const usage = res.json.usage as { input_tokens: number; iterations?: Array<{ input_tokens: number }> };
    const carried = usage.iterations ? usage.iterations[0]!.input_tokens : usage.input_tokens;
    billed += usage.iterations
      ? usage.iterations.reduce((s, it) => s + it.input_tokens, 0)
      : usage.input_tokens;
    // After the first few replies the correction has learned the fake's count; compare from then on.
    if (turn >= 3 && mode === 'manager') worst = Math.max(worst, Math.abs(counted - carried) / carried);
    await addAnthropicResponse(ctx, res.json);
    added++;
  }
  return {
    turns,
    serverCompactions,
    ownCompactions,
    worstCountError: worst,
    meterInput: ctx.usage().cost?.totals.inputTokens ?? 0,
    billedInput: billed,
    stored: (await ctx.getMessages()).length,
    added,
    refused,
  };
}
