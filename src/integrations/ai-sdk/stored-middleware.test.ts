/**
 * Issue 32 item 4: `contextMiddleware({ store, conversationId })`. A worker that makes a new
 * middleware for every model call (a new process per request, as a serverless route does) sends
 * byte for byte the prompts one long-lived middleware sends, and those of the middleware without a
 * store; each call stores only the prompt's new messages, and a steady call never reads the
 * whole history. A prompt that does not extend the stored conversation replaces it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateText,
  jsonSchema,
  type LanguageModelMiddleware,
  type ModelMessage,
  stepCountIs,
  tool,
  wrapLanguageModel,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { workerDrivers } from '../../../test/stores/fixtures/drivers.js';
import { answerTextArb, imageSpecArb, pngBytes, userTextArb } from '../../../test/support/arbitraries.js';
import { skipFor } from '../../../test/support/requirements.js';
import { countingLoads, keepOpen } from '../../../test/support/workers.js';
import { ConfigurationError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import { MemoryStore } from '../../stores/memory.js';
import type { ConversationStore, NewEntry } from '../../stores/types.js';
import { contextMiddleware, contextPrepareStep } from './middleware.js';
import { fromModelMessages, type LanguageModelPrompt } from './model-messages.js';
import { PROMPT_RECORD_KEY, promptRecordOf } from './stored-prompt-fitter.js';

const CONVERSATION = 'ai-sdk-stored';
const SYSTEM = 'You are a research agent. Use lookup for every question.';
const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A tool result of about `words` words, different per call. */
function result(query: string, step: number, words: number): string {
  const list = Array.from({ length: words }, (_, i) => `${query.split(' ')[0] ?? 'x'}${(i * 7 + step) % 97}`);
  return `Result ${step} for "${query}": ${list.join(' ')}`;
}

/** How an agent's run goes: its turns (questions), the tool steps each takes, calls per step. */
interface Script {
  questions: string[];
  steps: number;
  parallel: number;
  words: number;
}

const SCRIPT: Script = {
  questions: [
    'alpha: where is the config loaded',
    'bravo: which tests fail on CI',
    'charlie: who owns the billing module',
    'delta: what changed in release 4.2',
  ],
  steps: 3,
  parallel: 2,
  words: 120,
};

/**
 * Runs `script` with `generateText` over a mock model wrapped in `middleware()` (asked for again
 * at every call: a new one each time stands for a new process per request). Resolves with every
 * prompt the model was sent, as JSON. The model's replies depend on the step only, so every run
 * of a script holds the same conversation.
 */
async function runScript(
  middleware: () => LanguageModelMiddleware | Promise<LanguageModelMiddleware>,
  script: Script,
): Promise<string[]> {
  const prompts: string[] = [];
  let step = 0;
  let turn = 0;
  const mock = new MockLanguageModelV3({
    modelId: 'gpt-4o',
    doGenerate: async ({ prompt }) => {
      prompts.push(JSON.stringify(prompt));
      const s = step++;
      if (s < script.steps) {
        return {
          content: Array.from({ length: script.parallel }, (_, k) => ({
            type: 'tool-call' as const,
            toolCallId: `call-${turn}-${s}-${k}`,
            toolName: 'lookup',
            input: JSON.stringify({ query: `${script.questions[turn]} #${k}`, step: s }),
          })),
          finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
          usage: USAGE,
          warnings: [],
        };
      }
      return {
        content: [{ type: 'text' as const, text: `The answer to ${script.questions[turn]} is in the logs.` }],
        finishReason: { unified: 'stop' as const, raw: 'stop' },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  const model = wrapLanguageModel({
    model: mock,
    middleware: {
      specificationVersion: 'v3',
      transformParams: async (options) => (await middleware()).transformParams!(options),
    },
  });
  const lookup = tool({
    description: 'Looks something up.',
    inputSchema: jsonSchema<{ query: string; step: number }>({
      type: 'object',
      properties: { query: { type: 'string' }, step: { type: 'number' } },
      required: ['query', 'step'],
    }),
    // Odd steps answer with JSON (an output contextkit's messages cannot hold as it is).
    execute: async ({ query, step: s }) =>
      s % 2 === 1 ? { found: result(query, s, script.words), step: s } : result(query, s, script.words),
  });
  const messages: ModelMessage[] = [];
  for (const [t, question] of script.questions.entries()) {
    turn = t;
    step = 0;
    // Provider options on a part: only the SDK's own message carries them back.
    messages.push({
      role: 'user',
      content: [{ type: 'text', text: question, providerOptions: { openai: { tag: `turn-${t}` } } }],
    });
    const run = await generateText({
      model,
      system: SYSTEM,
      messages,
      tools: { lookup },
      stopWhen: stepCountIs(script.steps + 2),
    });
    messages.push(...run.response.messages);
  }
  return prompts;
}

/** A temporary directory, removed after the tests. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ck-ai-sdk-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('contextMiddleware({ store, conversationId }): a stateless worker sends what a long-lived one does', () => {
  // At 2,500 a step right after a compaction passes the trigger: a long-lived manager, knowing it
  // has just compacted, lets the view be; a worker that never saw the conversation does too, since
  // that flag is stored with the plan (it compacted again when the flag was kept in memory only).
  const drivers = workerDrivers(cleanups, [CONVERSATION]);

  for (const [driver, budget] of drivers.flatMap((d) => [2_500, 4_000].map((b) => [d, b] as const))) {
    it(`${driver.name}, budget ${budget}: a new middleware per call, one for the run, and none with a store send the same prompts`, {
      ...skipFor(driver.missing),
      timeout: 120_000,
    }, async () => {
      const reference = await runScript(
        (() => {
          const one = contextMiddleware({ maxTokens: budget });
          return () => one;
        })(),
        SCRIPT,
      );
      const opener = await driver.open();
      const longLivedStore = await opener();
      const longLived = contextMiddleware({
        store: keepOpen(longLivedStore),
        conversationId: 'long',
        maxTokens: budget,
      });
      const kept = await runScript(() => longLived, SCRIPT);
      // Each call: a new middleware on a store opened for it, closed after (as a worker would).
      const opened: ConversationStore[] = [];
      const fresh = await runScript(async () => {
        const store = driver.name === 'memory' ? keepOpen(longLivedStore) : await opener();
        opened.push(store);
        return contextMiddleware({ store, conversationId: CONVERSATION, maxTokens: budget });
      }, SCRIPT);
      for (const store of opened) await store.close();
      if (driver.name !== 'memory') await longLivedStore.close();

      expect(reference.length).toBe(SCRIPT.questions.length * (SCRIPT.steps + 1));
      // The budget was at work: later prompts are far smaller than the conversation.
      const lastSent = JSON.parse(reference.at(-1)!) as LanguageModelPrompt;
      expect(lastSent.length).toBeLessThan(SCRIPT.questions.length * (1 + SCRIPT.steps * 2) + 1);
      expect(kept).toEqual(reference);
      expect(fresh).toEqual(reference);
      // Compaction was at work: results cleared, older steps summarized or dropped.
      expect(reference.some((p) => p.includes('was cleared to save context'))).toBe(true);
    });
  }
});

/** The prompt of a long agent run, as a model receives it: `turns` turns of `steps` tool steps. */
function longPrompt(turns: number, steps: number, from = 0): LanguageModelPrompt {
  const prompt: LanguageModelPrompt = from === 0 ? [{ role: 'system', content: SYSTEM }] : [];
  for (let t = from; t < from + turns; t++) prompt.push(...turnMessages(t, steps));
  return prompt;
}

/** One turn: the question, `steps` tool calls with their results, the answer. */
function turnMessages(t: number, steps: number): LanguageModelPrompt {
  const out: LanguageModelPrompt = [
    { role: 'user', content: [{ type: 'text', text: `question ${t}: what is in file ${t}?` }] },
  ];
  for (let s = 0; s < steps; s++) {
    const toolCallId = `call-${t}-${s}`;
    out.push({
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId, toolName: 'lookup', input: { query: `file ${t}`, step: s } },
      ],
    });
    out.push({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId,
          toolName: 'lookup',
          output: { type: 'json', value: { found: result(`file ${t}`, s, 40) } },
        },
      ],
    });
  }
  out.push({ role: 'assistant', content: [{ type: 'text', text: `File ${t} holds the answer.` }] });
  return out;
}

/** A middleware's `transformParams` on `prompt`, as the SDK calls it. */
async function transformed(
  middleware: LanguageModelMiddleware,
  prompt: LanguageModelPrompt,
): Promise<string> {
  const params = await middleware.transformParams!({
    type: 'generate',
    params: { prompt },
    model: new MockLanguageModelV3({ modelId: 'gpt-4o' }),
  });
  return JSON.stringify(params.prompt);
}

/** `store` with its appends and rows read counted, and its whole-log reads (as `countingLoads`). */
function tallied(store: ConversationStore) {
  const loads = countingLoads(store);
  const tally = { appended: 0, rowsRead: 0, store: loads as ConversationStore, loads };
  tally.store = new Proxy(loads, {
    get(target, key) {
      if (key === 'append')
        return (id: string, entries: readonly NewEntry[], options?: object) => {
          tally.appended += entries.length;
          return target.append(id, entries, options);
        };
      if (key === 'read')
        return async (id: string, options?: object) => {
          const rows = await target.read(id, options);
          tally.rowsRead += rows.length;
          return rows;
        };
      return Reflect.get(target, key, target);
    },
  });
  return tally;
}

describe('contextMiddleware({ store, conversationId }): what a call costs', () => {
  it('a worker stores only the new messages and serves a steady call without reading the whole history', async () => {
    const dir = tempDir();
    for (const url of ['memory:', `sqlite:${join(dir, 'worker.db')}`]) {
      const backing =
        url === 'memory:'
          ? new MemoryStore()
          : (await import('../../stores/sqlite.js')).openSqliteStore(join(dir, 'worker.db'));
      const shared = await backing;
      const budget = 6_000;
      // The first call stores a long conversation (400 turns, about 2,000 messages) and fits it.
      let prompt = longPrompt(400, 2);
      const first = tallied(shared);
      // The same calls through one middleware without a store.
      const reference = contextMiddleware({ maxTokens: budget });
      expect(
        await transformed(
          contextMiddleware({ store: first.store, conversationId: 'run', maxTokens: budget }),
          prompt,
        ),
      ).toBe(await transformed(reference, prompt));
      const proxies = fromModelMessages(prompt).messages.length;
      expect(first.appended).toBe(proxies);
      for (let turn = 400; turn < 406; turn++) {
        const added = turnMessages(turn, 1).slice(0, 3);
        prompt = [...prompt, ...added];
        const worker = tallied(shared);
        const sent = await transformed(
          contextMiddleware({ store: worker.store, conversationId: 'run', maxTokens: budget }),
          prompt,
        );
        // Only the new messages were stored: a user message, a call, its result.
        expect(worker.appended, url).toBe(3);
        expect(worker.loads.wholeReads, url).toBe(0);
        // It read about its view's rows, not the history's (some 2,400 rows).
        expect(worker.rowsRead, url).toBeLessThan(200);
        // What it sent is what a middleware that saw every call sends.
        expect(sent, url).toBe(await transformed(reference, prompt));
      }
      expect((await shared.read('run')).length).toBe(fromModelMessages(prompt).messages.length);
      await shared.close();
    }
  });
});

describe('contextMiddleware({ store, conversationId }): a prompt that does not extend the stored conversation', () => {
  it('replaces it, with a context:warn, and goes on from the new one', async () => {
    const store = keepOpen(new MemoryStore());
    const warnings: string[] = [];
    const worker = () =>
      contextMiddleware({
        store,
        conversationId: 'edited',
        maxTokens: 50_000,
        onWarning: (w) => warnings.push(w.code),
      });
    const prompt = longPrompt(3, 2);
    await transformed(worker(), prompt);
    expect(warnings).toEqual([]);

    // The user edited the first question in the chat and asked again.
    const edited = structuredClone(prompt);
    edited[1] = { role: 'user', content: [{ type: 'text', text: 'question 0: what is in file 99?' }] };
    const sent = await transformed(worker(), edited);
    expect(warnings).toEqual(['prompt_replaced_conversation']);
    expect((await store.read('edited')).map((e) => e.message)).toEqual(fromModelMessages(edited).messages);
    // What a middleware that only ever saw the edited prompt sends.
    expect(sent).toBe(await transformed(contextMiddleware({ maxTokens: 50_000 }), edited));

    // It grows from the replacement as from any stored conversation: nothing more is replaced.
    const grown = [...edited, ...turnMessages(3, 1)];
    await transformed(worker(), grown);
    expect(warnings).toHaveLength(1);
    expect((await store.read('edited')).map((e) => e.message)).toEqual(fromModelMessages(grown).messages);

    // A shorter prompt (another conversation under the same id) replaces it too.
    const other: LanguageModelPrompt = [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }];
    expect(JSON.parse(await transformed(worker(), other))).toEqual(other);
    expect(warnings).toHaveLength(2);
    expect((await store.read('edited')).map((e) => e.message)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ]);
    expect(promptRecordOf((await store.getMeta('edited')).value)).toMatchObject({ messages: 1, entries: 1 });
  });

  it('replaces a conversation it did not write, and one whose store was written to behind its back', async () => {
    const store = keepOpen(new MemoryStore());
    const warnings: string[] = [];
    const own = new ContextManager({ store, conversationId: 'shared' });
    await own.addMessage({ role: 'user', content: 'written by a manager' });
    const prompt = longPrompt(2, 1);
    const middleware = contextMiddleware({
      store,
      conversationId: 'shared',
      onWarning: (w) => warnings.push(w.code),
    });
    await transformed(middleware, prompt);
    expect(warnings).toEqual(['prompt_replaced_conversation']);
    expect((await store.read('shared')).map((e) => e.message)).toEqual(fromModelMessages(prompt).messages);

    // Another writer appended: the store no longer holds what the record says.
    await store.append('shared', [
      { message: { role: 'user', content: 'stray' }, metadata: { timestamp: 'x' } },
    ]);
    const grown = [...prompt, ...turnMessages(2, 1)];
    await transformed(middleware, grown);
    expect(warnings).toHaveLength(2);
    expect((await store.read('shared')).map((e) => e.message)).toEqual(fromModelMessages(grown).messages);
    expect((await store.getMeta('shared')).value?.[PROMPT_RECORD_KEY]).toBeDefined();
  });
});

describe('contextMiddleware({ store, conversationId }): options', () => {
  it('refuses what it does not read, naming what to give', () => {
    const store = new MemoryStore();
    expect(() => contextMiddleware({ store })).toThrow(/conversationId: must be a non-empty string/);
    expect(() => contextMiddleware({ conversationId: 'c' })).toThrow(
      /store: is required with conversationId/,
    );
    expect(() => contextMiddleware({ store, conversationId: '' })).toThrow(ConfigurationError);
    expect(() => contextMiddleware({ store, conversationId: 'c', manager: new ContextManager() })).toThrow(
      /manager: not with store/,
    );
    expect(() => contextMiddleware({ store, conversationId: 'c', conversations: 4 })).toThrow(
      /conversations: not with store/,
    );
    expect(() =>
      contextMiddleware({ store, conversationId: 'c', options: { store: 'memory:' } as never }),
    ).toThrow(/options.store: give store to the middleware itself/);
    expect(() => contextMiddleware({ store, conversationID: 'c' } as never)).toThrow(
      /conversationID: is not an option; did you mean conversationId\?/,
    );
    expect(() => contextPrepareStep({ store, conversationId: 'c', sessionId: 'c' } as never)).toThrow(
      /sessionId: was renamed: pass conversationId/,
    );
    expect(() => contextMiddleware({ store: 'ftp://nowhere', conversationId: 'c' })).toThrow(
      ConfigurationError,
    );
    expect(() =>
      contextMiddleware({ store: 'memory:', conversationId: 'c', maxTokens: 1_000 }),
    ).not.toThrow();
  });
});

describe('contextPrepareStep({ store, conversationId })', () => {
  it('fits each step from the store, as a prepareStep without one does', async () => {
    const store = keepOpen(new MemoryStore());
    const lookupTools = {
      lookup: tool({
        description: 'Looks something up.',
        inputSchema: jsonSchema<{ query: string }>({
          type: 'object',
          properties: { query: { type: 'string' } },
        }),
      }),
    };
    const reference = contextPrepareStep({ maxTokens: 3_000, tools: lookupTools });
    const all = longPrompt(12, 2) as ModelMessage[];
    for (let end = 6; end <= all.length; end += 5) {
      const messages = all.slice(1, end);
      // A new helper per step, as a worker that keeps nothing would make.
      const worker = contextPrepareStep({
        store,
        conversationId: 'steps',
        maxTokens: 3_000,
        tools: lookupTools,
      });
      const fitted = await worker({ messages, model: new MockLanguageModelV3({ modelId: 'gpt-4o' }) });
      const expected = await reference({ messages, model: new MockLanguageModelV3({ modelId: 'gpt-4o' }) });
      expect(JSON.stringify(fitted.messages)).toBe(JSON.stringify(expected.messages));
    }
    expect((await store.read('steps')).length).toBeGreaterThan(20);
  });
});

/** One tool step of a generated run: its calls, how they answer, and what comes with them. */
interface StepSpec {
  reasoning: boolean;
  calls: number;
  output: 'text' | 'json' | 'error-text';
  words: number;
  /** A tool message of approvals only after the results (nothing to count: it rides along). */
  approval: boolean;
}

interface TurnSpec {
  question: string;
  image: { width: number; height: number } | null;
  tagged: boolean;
  steps: StepSpec[];
  answer: string;
}

const stepArb: fc.Arbitrary<StepSpec> = fc.record({
  reasoning: fc.boolean(),
  calls: fc.integer({ min: 1, max: 3 }),
  output: fc.constantFrom('text' as const, 'json' as const, 'error-text' as const),
  words: fc.integer({ min: 3, max: 400 }),
  approval: fc.boolean(),
});

const turnArb: fc.Arbitrary<TurnSpec> = fc.record({
  question: userTextArb.map((t) => t.text),
  image: fc.option(
    imageSpecArb.map(({ width, height }) => ({ width, height })),
    { nil: null },
  ),
  tagged: fc.boolean(),
  steps: fc.array(stepArb, { maxLength: 3 }),
  answer: answerTextArb.map((t) => t.text),
});

/** The prompts a model receives over a generated run: after every step and every answer. */
function promptsOf(turns: readonly TurnSpec[]): LanguageModelPrompt[] {
  const prompt: LanguageModelPrompt = [{ role: 'system', content: SYSTEM }];
  const prompts: LanguageModelPrompt[] = [];
  turns.forEach((turn, t) => {
    const providerOptions = turn.tagged
      ? { providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }
      : {};
    prompt.push({
      role: 'user',
      content: [
        { type: 'text', text: turn.question, ...providerOptions },
        ...(turn.image
          ? [
              {
                type: 'file' as const,
                data: new Uint8Array(pngBytes(turn.image.width, turn.image.height)),
                mediaType: 'image/png',
              },
            ]
          : []),
      ],
    });
    prompts.push([...prompt]);
    turn.steps.forEach((step, s) => {
      const ids = Array.from({ length: step.calls }, (_, k) => `call-${t}-${s}-${k}`);
      prompt.push({
        role: 'assistant',
        content: [
          ...(step.reasoning
            ? [
                {
                  type: 'reasoning' as const,
                  text: `Thinking about step ${s}.`,
                  providerOptions: { openai: { itemId: `rs-${t}-${s}` } },
                },
              ]
            : []),
          ...ids.map((toolCallId) => ({
            type: 'tool-call' as const,
            toolCallId,
            toolName: 'lookup',
            input: { query: `${turn.question.slice(0, 20)} ${toolCallId}` },
          })),
        ],
      });
      const text = result(turn.question, s, step.words);
      prompt.push({
        role: 'tool',
        content: ids.map((toolCallId) => ({
          type: 'tool-result' as const,
          toolCallId,
          toolName: 'lookup',
          output:
            step.output === 'json'
              ? { type: 'json' as const, value: { text, id: toolCallId } }
              : { type: step.output, value: text },
        })),
      });
      if (step.approval) {
        prompt.push({
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId: `approval-${t}-${s}`, approved: true }],
        });
      }
      prompts.push([...prompt]);
    });
    prompt.push({ role: 'assistant', content: [{ type: 'text', text: turn.answer }] });
  });
  return prompts;
}

/** What a middleware sent, or the error it refused the call with. */
async function outcome(middleware: LanguageModelMiddleware, prompt: LanguageModelPrompt): Promise<string> {
  try {
    return await transformed(middleware, prompt);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

describe('contextMiddleware({ store, conversationId }): properties', () => {
  it('gives back the SDK’s own messages (images, reasoning, provider options, JSON results, approvals) as the middleware without a store does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turnArb, { minLength: 1, maxLength: 5 }),
        fc.constantFrom(1_500, 4_000, 1_000_000),
        async (turns, budget) => {
          const store = keepOpen(new MemoryStore());
          const reference = contextMiddleware({ maxTokens: budget });
          const kept = contextMiddleware({
            store: keepOpen(new MemoryStore()),
            conversationId: 'kept',
            maxTokens: budget,
          });
          for (const prompt of promptsOf(turns)) {
            const expected = await outcome(reference, prompt);
            expect(await outcome(kept, prompt)).toBe(expected);
            // A worker that keeps nothing, serving from the store.
            const fresh = await outcome(
              contextMiddleware({ store, conversationId: 'fresh', maxTokens: budget }),
              prompt,
            );
            expect(fresh).toBe(expected);
            // Past a refused call the middleware without a store starts that conversation over (it
            // drops the manager that refused); a stored conversation goes on with its plan.
            if (!expected.startsWith('[')) break;
          }
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
