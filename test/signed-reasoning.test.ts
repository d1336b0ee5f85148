/**
 * Issue 30, item 7: signed reasoning survives every edit. Providers verify the reasoning they
 * signed or encrypted and refuse it edited:
 * - Anthropic (platform.claude.com/docs/en/build-with-claude/extended-thinking, "Preserving
 *   thinking blocks"): during tool use "you must pass thinking blocks back to the API, and you must
 *   include the complete unmodified block"; the sequence of thinking blocks cannot be rearranged or
 *   modified; `redacted_thinking` is passed back as it came;
 * - Gemini (ai.google.dev/gemini-api/docs/thought-signatures): return each part with its
 *   `thoughtSignature` exactly where it was, never merging or splitting signed parts; Gemini 3
 *   refuses a function call of the current turn without its signature;
 * - OpenAI (developers.openai.com/api/docs/guides/reasoning, "Keeping reasoning items in context"
 *   with `store: false` and `include: ["reasoning.encrypted_content"]`): a reasoning item goes back
 *   unchanged, with the item it preceded;
 * - Bedrock Converse: `reasoningContent` with its signature, as Anthropic's thinking.
 * So, over generated conversations in each format with signed reasoning, every compaction strategy
 * (clearing, truncation, dedupe, summaries, drops) and budgets from tight to roomy: every signed
 * unit in a view is a stored one byte for byte, in the stored order; what the stored history gives
 * the provider for its latest assistant turn, the view gives too (the fakes check it as the
 * providers do, signatures on); and a view sent to another provider carries none of it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../src/errors.js';
import { toBedrockRequest } from '../src/formats/bedrock/request.js';
import { toGeminiRequest } from '../src/formats/gemini/request.js';
import { ContextManager } from '../src/manager.js';
import type { GeminiMessage } from '../src/messages/gemini-types.js';
import type { Message, MessageFormat } from '../src/messages/types.js';
import type { ContextManagerOptions } from '../src/options.js';
import { blocksConversationArb } from './support/anthropic-blocks-arb.js';
import { bedrockConversationArb } from './support/bedrock-arb.js';
import {
  anthropicRequestProblems,
  type IssuedThinking,
  issueThinking,
  messagesBody,
  signThinking,
} from './support/fake-anthropic-server.js';
import { bedrockRequestProblems } from './support/fake-bedrock-server.js';
import { geminiRequestProblems } from './support/fake-gemini-server.js';
import { responsesRequestProblems } from './support/fake-responses-server.js';
import { geminiConversationArb } from './support/gemini-arb.js';
import { responsesItemsArb } from './support/responses-items-arb.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The signed or encrypted reasoning a message holds, each as its JSON, in order. */
function signedUnits(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (const raw of messages) {
    const m = raw as unknown as Rec;
    if (m.type === 'reasoning') out.push(JSON.stringify(m));
    const blocks = Array.isArray(m.content) ? m.content : Array.isArray(m.parts) ? m.parts : [];
    for (const b of blocks as unknown[]) {
      if (!isRec(b)) continue;
      const signed =
        b.type === 'thinking' ||
        b.type === 'redacted_thinking' ||
        b.thoughtSignature !== undefined ||
        b.thought === true ||
        b.reasoningContent !== undefined;
      if (signed) out.push(JSON.stringify(b));
    }
  }
  return out;
}

/** Whether `sub` is `all` with some items left out (order kept). */
function isSubsequence(sub: readonly string[], all: readonly string[]): boolean {
  let j = 0;
  for (const s of sub) {
    while (j < all.length && all[j] !== s) j++;
    if (j === all.length) return false;
    j++;
  }
  return true;
}

/**
 * What the fake API of `format` refuses in `messages`, with signatures checked and thinking on;
 * Anthropic thinking held to the runs the model output in `stored`.
 */
function strictProblems(
  messages: readonly Message[],
  format: MessageFormat,
  stored: readonly Message[],
): string[] {
  switch (format) {
    case 'anthropic': {
      const issued: IssuedThinking = new Map();
      issueThinking(issued, stored);
      return anthropicRequestProblems(
        messagesBody(messages, { thinking: { type: 'enabled', budget_tokens: 1024 } }),
        { issued },
      );
    }
    case 'openai-responses':
      return responsesRequestProblems({ input: messages });
    case 'gemini': {
      try {
        return geminiRequestProblems(
          { ...toGeminiRequest(messages as GeminiMessage[]) },
          { requireSignatures: true },
        );
      } catch (error) {
        return [String(error)];
      }
    }
    case 'bedrock':
      return bedrockRequestProblems({ ...toBedrockRequest(messages) });
    default:
      return [];
  }
}

const STRATEGIES: NonNullable<ContextManagerOptions['strategy']>[] = [
  'layered',
  'summarize',
  'truncate',
  'smart',
];
const FORMATS: MessageFormat[] = ['openai', 'openai-responses', 'anthropic', 'gemini', 'bedrock'];

function models(format: MessageFormat): string {
  return format === 'anthropic' || format === 'bedrock'
    ? 'claude-sonnet-4-6'
    : format === 'gemini'
      ? 'gemini-2.5-pro'
      : 'gpt-5';
}

/** What the runs exercised: views made by a compaction, and those that still carried signed reasoning. */
const tally = { compacted: 0, signedShown: 0, signedLeft: 0, cleared: 0, truncated: 0, summarized: 0 };

async function checkConversation(
  messages: readonly Message[],
  format: MessageFormat,
  strategy: NonNullable<ContextManagerOptions['strategy']>,
  share: number,
  keepToolResults: number,
  pick = 0,
): Promise<void> {
  const others = FORMATS.filter((f) => f !== format);
  const target = others[pick % others.length]!;
  const ctx = new ContextManager({ model: models(format), strategy, keepToolResults });
  const stored: Message[] = [];
  for (const m of messages) {
    await ctx.addMessage(m);
    stored.push(m);
    if (!stored.some((x) => x.role !== 'system')) continue;
    const whole = await ctx.getTokenCount();
    const budget = Math.max(400, Math.floor(whole * share));
    let view: Message[];
    try {
      view = await ctx.getMessagesForRequest({ tokenBudget: budget });
    } catch (error) {
      if (error instanceof Error && /Context(Overflow|Declined)Error/.test(error.name)) continue;
      throw error;
    }
    const all = signedUnits(await ctx.getMessages());
    const shown = signedUnits(view);
    const plan = ctx.currentPlan();
    if (plan !== null) {
      tally.compacted++;
      if (plan.cleared.length > 0) tally.cleared++;
      if (plan.truncated.length > 0) tally.truncated++;
      if (plan.summary !== undefined) tally.summarized++;
      if (shown.length > 0) tally.signedShown++;
      if (shown.length < all.length) tally.signedLeft++;
    }
    // Byte for byte, in the stored order, or not at all.
    expect(isSubsequence(shown, all), `${format}/${strategy}: ${JSON.stringify(shown)}`).toBe(true);
    // What the stored history gives the provider (its latest turn's reasoning, every signature),
    // the view gives too.
    if (strictProblems(stored, format, stored).length === 0)
      expect(strictProblems(view, format, stored)).toEqual([]);
    // Another provider gets none of it.
    let other: Message[];
    try {
      other = await ctx.getMessagesForRequest({ tokenBudget: budget, provider: target });
    } catch (error) {
      if (error instanceof Error && /Context(Overflow|Declined)Error/.test(error.name)) continue;
      // Content with no counterpart in the other format (server tools, audio, guard content) is
      // refused by name; signed reasoning never is: it is left out whole.
      if (error instanceof InvalidMessageError && error.code === 'not_convertible') {
        expect(error.message).not.toMatch(/thinking|thought|reasoning|signature/i);
        continue;
      }
      throw error;
    }
    expect(signedUnits(other)).toEqual([]);
    expect(JSON.stringify(other)).not.toMatch(
      /"(signature|thoughtSignature|encrypted_content|redactedContent)"/,
    );
  }
}

const RUNS = Number(process.env.PROPERTY_RUNS ?? 12);
const shareArb = fc.constantFrom(0.15, 0.3, 0.5, 0.8, 1.2);
const settingsArb = fc.record({
  strategy: fc.constantFrom(...STRATEGIES),
  share: shareArb,
  keepToolResults: fc.constantFrom(0, 1, 3),
  pick: fc.nat(),
});

describe('the fake Messages API holds thinking to what the model output', () => {
  const think = (text: string) => ({ type: 'thinking', thinking: text, signature: signThinking(text) });
  const a = think('First I read the file.');
  const b = think('Then I check the tests.');
  const r = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' };
  const call = { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } };
  const output = [{ role: 'assistant', content: [a, r, b, call] }];
  const request = (content: unknown[]) =>
    messagesBody([
      { role: 'user', content: 'Fix a.ts' },
      { role: 'assistant', content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    ]);
  const issued: IssuedThinking = new Map();
  issueThinking(issued, output);

  it('accepts the run as it came', () => {
    expect(anthropicRequestProblems(request([a, r, b, call]), { issued })).toEqual([]);
  });

  it.each([
    ['rearranged', [b, r, a, call]],
    ['cut', [a, b, call]],
    ['a redacted block with other data', [a, { ...r, data: 'EmwKAhgBEgy3va3pzix/LafPsn4b' }, b, call]],
    ['an edited thinking text', [{ ...a, thinking: 'First I read the files.' }, r, b, call]],
  ])('refuses a run %s', (_what, content) => {
    expect(anthropicRequestProblems(request(content as unknown[]), { issued })).not.toEqual([]);
  });
});

describe('property: signed reasoning in a view is the stored reasoning, whole, in order, or absent', () => {
  it('Anthropic thinking and redacted_thinking', async () => {
    await fc.assert(
      fc.asyncProperty(blocksConversationArb, settingsArb, async (conv, s) => {
        await checkConversation(conv.messages, 'anthropic', s.strategy, s.share, s.keepToolResults, s.pick);
      }),
      { numRuns: RUNS },
    );
  }, 300_000);

  it('Gemini thought parts and thought signatures', async () => {
    await fc.assert(
      fc.asyncProperty(geminiConversationArb(), settingsArb, async (messages, s) => {
        await checkConversation(messages, 'gemini', s.strategy, s.share, s.keepToolResults, s.pick);
      }),
      { numRuns: RUNS },
    );
  }, 300_000);

  it('OpenAI Responses reasoning items with encrypted_content', async () => {
    await fc.assert(
      fc.asyncProperty(
        responsesItemsArb({ kinds: ['chat', 'reasoning-call', 'parallel', 'media', 'refusal'] }),
        settingsArb,
        async (messages, s) => {
          await checkConversation(
            messages,
            'openai-responses',
            s.strategy,
            s.share,
            s.keepToolResults,
            s.pick,
          );
        },
      ),
      { numRuns: RUNS },
    );
  }, 300_000);

  it('Bedrock reasoningContent', async () => {
    await fc.assert(
      fc.asyncProperty(bedrockConversationArb({ maxTurns: 6 }), settingsArb, async (messages, s) => {
        await checkConversation(messages, 'bedrock', s.strategy, s.share, s.keepToolResults, s.pick);
      }),
      { numRuns: RUNS },
    );
  }, 300_000);

  it('huge tool results (truncated in their own shape), Gemini and Responses', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          geminiConversationArb({ huge: true, kinds: ['call', 'parallel', 'steps'] }).map((m) => ({
            messages: m,
            format: 'gemini' as MessageFormat,
          })),
          responsesItemsArb({ huge: true, kinds: ['reasoning-call', 'parallel'] }).map((m) => ({
            messages: m,
            format: 'openai-responses' as MessageFormat,
          })),
        ),
        settingsArb,
        async (conv, s) => {
          await checkConversation(conv.messages, conv.format, s.strategy, s.share, s.keepToolResults, s.pick);
        },
      ),
      { numRuns: Math.max(2, Math.floor(RUNS / 3)) },
    );
  }, 600_000);

  it('the runs compacted views that kept some signed reasoning and left some out', () => {
    expect(tally.compacted).toBeGreaterThan(0);
    expect(tally.signedShown).toBeGreaterThan(0);
    expect(tally.signedLeft).toBeGreaterThan(0);
    // Every kind of edit ran beside signed reasoning.
    expect(tally.cleared).toBeGreaterThan(0);
    expect(tally.truncated).toBeGreaterThan(0);
    expect(tally.summarized).toBeGreaterThan(0);
  });
});
