import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { ConfigurationError, ContextOverflowError } from './errors.js';
import { ContextGuard } from './guard/guard.js';
import { ContextManager, type ContextManagerOptions } from './manager.js';
import { ContextMeasurer } from './measure/measurer.js';
import { DEFAULTS, ECONOMY_PRESETS } from './options.js';
import { messageText } from './wire/content.js';
import { validateRequest } from './wire/validate-request.js';

const FORMATS = ['openai', 'anthropic'] as const;

const refused = (options: unknown) => {
  try {
    new ContextManager(options as ContextManagerOptions);
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('option values a manager cannot work with', () => {
  it.each([
    [
      { strategy: 'smrt' },
      /strategy: "smrt" is not one of "summarize", "truncate", "smart", "layered", or a function/,
    ],
    [{ strategy: 'simple' }, /strategy: "simple" is not one of/],
    [{ facts: 'bogus' }, /facts: "bogus" is not one of "system", "first-user", "none"/],
    [{ summaryRole: 'developer' }, /summaryRole: "developer" is not one of "user", "system"/],
    [{ readOnlyTools: 'read_file' }, /readOnlyTools: expected an array of tool names, got "read_file"/],
    [{ sideEffectTools: ['edit', 3] }, /sideEffectTools\[1\]: expected a tool name, got 3/],
    [{ preserveSystem: 'yes' }, /preserveSystem: expected true or false, got "yes"/],
    [{ recentCount: 0 }, /recentCount: must be a whole number ≥ 1/],
    [{ guard: { warnAt: 2 } }, /guard\.warnAt: must be in \(0, 1\]/],
    [{ guard: { warnat: 0.5 } }, /guard\.warnat: is not an option; did you mean warnAt\?/],
    [{ clearing: { keep: -1 } }, /clearing\.keep: must be a whole number ≥ 0/],
    [{ llm: { provider: 'mistral' } }, /llm\.provider: "mistral" is not one of "openai", "anthropic"/],
    [{ criticalFloor: 0 }, /criticalFloor: must be in \(0, 1\]/],
    [{ maxCompactRetries: 1.5 }, /maxCompactRetries: must be a whole number ≥ 0/],
    [{ exactCountAt: Number.NaN }, /exactCountAt: expected a finite number, got NaN/],
    [{ summaryShare: 0 }, /summaryShare: must be in \(0, 1\]/],
    // Renamed before 1.0 (issue 34: "memory" names the memory tool only): refused, naming the new name.
    [{ memoryShare: 0.3 }, /memoryShare: was renamed: pass summaryShare/],
    [
      { summaryShare: 0.5, targetUsage: 0.4 },
      /summaryShare: \(0\.5\) must not be above targetUsage \(0\.4\)/,
    ],
    [
      { tools: { summarize: () => '' } },
      /tools: expected an object with summarize, extractFacts; missing extractFacts/,
    ],
  ])('refuses %j naming the option and what it accepts', (options, pattern) => {
    const error = refused(options);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(pattern);
  });

  it('refuses a name that is not an option, suggesting the one meant', () => {
    expect((refused({ compactTreshold: 0.9 }) as Error).message).toBe(
      'compactTreshold: is not an option; did you mean compactThreshold?',
    );
    expect((refused({ compact_threshold: 0.9 }) as Error).message).toBe(
      'compact_threshold: is not an option; the option is compactThreshold (snake_case names are read by mount())',
    );
    expect((refused({ flavour: 'x' }) as Error).message).toMatch(
      /^flavour: is not an option; the options are model, /,
    );
  });

  it('takes every documented option with a good value', () => {
    expect(
      () =>
        new ContextManager({
          model: 'gpt-4o',
          strategy: 'layered',
          facts: 'first-user',
          recentCount: 4,
          guard: { warnAt: 0.7, declineAt: 0.99, jumpEscalation: 0.25 },
          clearing: {
            trigger: 1000,
            keep: 2,
            clearAtLeast: 100,
            excludeTools: ['memory'],
            clearToolInputs: true,
          },
          autoCompact: true,
          maxCompactRetries: 1,
          criticalFloor: 0.9,
          compactionNotice: false,
          exactCountAt: 0.8,
          calibration: false,
          strategy_: undefined,
        } as ContextManagerOptions),
    ).toThrow(/strategy_: is not an option/);
    expect(() => new ContextManager({ model: 'gpt-4o', strategy: () => ({}), facts: 'none' })).not.toThrow();
  });

  it('refuses a request format it cannot send', async () => {
    const ctx = new ContextManager();
    await ctx.addMessage({ role: 'user', content: 'hi' });
    await expect(ctx.getMessagesForRequest({ provider: 'mistral' as 'openai' })).rejects.toThrow(
      /provider: expected "openai", "anthropic", "openai-responses", "gemini", "bedrock" or provider info, got "mistral"/,
    );
  });
});

describe('shares derived from the ones the user set (issue 23, item 4)', () => {
  it('mounts a compactThreshold below the default target given alone, aiming below it', () => {
    const ctx = new ContextManager({ compactThreshold: 0.5 });
    expect(ctx.options.compactThreshold).toBe(0.5);
    expect(ctx.options.targetUsage).toBeLessThan(0.5);
    expect(ctx.options.targetUsage).toBeGreaterThan(0.25);
  });

  it('keeps conversation in a compacted view when targetUsage is at or below the default summaryShare', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o', targetUsage: 0.3 });
    for (let i = 0; i < 500; i++) {
      await ctx.addMessage({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `[${(i % 28) + 1} March, 2024] ${i % 2 ? 'Ben' : 'Ana'}: I moved to Lisbon in ${1990 + (i % 30)} and my sister Maria works at Acme ${i} as an engineer; we adopted a dog named Rex${i}.`,
      });
    }
    const view = await ctx.getMessagesForRequest({ tokenBudget: 20_000 });
    // The memory (summary, facts) took the whole target before: 2 messages of conversation were left.
    const conversation = view.filter((m) => !messageText(m).includes('contextkit'));
    expect(conversation.length).toBeGreaterThan(20);
  });
});

describe('the documented defaults (issue 23, item 6)', () => {
  it('every "(default N" in an option doc comment is the default the runtime uses', () => {
    const source = readFileSync(fileURLToPath(new URL('./options.ts', import.meta.url)), 'utf8');
    const documented = [...source.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(\w+)\?:/g)];
    let checked = 0;
    for (const [, comment, name] of documented) {
      const said = /\(default ([\d.,]+)/.exec(comment!.replace(/\s*\*\s*/g, ' '));
      if (!said || !(name! in DEFAULTS)) continue;
      expect(Number(said[1]!.replace(/,/g, '')), name).toBe(DEFAULTS[name as keyof typeof DEFAULTS]);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it('a standalone ContextGuard refuses a strategy name it does not know', () => {
    const measurer = new ContextMeasurer({ maxTokens: 1000 });
    expect(() => new ContextGuard({ measurer, strategy: 'summarise' as 'summarize' })).toThrow(
      /strategy: "summarise" is not one of "summarize", "truncate", "smart", "layered", or a function/,
    );
  });
});

describe('economy: one setting along billed input against what is kept', () => {
  it('refuses a preset it does not know, naming the ones it does', () => {
    expect((refused({ economy: 'cheap' }) as Error).message).toBe(
      'economy: "cheap" is not one of "rich", "balanced", "lean", "minimal", or a share of the budget in (0, 1)',
    );
    for (const share of [0, 1, 1.5, -0.2]) {
      expect((refused({ economy: share }) as Error).message).toBe(
        `economy: a number is the share of the budget views aim at, in (0, 1); got ${share}`,
      );
    }
    expect((refused({ economy: Number.NaN }) as Error).message).toBe(
      'economy: expected a finite number, got NaN',
    );
    // Shares given together against each other are refused whatever the preset.
    expect((refused({ economy: 'rich', compactThreshold: 0.5, targetUsage: 0.6 }) as Error).message).toMatch(
      /targetUsage: \(0\.6\) must not be above compactThreshold \(0\.5\)/,
    );
  });

  it('moves the trigger, the target and recall together; an option given explicitly wins', async () => {
    const usageOf = async (options: ContextManagerOptions) => {
      const ctx = new ContextManager({ model: 'gpt-4o', ...options });
      await ctx.addMessage({ role: 'user', content: 'hi' });
      await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
      const { trigger, target } = ctx.usage();
      return { usage: { trigger, target }, recall: ctx.recallEnabled };
    };
    const balanced = await usageOf({});
    expect(balanced).toMatchObject({ usage: { trigger: 9_200, target: 6_000 }, recall: false });
    expect(await usageOf({ economy: 'balanced' })).toEqual(balanced);
    expect(await usageOf({ economy: 'lean' })).toMatchObject({
      usage: { trigger: 6_000, target: 3_500 },
      recall: true,
    });
    expect(await usageOf({ economy: 'minimal', targetUsage: 0.3, recall: false })).toMatchObject({
      usage: { trigger: 3_500, target: 3_000 },
      recall: false,
    });
    // A number is the target; below `minimal` the gap shrinks as its square root.
    expect(await usageOf({ economy: 0.1 })).toMatchObject({
      usage: { trigger: 2_270, target: 1_000 },
      recall: true,
    });
    expect(await usageOf({ economy: 0.05 })).toMatchObject({
      usage: { trigger: 1_400, target: 500 },
      recall: true,
    });
    // Between two presets, in between; at a preset's own target, that preset.
    expect(await usageOf({ economy: 0.475 })).toMatchObject({
      usage: { trigger: 7_600, target: 4_750 },
      recall: true,
    });
    expect(await usageOf({ economy: 0.6 })).toEqual(balanced);
    expect(await usageOf({ economy: 0.35 })).toEqual(await usageOf({ economy: 'lean' }));
  });

  it('sends smaller views the leaner the preset, each valid and within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000 }),
        fc.constantFrom(...FORMATS),
        async (seed, format) => {
          const history = longSessionMessages(240, format, seed);
          const budget = 6_000;
          const average: number[] = [];
          for (const economy of [...ECONOMY_PRESETS, 0.05]) {
            const ctx = new ContextManager({ model: 'gpt-4o', economy });
            let sent = 0;
            let calls = 0;
            for (const [i, message] of history.entries()) {
              if (message.role === 'assistant' && i > 0) {
                // A turn whose own messages are over the budget is declined at every preset alike.
                const view = await ctx
                  .getMessagesForRequest({ tokenBudget: budget, provider: format })
                  .catch((error: unknown) => {
                    expect(error).toBeInstanceOf(ContextOverflowError);
                    return null;
                  });
                if (view !== null) {
                  expect(validateRequest(view, format).problems).toEqual([]);
                  expect(ctx.usage().tokens).toBeLessThanOrEqual(budget);
                  sent += ctx.usage().tokens;
                  calls++;
                }
              }
              await ctx.addMessage(message);
            }
            average.push(sent / calls);
          }
          // From `balanced` down each setting (the presets, then 0.05) sends less on average; `rich` only aims higher (at a
          // small budget its rarer compactions can average out near `balanced`'s).
          for (let i = 2; i < average.length; i++) expect(average[i]!).toBeLessThan(average[i - 1]!);
        },
      ),
      { numRuns: 3 },
    );
  });
});
