/**
 * A hostile summary-ahead reply (issue 31, item 13): 200,000 fact items within `maxReplyBytes`
 * were validated in one 209 ms synchronous stretch, off the request path but on whatever else the
 * process serves. Whatever the reply holds, no stretch between two turns of the event loop may
 * take over 50 ms of CPU: reading the reply, checking its facts, or using them at the compaction.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { withLongestStretch } from '../../test/support/cpu-time.js';
import type { HistoryEntry } from '../messages/types.js';
import { createOpenAITools, type MemoryRequest, type PreparingTools } from '../tools/llm.js';
import { MAX_FACT_ITEMS } from '../tools/llm-prompts.js';
import type { ContextTools, SummarizeOptions } from '../tools/types.js';
import { type AheadState, emptyAheadState, type Preparation, SummaryAhead } from './summary-ahead.js';

const MAX_STRETCH_MS = 50;
const WORDS_PER_ENTRY = 250;
const WORDS = 200 * WORDS_PER_ENTRY;

/** 200 entries of 250 distinct words each: `w0`…`w49999`. */
const stored: HistoryEntry[] = Array.from({ length: 200 }, (_, seq) => ({
  seq,
  message: {
    role: seq % 2 === 0 ? 'user' : 'assistant',
    content: Array.from({ length: WORDS_PER_ENTRY }, (_, i) => `w${seq * WORDS_PER_ENTRY + i}`).join(' '),
  },
  metadata: { timestamp: '2026-01-01T00:00:00.000Z' },
}));

/** 200,000 fact items, every one true: its value is a word of the entries, the last ones first. */
const FACTS: readonly unknown[] = Array.from({ length: 200_000 }, (_, i) => ({
  value: `w${WORDS - 1 - (i % WORDS)}`,
}));

/** `bytes` as a stream of 64 KiB chunks. */
function chunked(bytes: Buffer): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(new Uint8Array(bytes.subarray(at, at + 64 * 1024)));
      at += 64 * 1024;
    },
  });
}

const OPTIONS: SummarizeOptions = { maxTokens: 4000, countText: (t) => Math.ceil(t.length / 4) };

/** LLM tools answering every call with `body`, served in 64 KiB chunks as a socket delivers it. */
function toolsAnswering(body: string): PreparingTools {
  // Encoded once, here: the fake server's work is not the reply's reading.
  const bytes = Buffer.from(body);
  return createOpenAITools({
    baseURL: 'http://127.0.0.1:9/v1',
    apiKey: 'sk-test-hostile-key',
    model: 'gpt-4o-mini',
    fetch: async () => new Response(chunked(bytes), { headers: { 'content-type': 'application/json' } }),
    // Offline tools that answer at once: what is measured is the model's reply.
    fallback: { kind: 'offline', summarize: async () => '', extractFacts: async () => [] },
  });
}

function replyBody(content: string): string {
  return JSON.stringify({ choices: [{ message: { content }, finish_reason: 'stop' }] });
}

describe('a hostile summary-ahead reply', () => {
  beforeAll(async () => {
    // One-time work (compiling the modules' code, the first Response and stream) is not a reply's.
    const tools = toolsAnswering(replyBody(JSON.stringify({ summary: 'Warm.', facts: [{ value: 'w1' }] })));
    await tools.prepareMemory({ summaryEntries: stored.slice(0, 2), factEntries: [], maxTokens: 100 });
  });

  it('a reply of 200,000 fact items within maxReplyBytes is read with no stretch over 50 ms', async () => {
    const content = JSON.stringify({ summary: 'The user listed words.', facts: FACTS });
    const body = replyBody(content);
    expect(body.length).toBeLessThan(8 * 1024 * 1024); // within the default maxReplyBytes
    const tools = toolsAnswering(body);
    const request: MemoryRequest = {
      summaryEntries: stored.slice(0, 100),
      factEntries: stored,
      maxTokens: 4000,
    };
    const { result, longestMs } = await withLongestStretch(() =>
      tools.prepareMemory(request).then(
        (memory) => ({ memory, error: undefined }),
        (error: Error) => ({ memory: undefined, error }),
      ),
    );
    expect(longestMs).toBeLessThan(MAX_STRETCH_MS);
    // Far more text than the output tokens asked for can hold: refused, naming why.
    expect(result.error?.message).toMatch(
      /byte cap of a reply of 8096 output tokens \(more than they can hold/,
    );
  });

  it('a reply as long as its output tokens allow keeps its first MAX_FACT_ITEMS items, quickly', async () => {
    // 8,096 output tokens (4,000 of summary, 4,096 of facts) at 32 characters each, filled with items.
    const items = FACTS.slice(0, 13_000);
    const content = JSON.stringify({ summary: 'The user listed words.', facts: items });
    expect(content.length).toBeLessThan(8096 * 32);
    const tools = toolsAnswering(replyBody(content));
    const { result, longestMs } = await withLongestStretch(() =>
      tools.prepareMemory({ summaryEntries: stored.slice(0, 100), factEntries: stored, maxTokens: 4000 }),
    );
    expect(longestMs).toBeLessThan(MAX_STRETCH_MS);
    expect(result.facts).toHaveLength(MAX_FACT_ITEMS);
  });

  it('200,000 fact items from the model are checked in slices and used at the compaction quickly', async () => {
    const tools: PreparingTools = {
      kind: 'model',
      summarize: () => Promise.reject(new Error('asked on the request path')),
      extractFacts: () => Promise.resolve([]),
      prepareMemory: async () => ({ summary: 'The user listed words.', facts: [...FACTS] }),
    };
    // Offline tools that answer at once: what is measured is the model's reply, not the offline summary.
    const offline: ContextTools = {
      kind: 'offline',
      summarize: async () => 'Earlier: the user listed words.',
      extractFacts: async () => [],
    };
    const ahead = new SummaryAhead(tools, offline, 0.76, 0.32, () => undefined);
    const state: AheadState = emptyAheadState();
    const range = stored.slice(0, 100);
    const found: Preparation = {
      seqs: new Set(range.map((e) => e.seq)),
      calls: {
        summary: { entries: range, options: OPTIONS },
        factEntries: new Map(stored.map((e) => [e.seq, e])),
      },
      spec: null,
      settled: true,
      generation: 0,
      usage: 0.5,
    };
    const { longestMs: preparing } = await withLongestStretch(async () => {
      ahead.prepare(state, null, found);
      await ahead.writeFallback(state);
      // Until the model's answer is checked and kept.
      for (let i = 0; i < 10_000 && !state.job?.model?.memory; i++) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    expect(state.job?.model?.memory).toBeDefined();
    expect(preparing).toBeLessThan(MAX_STRETCH_MS);
    const { result: facts, longestMs: using } = await withLongestStretch(async () => {
      const compaction = ahead.compactionTools(state, null, stored, 0);
      return compaction.modelFacts(stored);
    });
    expect(using).toBeLessThan(MAX_STRETCH_MS);
    // At most MAX_FACT_ITEMS of a reply are kept, each where its value is.
    expect(facts.length).toBe(MAX_FACT_ITEMS);
    for (const fact of facts) {
      expect(stored[fact.seq]!.message.content as string).toContain(fact.value);
    }
  });
});
