/**
 * An agent session against the fake Responses API (fake-responses-server.ts): user turns, a tool
 * call with its output on a third of them, the reply of each request added with
 * `addOpenAIResponse`. Run three ways for issue 22: contextkit's own compaction, contextkit
 * driving `/responses/compact` (`providerCompaction`), and the server's compaction
 * (`context_management` with `compact_threshold`). Shared by test/openai-compaction.test.ts and
 * `npm run bench -- cost`.
 */

import { addOpenAIResponse } from '../../src/integrations/providers.js';
import { ContextManager } from '../../src/manager.js';
import type { ResponsesItem } from '../../src/messages/responses-types.js';
import { BUILTIN_PRICING } from '../../src/tokens/pricing.js';
import { seededRandom } from './arbitraries.js';
import { startFakeResponses } from './fake-responses-server.js';

/** Who compacts. */
export type CompactionMode = 'contextkit' | 'compact endpoint' | 'server';

export interface SessionFigures {
  requests: number;
  /** Model calls the server compacted, and `/responses/compact` calls. */
  serverCompactions: number;
  compactCalls: number;
  /** contextkit's own plans (`context:post_compact`). */
  plans: number;
  /** Input tokens the server billed in all, and of them read from the cache. */
  input: number;
  cached: number;
  /** Output tokens the compactions wrote (billed as output). */
  compactionOutput: number;
  /** Input and compaction output priced by the model's rates (USD). */
  billedPrice: number;
  /** The cost meter's input total for the model calls (USD), beside the server's input price. */
  meterPrice: number;
  serverInputPrice: number;
  /** The worst |counted − billed| ÷ billed input over the model calls. */
  worstCount: number;
  /** Every item added is stored (false: some were lost). */
  stored: boolean;
  refused: number;
}

const WORDS = ['order', 'refund', 'window', 'ticket', 'parcel', 'invoice', 'agent', 'route', 'note'];

async function post(url: string, body: unknown): Promise<{ ok: boolean; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { ok: res.ok, json: (await res.json()) as Record<string, unknown> };
}

/** Runs `turns` turns with `mode`; `threshold` is the server's `compact_threshold` in `server` mode. */
export async function openaiCompactionSession(options: {
  turns: number;
  mode: CompactionMode;
  budget: number;
  threshold?: number;
  model?: string;
  seed?: number;
}): Promise<SessionFigures> {
  const model = options.model ?? 'gpt-5';
  let clock = Date.parse('2026-03-01T00:00:00Z');
  const fake = await startFakeResponses({ now: () => clock });
  const compact = async (input: unknown) => {
    const reply = await post(`${fake.url}/v1/responses/compact`, input);
    if (!reply.ok) throw new Error(JSON.stringify(reply.json));
    return reply.json as { output: ResponsesItem[] };
  };
  const ctx = new ContextManager({
    model,
    now: () => new Date(clock),
    ...(options.mode === 'compact endpoint' ? { providerCompaction: { compact } } : {}),
  });
  let plans = 0;
  ctx.on('context:post_compact', () => {
    plans++;
  });
  const r = seededRandom(options.seed ?? 22);
  const pricing = BUILTIN_PRICING[model]!;
  const figures: SessionFigures = {
    requests: 0,
    serverCompactions: 0,
    compactCalls: 0,
    plans: 0,
    input: 0,
    cached: 0,
    compactionOutput: 0,
    billedPrice: 0,
    meterPrice: 0,
    serverInputPrice: 0,
    worstCount: 0,
    stored: false,
    refused: 0,
  };
  let added = 0;
  const text = (min: number, max: number) =>
    Array.from({ length: r.int(min, max) }, () => WORDS[r.int(0, WORDS.length - 1)]).join(' ');
  try {
    await ctx.addMessage({ role: 'developer', content: 'You are an operations agent. Use the tools.' });
    added++;
    for (let turn = 0; turn < options.turns; turn++) {
      clock += r.int(5, 60) * 1000;
      await ctx.addMessage({ role: 'user', content: `turn ${turn}: ${text(20, 120)}` });
      added++;
      if (r.int(0, 2) === 0) {
        const id = `call_${turn}`;
        await ctx.addMessage({
          type: 'function_call',
          call_id: id,
          name: 'lookup',
          arguments: `{"turn":${turn}}`,
        });
        await ctx.addMessage({ type: 'function_call_output', call_id: id, output: text(50, 400) });
        added += 2;
      }
      const input = await ctx.getMessagesForRequest({ tokenBudget: options.budget });
      const counted = ctx.usage().tokens;
      const body: Record<string, unknown> = { model, input };
      if (options.mode === 'server')
        body.context_management = [{ type: 'compaction', compact_threshold: options.threshold }];
      const reply = await post(`${fake.url}/v1/responses`, body);
      if (!reply.ok) {
        figures.refused++;
        continue;
      }
      const bill = fake.bills.at(-1)!;
      figures.requests++;
      figures.worstCount = Math.max(figures.worstCount, Math.abs(counted - bill.input) / bill.input);
      figures.serverInputPrice +=
        ((bill.input - bill.cached) * pricing.input + bill.cached * pricing.cacheRead) / 1e6;
      added += (await addOpenAIResponse(ctx, reply.json as { output: unknown[] })).length;
    }
    for (const bill of fake.bills) {
      figures.input += bill.input;
      figures.cached += bill.cached;
      figures.compactionOutput += bill.compactionOutput;
      if (bill.path === '/v1/responses/compact') figures.compactCalls++;
      else if (bill.compacted) figures.serverCompactions++;
    }
    figures.billedPrice =
      ((figures.input - figures.cached) * pricing.input +
        figures.cached * pricing.cacheRead +
        figures.compactionOutput * pricing.output) /
      1e6;
    figures.meterPrice = ctx.usage().cost?.totals.price ?? 0;
    figures.plans = plans;
    figures.stored = (await ctx.getMessages()).length === added;
    return figures;
  } finally {
    await fake.close();
  }
}
