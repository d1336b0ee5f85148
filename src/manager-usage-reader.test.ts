import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from './errors.js';
import { usageFromBedrock } from './formats/bedrock/request.js';
import { appliedEditsOf } from './guard/applied-edits.js';
import { ContextManager, type Usage } from './manager.js';
import { ContextMeasurer } from './measure/measurer.js';
import type { Message } from './messages/types.js';
import {
  type UsageCounts,
  type UsageSample,
  usageFromAnthropic,
  usageFromGemini,
  usageFromOpenAI,
} from './meter/usage.js';
import { usageSource } from './meter/usage-reader.js';

/** A short OpenAI-format conversation, the same for every manager compared. */
function conversation(): Message[] {
  const out: Message[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let i = 0; i < 6; i++) {
    out.push({ role: 'user', content: `Question ${i}: what does step ${i} of the build do, in detail?` });
    out.push({
      role: 'assistant',
      content: `Step ${i} compiles module ${i} and writes its output to dist/${i}.`,
    });
  }
  return out;
}

/** The figures of `usage()` that do not depend on the clock (when the request was billed). */
function figures(ctx: ContextManager): Usage {
  const usage = ctx.usage();
  if (usage.cost) usage.cost.last = { ...usage.cost.last, at: 0 };
  return usage;
}

async function managerAfterOneRequest(model: string): Promise<ContextManager> {
  const ctx = new ContextManager({ model });
  await ctx.addMessages(conversation());
  await ctx.getMessagesForRequest();
  return ctx;
}

/** contextkit's own counts of a sample, as a caller would report them by hand. */
function countsOf(s: UsageSample): UsageCounts {
  return {
    ...(s.model !== undefined ? { model: s.model } : {}),
    inputTokens: s.inputTokens,
    cacheReadTokens: s.cacheReadTokens,
    cacheWriteTokens: s.cacheWriteTokens,
    ...(s.iterations ? { iterations: s.iterations } : {}),
  };
}

/** A provider: the model its manager uses, its reader, and its response billing `t` input tokens. */
interface Provider {
  name: string;
  model: string;
  read: (response: unknown) => UsageSample;
  respond: (t: number) => object;
}

// Each response bills 30% over the estimate (Anthropic's and Bedrock's with part of it cached).
const PROVIDERS: Provider[] = [
  {
    name: 'OpenAI Chat Completions',
    model: 'gpt-4o',
    read: usageFromOpenAI,
    respond: (t) => ({
      model: 'gpt-4o-2024-08-06',
      usage: { prompt_tokens: t, prompt_tokens_details: { cached_tokens: 0 } },
    }),
  },
  {
    name: 'OpenAI Responses',
    model: 'gpt-4o',
    read: usageFromOpenAI,
    respond: (t) => ({
      model: 'gpt-4o',
      output: [],
      usage: { input_tokens: t, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9 },
    }),
  },
  {
    name: 'Anthropic Messages',
    model: 'claude-sonnet-4-5',
    read: usageFromAnthropic,
    respond: (t) => ({
      model: 'claude-sonnet-4-5-20250929',
      usage: { input_tokens: t - 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 40 },
    }),
  },
  {
    name: 'Gemini',
    model: 'gemini-2.5-flash',
    read: usageFromGemini,
    respond: (t) => ({
      modelVersion: 'gemini-2.5-flash',
      usageMetadata: { promptTokenCount: t, candidatesTokenCount: 4 },
    }),
  },
  {
    name: 'Bedrock Converse',
    model: 'claude-sonnet-4-5',
    read: usageFromBedrock,
    respond: (t) => ({
      output: { message: { role: 'assistant', content: [{ text: 'ok' }] } },
      usage: { inputTokens: t - 40, cacheWriteInputTokens: 40, outputTokens: 3 },
    }),
  },
];

describe('recordUsage: one reader for every provider (issue 34 item 1)', () => {
  for (const p of PROVIDERS) {
    it(`${p.name}: the response gives what its usage in contextkit's counts gives`, async () => {
      const a = await managerAfterOneRequest(p.model);
      const b = await managerAfterOneRequest(p.model);
      const estimate = a.usage().tokens;
      expect(b.usage().tokens).toBe(estimate);
      const response = p.respond(Math.round(estimate * 1.3));
      await a.recordUsage(response);
      await b.recordUsage(countsOf(p.read(response)));
      // The same cache comparison beside the meter's prediction…
      expect(a.usage().cost?.reported).toBeDefined();
      expect(figures(a)).toEqual(figures(b));
      // …and the same correction learned for the next request.
      await a.getMessagesForRequest();
      await b.getMessagesForRequest();
      expect(figures(a)).toEqual(figures(b));
      expect(a.usage().tokens).toBeGreaterThan(estimate);
    });

    it(`${p.name}: with the messages billed, the same correction`, async () => {
      const a = await managerAfterOneRequest(p.model);
      const b = await managerAfterOneRequest(p.model);
      const estimate = a.usage().tokens;
      const response = p.respond(Math.round(estimate * 1.3));
      const messages = await a.getMessages();
      await a.recordUsage(response, messages);
      await b.recordUsage(countsOf(p.read(response)), messages);
      await a.getMessagesForRequest();
      await b.getMessagesForRequest();
      expect(figures(a)).toEqual(figures(b));
    });
  }

  it('Anthropic: usage.iterations are metered and applied context edits reported, as recordAnthropicUsage did', async () => {
    const a = await managerAfterOneRequest('claude-sonnet-4-5');
    const b = await managerAfterOneRequest('claude-sonnet-4-5');
    const sent = a.usage().tokens;
    const response = {
      model: 'claude-sonnet-4-5',
      usage: {
        input_tokens: 90,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        output_tokens: 5,
        iterations: [
          { type: 'compaction', input_tokens: sent, output_tokens: 70 },
          { type: 'message', input_tokens: 90, output_tokens: 5 },
        ],
      },
      context_management: {
        applied_edits: [
          { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 800 },
        ],
      },
    };
    const events: Array<{ iterations?: unknown; appliedEdits?: unknown }> = [];
    const counted: Array<{ iterations?: unknown; appliedEdits?: unknown }> = [];
    a.on('context:provider_context', (e) => events.push(e));
    b.on('context:provider_context', (e) => counted.push(e));
    await a.recordUsage(response);
    await b.recordUsage(countsOf(usageFromAnthropic(response)));
    expect(figures(a)).toEqual(figures(b));
    expect(a.usage().cost?.totals.serverCompactions).toEqual({ count: 1, outputTokens: 70 });
    expect(events).toHaveLength(1);
    expect(events[0]?.iterations).toEqual(counted[0]?.iterations);
    // Counts carry no edits; the response's are read as `appliedEditsOf` reads them.
    expect(counted[0]?.appliedEdits).toBeUndefined();
    expect(events[0]?.appliedEdits).toEqual(appliedEditsOf(response));
  });

  it('tells contextkit counts and each provider apart, whole responses and bare usage objects', () => {
    expect(usageSource({ inputTokens: 5, cacheReadTokens: 1 })).toBe('counts');
    expect(usageSource({ usage: { prompt_tokens: 5 } })).toBe('openai');
    expect(usageSource({ prompt_tokens: 5 })).toBe('openai');
    expect(usageSource({ input_tokens: 5, input_tokens_details: { cached_tokens: 0 } })).toBe('openai');
    expect(usageSource({ usage: { input_tokens: 5, cache_read_input_tokens: 0 } })).toBe('anthropic');
    expect(usageSource({ input_tokens: 5 })).toBe('anthropic');
    expect(usageSource({ usageMetadata: { promptTokenCount: 5 } })).toBe('gemini');
    expect(usageSource({ promptTokenCount: 5 })).toBe('gemini');
    expect(usageSource({ usage: { inputTokens: 5, outputTokens: 1 } })).toBe('bedrock');
    expect(usageSource({ inputTokens: 5, outputTokens: 1, totalTokens: 6 })).toBe('bedrock');
  });

  it('refuses an unreadable usage by the field, as before', async () => {
    const ctx = await managerAfterOneRequest('gpt-4o');
    await expect(ctx.recordUsage({ inputTokens: -1 })).rejects.toThrow(/usage\.inputTokens/);
    await expect(ctx.recordUsage({ usage: { prompt_tokens: 1.5 } })).rejects.toThrow(/usage\.prompt_tokens/);
    await expect(ctx.recordUsage({ usageMetadata: { promptTokenCount: -2 } })).rejects.toThrow(
      /usageMetadata\.promptTokenCount/,
    );
    await expect(ctx.recordUsage({})).rejects.toThrow(/usage\.inputTokens/);
  });
});

describe('the per-provider names are gone', () => {
  it('ContextManager.recordOpenAIUsage and recordAnthropicUsage reject, naming recordUsage', async () => {
    const ctx = await managerAfterOneRequest('gpt-4o');
    const before = ctx.usage();
    const response = { model: 'gpt-4o', usage: { prompt_tokens: 9, completion_tokens: 1 } };
    await expect(ctx.recordOpenAIUsage(response)).rejects.toThrow(InvalidArgumentError);
    await expect(ctx.recordOpenAIUsage(response)).rejects.toThrow(
      /recordOpenAIUsage was removed: call recordUsage/,
    );
    await expect(ctx.recordAnthropicUsage({ usage: { input_tokens: 9 } })).rejects.toThrow(
      /recordAnthropicUsage was removed: call recordUsage\(response\)/,
    );
    expect(ctx.usage()).toEqual(before);
  });

  it('ContextMeasurer.recordOpenAIUsage and recordAnthropicUsage reject, naming recordUsage', async () => {
    const measurer = new ContextMeasurer({ model: 'gpt-4o' });
    await expect(measurer.recordOpenAIUsage({ usage: { prompt_tokens: 9 } })).rejects.toThrow(
      /recordOpenAIUsage was removed: call recordUsage/,
    );
    await expect(measurer.recordAnthropicUsage({ usage: { input_tokens: 9 } })).rejects.toThrow(
      /recordAnthropicUsage was removed: call recordUsage/,
    );
  });
});
