/**
 * The one test suite every wire format passes (issue 21), as `testStore()` is for stores. A
 * format's conformance file calls `testFormat(descriptor)`; its own test file adds only what is
 * special to it. Everything here goes through the public API (`src/index.ts`) and the fake
 * provider servers of `test/support`, so it holds whatever folder a format's code lives in.
 *
 * For the format, the suite checks:
 * - every view of its generated conversations (parallel calls, huge results, reused ids, media,
 *   pinned messages, every documented block/item/part kind) at budgets of 10–130% of the
 *   conversation, through every strategy: sent as a real HTTP request, the fake server of the
 *   format accepts it; it fits the budget by the library's own count; system, pinned and critical
 *   messages and the latest user turn are in it verbatim; it keeps conversation order; the stored
 *   history is unchanged; the same history gives the same view; or the request is refused with a
 *   `ContextOverflowError` whose breakdown shows that what must be kept is over the budget;
 * - between compactions, each view starts with the previous one (DESIGN.md invariant 7);
 * - conversion to and from every other format: what the conversions document as lossless (text,
 *   tool calls with their arguments, parallel calls, reused ids, results) comes back the same, a
 *   converted conversation is valid in the other format and converts back and forth again to the
 *   same messages; anything else converts to messages the other format takes, or is refused with
 *   a `not_convertible` error naming each message that cannot go across;
 * - the real tau-bench runs (`../shared/data`) in the format at four budgets, each view accepted by
 *   the fake server (skipped with a message where the data is absent);
 * - the members of its `WireFormat` the core asks (the one part of the suite that reaches past the
 *   public API, through the registry): every tool result cleared in the format's own shape, every
 *   long text cut, and the view still accepted by the fake server with each call answered by the
 *   same ids; each message counted the same whatever format the counter is told; the shared
 *   readers (recall, facts, summaries) read every text, call and result of its messages.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AtomEdits, NO_EDITS, renderAtom, textParts } from '../../src/compaction/edit-atom.js';
import { clearedResultText } from '../../src/compaction/placeholders.js';
import { wireFormat } from '../../src/formats/registry.js';
import { LiveEntries } from '../../src/history/live-entries.js';
import {
  type AddMessageOptions,
  ContextManager,
  ContextOverflowError,
  convertMessages,
  createTokenCounter,
  getModelInfo,
  InvalidMessageError,
  InvalidUsageError,
  type Message,
  type MessageFormat,
  validateRequest,
} from '../../src/index.js';
import { MAX_USAGE_TOKENS } from '../../src/meter/usage.js';
import { createCalibration } from '../../src/parts.js';
import { MemoryStore } from '../../src/stores/memory.js';
import { type Atom, AtomIndex } from '../../src/wire/atoms.js';
import { messageText, toolCallIds, toolResultIds } from '../../src/wire/content.js';
import { wireMessage } from '../../src/wire/wire-fields.js';
import { missingData, skipFor } from './requirements.js';
import { loadTauBench, TAU_BENCH_PATH, type TauBenchRun } from './tau-bench.js';

/** Every wire format; conversions are checked to and from each of them. */
export const WIRE_FORMATS: readonly MessageFormat[] = [
  'openai',
  'openai-responses',
  'anthropic',
  'gemini',
  'bedrock',
];

export const STRATEGIES = ['summarize', 'truncate', 'smart', 'layered'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** A generated conversation and the options each message is added with. */
export interface FormatConversation {
  messages: Message[];
  /** `options[i]` goes with `messages[i]` (pinned, critical). */
  options: AddMessageOptions[];
  /** A message stands out of order on purpose (a hook between a call and its results): the view may move it. */
  reordered?: boolean;
}

/**
 * A conversation read the same way in every format, to compare what a conversion kept: texts by
 * side (the caller's: system, developer, user; the model's), tool calls by name and arguments,
 * results by text. Calls are numbered in order and a result names the call it answers, so a
 * renamed id reads the same while a result moved to another call does not.
 */
export type NeutralEntry =
  | { side: 'caller' | 'model'; text: string }
  | { call: number; name: string; args: unknown }
  | { result: number; text: string }
  | { media: string };

/** A fake provider API of the format, running on 127.0.0.1. */
export interface FormatServer {
  /**
   * Sends `view` as the format's request (its request builder, its endpoint) and returns the
   * HTTP status and body. `stored` is the conversation the view was made from, for what a caller
   * sets from it (extended thinking on in a thinking tool loop, the model generation).
   */
  send(view: readonly Message[], stored: readonly Message[]): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

/** What is special to one wire format; the rest of the suite is the same for every format. */
export interface FormatDescriptor {
  name: MessageFormat;
  /** The model the manager is configured with (its tokenizer counts). */
  model: string;
  /** Generated conversations with every documented kind of block, item or part of the format. */
  conversations: fc.Arbitrary<FormatConversation>;
  /** Conversations made only of what the conversions document as lossless. */
  convertible: fc.Arbitrary<Message[]>;
  /** The neutral reading of a conversation in the format (written in the test, not the library's). */
  read(messages: readonly Message[]): NeutralEntry[];
  /** Whether `message` is a turn the user wrote (not only tool results). */
  isUserTurn(message: Message): boolean;
  /** Whether `message` carries tool results (a turn with results may have them cleared or cut). */
  hasResults(message: Message): boolean;
  /** The view puts the results of parallel calls in the order of their calls (the order check allows it). */
  resultsInCallOrder?: boolean;
  /** Longer sessions for the stability property (default: `conversations`). */
  sessions?: fc.Arbitrary<FormatConversation>;
  startServer(): Promise<FormatServer>;
  /** An independent in-process reading of the provider's rules, beside the fake server's answer. */
  problems?(view: readonly Message[]): string[];
  /** A real tau-bench run in the format. */
  fromTauBench(run: TauBenchRun): Message[];
  /** Property runs of the view property (default `PROPERTY_RUNS` or 100; the others run half as many). */
  runs?: number;
  /**
   * The format's response adder (`add*Response`) and two replies of the provider's shape with
   * usage: `accepted`, which it adds, and `refused`, the same with its last message, item or part
   * one `addMessage` refuses (issue 31 item 6: all or nothing).
   */
  reply: {
    add(manager: ContextManager, response: unknown): Promise<unknown>;
    accepted: unknown;
    refused: unknown;
  };
}

/**
 * Each format's usage as its provider documents it (see src/meter/usage.ts and
 * src/formats/bedrock/request.ts for the sources), built with figures overridden by path, and
 * every count field its reader takes in: each must refuse an implausible figure by its path.
 */
const USAGE_SHAPES: Record<
  MessageFormat,
  { response(over: Record<string, number>): unknown; fields: readonly string[] }
> = {
  openai: {
    response: (o) => ({
      model: 'gpt-4o',
      usage: {
        prompt_tokens: o['usage.prompt_tokens'] ?? 5000,
        completion_tokens: o['usage.completion_tokens'] ?? 200,
        total_tokens: o['usage.total_tokens'] ?? 5200,
        prompt_tokens_details: { cached_tokens: o['usage.prompt_tokens_details.cached_tokens'] ?? 100 },
        completion_tokens_details: {
          reasoning_tokens: o['usage.completion_tokens_details.reasoning_tokens'] ?? 0,
        },
      },
    }),
    fields: [
      'usage.prompt_tokens',
      'usage.completion_tokens',
      'usage.total_tokens',
      'usage.prompt_tokens_details.cached_tokens',
      'usage.completion_tokens_details.reasoning_tokens',
    ],
  },
  'openai-responses': {
    response: (o) => ({
      model: 'gpt-5',
      usage: {
        input_tokens: o['usage.input_tokens'] ?? 5000,
        output_tokens: o['usage.output_tokens'] ?? 200,
        total_tokens: o['usage.total_tokens'] ?? 5200,
        input_tokens_details: { cached_tokens: o['usage.input_tokens_details.cached_tokens'] ?? 100 },
        output_tokens_details: { reasoning_tokens: o['usage.output_tokens_details.reasoning_tokens'] ?? 0 },
      },
    }),
    fields: [
      'usage.input_tokens',
      'usage.output_tokens',
      'usage.total_tokens',
      'usage.input_tokens_details.cached_tokens',
      'usage.output_tokens_details.reasoning_tokens',
    ],
  },
  anthropic: {
    response: (o) => ({
      model: 'claude-sonnet-4-5',
      usage: {
        input_tokens: o['usage.input_tokens'] ?? 5000,
        output_tokens: o['usage.output_tokens'] ?? 200,
        cache_read_input_tokens: o['usage.cache_read_input_tokens'] ?? 100,
        cache_creation_input_tokens: o['usage.cache_creation_input_tokens'] ?? 0,
      },
    }),
    fields: [
      'usage.input_tokens',
      'usage.output_tokens',
      'usage.cache_read_input_tokens',
      'usage.cache_creation_input_tokens',
    ],
  },
  gemini: {
    response: (o) => ({
      modelVersion: 'gemini-2.5-pro',
      usageMetadata: {
        promptTokenCount: o['usageMetadata.promptTokenCount'] ?? 5000,
        candidatesTokenCount: o['usageMetadata.candidatesTokenCount'] ?? 200,
        totalTokenCount: o['usageMetadata.totalTokenCount'] ?? 5200,
        cachedContentTokenCount: o['usageMetadata.cachedContentTokenCount'] ?? 100,
        thoughtsTokenCount: o['usageMetadata.thoughtsTokenCount'] ?? 0,
      },
    }),
    fields: [
      'usageMetadata.promptTokenCount',
      'usageMetadata.candidatesTokenCount',
      'usageMetadata.totalTokenCount',
      'usageMetadata.cachedContentTokenCount',
      'usageMetadata.thoughtsTokenCount',
    ],
  },
  bedrock: {
    response: (o) => ({
      usage: {
        inputTokens: o['usage.inputTokens'] ?? 5000,
        outputTokens: o['usage.outputTokens'] ?? 200,
        totalTokens: o['usage.totalTokens'] ?? 5300,
        cacheReadInputTokens: o['usage.cacheReadInputTokens'] ?? 100,
        cacheWriteInputTokens: o['usage.cacheWriteInputTokens'] ?? 0,
      },
    }),
    fields: [
      'usage.inputTokens',
      'usage.outputTokens',
      'usage.totalTokens',
      'usage.cacheReadInputTokens',
      'usage.cacheWriteInputTokens',
    ],
  },
};

const TAU_RUNS = 60;
/** A budget every generated conversation fits in whole (huge results included). */
const WHOLE = 10_000_000;
const TAU_SHARES = [0.2, 0.4, 0.6, 0.9];

const json = (value: unknown): string => JSON.stringify(value);

/** Texts longer than this are cut by the editing property, to this many characters at each end. */
const CUT_OVER = 200;
const CUT_KEEP = 50;
/** The share of a message's readable text its count is at least. */
const TEXT_COUNTED = 0.9;
/** The tokens a cleared result's placeholder says it had. */
const CLEARED_TOKENS = 1234;

/** The atoms a view of `messages` is made of, as the manager reads them (from a server compaction on). */
function viewAtoms(messages: readonly Message[], name: MessageFormat): Atom[] {
  const entries = messages.map((message, seq) => ({ seq, message, metadata: { timestamp: 't' } }));
  const index = new AtomIndex(name);
  index.update(new LiveEntries(() => undefined).of(entries, name));
  return index.visible();
}

async function managerWith(
  format: FormatDescriptor,
  conv: FormatConversation,
  strategy: Strategy,
): Promise<ContextManager> {
  const ctx = new ContextManager({ model: format.model, strategy });
  for (let i = 0; i < conv.messages.length; i++) await ctx.addMessage(conv.messages[i]!, conv.options[i]);
  return ctx;
}

/** The overflow is allowed only when what must be kept is over the budget by itself. */
function expectJustifiedOverflow(error: unknown, budget: number): void {
  expect(error).toBeInstanceOf(ContextOverflowError);
  const overflow = error as ContextOverflowError;
  expect(overflow.required).toBeGreaterThan(budget);
  const b = overflow.breakdown;
  const kept = b.system + b.pinned + b.task + b.latestTurn + b.tools + b.overhead;
  expect(kept).toBeGreaterThan(budget);
  expect(kept + b.rest).toBe(overflow.required);
}

/** Runs the conformance suite for one wire format. */
export function testFormat(format: FormatDescriptor): void {
  const runs = format.runs ?? Number(process.env.PROPERTY_RUNS ?? 100);
  const counter = createTokenCounter(getModelInfo(format.model)!);
  const measure = (messages: readonly Message[]) => counter.measure(messages, { format: format.name });
  let server: FormatServer;

  async function expectAccepted(view: readonly Message[], stored: readonly Message[]): Promise<void> {
    expect(validateRequest(view, format.name).problems).toEqual([]);
    if (format.problems) expect(format.problems(view)).toEqual([]);
    const answer = await server.send(view, stored);
    expect({ status: answer.status, body: answer.status === 200 ? '' : answer.body }).toEqual({
      status: 200,
      body: '',
    });
  }

  /** Every invariant of DESIGN.md one view must hold; returns whether a view was made. */
  async function checkView(conv: FormatConversation, share: number, strategy: Strategy): Promise<boolean> {
    const ctx = await managerWith(format, conv, strategy);
    const budget = Math.max(64, Math.floor((await measure(conv.messages)) * share));
    let view: Message[];
    try {
      view = await ctx.getMessagesForRequest({ tokenBudget: budget });
    } catch (error) {
      expectJustifiedOverflow(error, budget);
      return false;
    }
    // Valid: the fake provider API accepts it.
    await expectAccepted(view, conv.messages);
    // Fits, by the library's own count measured afresh.
    expect(await measure(view)).toBeLessThanOrEqual(budget);
    // Keeps system, developer, pinned and critical messages and the latest user turn verbatim.
    const inView = new Set(view.map(json));
    conv.messages.forEach((m, i) => {
      const flags = conv.options[i] ?? {};
      if (m.role === 'system' || m.role === 'developer' || flags.pinned || flags.critical)
        expect(inView.has(json(m)), `message ${i} is kept verbatim`).toBe(true);
    });
    // (A turn that also carries tool results may have them cleared or cut.)
    const latest = conv.messages.findLast((m) => format.isUserTurn(m));
    if (latest && !format.hasResults(latest))
      expect(inView.has(json(latest)), 'the latest user turn is kept verbatim').toBe(true);
    // In conversation order: a stored message comes after the ones before it (where the format
    // says so, results of one round of calls may come in the order of their calls); the others
    // are the view's own.
    if (!conv.reordered) {
      let cursor = 0;
      for (const m of view) {
        const s = json(m);
        const at = conv.messages.findIndex((x, i) => i >= cursor && json(x) === s);
        if (at >= 0) {
          cursor = at + 1;
          continue;
        }
        const earlier = conv.messages.findIndex((x) => json(x) === s);
        if (earlier < 0) continue;
        const between = conv.messages.slice(earlier, cursor);
        const inRound = format.resultsInCallOrder === true && between.every((x) => format.hasResults(x));
        expect(inRound, `view message ${json(m)} is out of order`).toBe(true);
      }
    }
    // Non-destructive.
    expect(await ctx.getMessages()).toEqual(conv.messages);
    // Deterministic.
    const again = await managerWith(format, conv, strategy);
    expect(await again.getMessagesForRequest({ tokenBudget: budget })).toEqual(view);
    return JSON.stringify(view).includes('contextkit');
  }

  describe(`wire format ${format.name}: the conformance suite`, () => {
    beforeAll(async () => {
      server = await format.startServer();
    });
    afterAll(async () => {
      await server.close();
    });

    it('every view at 10–130% of the conversation, every strategy: accepted by the fake API, fits, keeps, ordered, history unchanged, deterministic', async () => {
      let compacted = 0;
      await fc.assert(
        fc.asyncProperty(
          format.conversations,
          fc.double({ min: 0.1, max: 1.3, noNaN: true }),
          fc.constantFrom(...STRATEGIES),
          async (conv, share, strategy) => {
            if (await checkView(conv, share, strategy)) compacted++;
          },
        ),
        { numRuns: runs },
      );
      // The runs did reach compaction.
      expect(compacted).toBeGreaterThan(0);
    }, 300_000);

    it('between compactions each view extends the previous one byte for byte', async () => {
      await fc.assert(
        fc.asyncProperty(
          // A result that comes after a hook's message replaces the placeholder an earlier view sent.
          (format.sessions ?? format.conversations).filter((conv) => !conv.reordered),
          fc.double({ min: 0.3, max: 0.9, noNaN: true }),
          fc.constantFrom(...STRATEGIES),
          async (conv, share, strategy) => {
            const budget = Math.max(200, Math.floor((await measure(conv.messages)) * share));
            const ctx = new ContextManager({ model: format.model, strategy });
            let compactions = 0;
            ctx.on('context:post_compact', () => compactions++);
            let previous: Message[] | null = null;
            let seen = 0;
            for (let i = 0; i < conv.messages.length; i++) {
              await ctx.addMessage(conv.messages[i]!, conv.options[i]);
              // Ask where an agent asks, no call waiting: before the user's next turn, and at the end.
              const next = conv.messages[i + 1];
              if (next !== undefined && (!format.isUserTurn(next) || format.hasResults(next))) continue;
              if (format.isUserTurn(conv.messages[i]!)) continue;
              let view: Message[];
              try {
                view = await ctx.getMessagesForRequest({ tokenBudget: budget });
              } catch (error) {
                expect(error).toBeInstanceOf(ContextOverflowError);
                previous = null;
                continue;
              }
              if (previous && compactions === seen) expect(view.slice(0, previous.length)).toEqual(previous);
              seen = compactions;
              previous = view;
            }
          },
        ),
        { numRuns: Math.ceil(runs / 2) },
      );
    }, 300_000);

    const others = WIRE_FORMATS.filter((f) => f !== format.name);
    it.each(others)(
      'to %s and back: what conversion documents as lossless comes back, both ways',
      async (other) => {
        await fc.assert(
          fc.asyncProperty(format.convertible, async (messages) => {
            const there = convertMessages(messages, other, { dropThinking: true });
            // A manager takes the converted conversation, and its view is valid in the other format.
            const elsewhere = new ContextManager({ model: format.model });
            for (const m of there) await elsewhere.addMessage(m);
            expect(
              validateRequest(await elsewhere.getMessagesForRequest({ tokenBudget: WHOLE }), other).problems,
            ).toEqual([]);
            const back = convertMessages(there, format.name, { dropThinking: true });
            expect(format.read(back)).toEqual(format.read(messages));
            // From the other format: once in the shape conversion writes, its conversation goes to
            // this format and comes back as it was.
            const again = convertMessages(back, other, { dropThinking: true });
            expect(
              convertMessages(convertMessages(again, format.name, { dropThinking: true }), other, {
                dropThinking: true,
              }),
            ).toEqual(again);
            // The converted conversation is one the fake API of this format takes, in a manager.
            const ctx = new ContextManager({ model: format.model });
            for (const m of back) await ctx.addMessage(m);
            await expectAccepted(await ctx.getMessagesForRequest({ tokenBudget: WHOLE }), back);
          }),
          { numRuns: runs },
        );
      },
      120_000,
    );

    it.each(others)(
      'to %s: every kind converts to messages that format takes, or is refused naming each message',
      async (other) => {
        await fc.assert(
          fc.asyncProperty(format.conversations, async (conv) => {
            let there: Message[];
            try {
              there = convertMessages(conv.messages, other, { dropThinking: true });
            } catch (error) {
              expect(error).toBeInstanceOf(InvalidMessageError);
              expect((error as InvalidMessageError).code).toBe('not_convertible');
              for (const issue of (error as InvalidMessageError).issues)
                expect(issue.path).toMatch(/^messages\[\d+\]/);
              return;
            }
            const ctx = new ContextManager({ model: format.model });
            for (const m of there) await ctx.addMessage(m);
            expect(
              validateRequest(await ctx.getMessagesForRequest({ provider: other, tokenBudget: WHOLE }), other)
                .problems,
            ).toEqual([]);
          }),
          { numRuns: Math.ceil(runs / 2) },
        );
      },
      120_000,
    );

    it('clears every result and cuts every long text in its own shape: the view is still accepted, ids kept, texts shorter', async () => {
      const wire = wireFormat(format.name);
      const render = (atoms: readonly Atom[], edits: AtomEdits) =>
        atoms.map((atom) => renderAtom(atom, edits, wire));
      const sent = (rendered: ReadonlyArray<readonly Message[]>) =>
        rendered.flat().map((m) => wireMessage(m, format.name));
      const ids = (messages: readonly Message[]) => messages.map((m) => [toolCallIds(m), toolResultIds(m)]);
      let cleared = 0;
      let cut = 0;
      await fc.assert(
        fc.asyncProperty(format.conversations, async (conv) => {
          const atoms = viewAtoms(conv.messages, format.name);
          const whole = sent(render(atoms, NO_EDITS));
          // The atoms make the manager's own view when everything fits (so the edited ones stand in it).
          const ctx = await managerWith(format, conv, 'smart');
          fc.pre(json(await ctx.getMessagesForRequest({ tokenBudget: WHOLE })) === json(whole));
          const slots = atoms.flatMap((a) => a.results.filter((s) => s.resultSeq !== null));
          const clearing: AtomEdits = {
            cleared: new Map(slots.map((s) => [s.key, CLEARED_TOKENS])),
            truncated: new Map(),
            clearInputs: true,
          };
          const afterClearing = render(atoms, clearing);
          await expectAccepted(sent(afterClearing), conv.messages);
          atoms.forEach((atom, k) => {
            const shown = json(afterClearing[k]);
            for (const slot of atom.results) {
              if (slot.resultSeq === null) continue;
              // The placeholder's head (its outcome line and advice depend on the result and the tool).
              const whole = clearedResultText(slot.toolName, CLEARED_TOKENS);
              const placeholder = json(whole.slice(0, whole.indexOf(' It'))).slice(1, -1);
              expect(shown.includes(placeholder), `result ${slot.key} is cleared`).toBe(true);
              cleared++;
            }
            // Still the same calls answered by the same results.
            expect(ids(afterClearing[k]!)).toEqual(ids(atom.messages));
          });
          const long = atoms.flatMap((atom) => textParts(atom, wire).filter((p) => p.text.length > CUT_OVER));
          const cutting: AtomEdits = {
            cleared: new Map(),
            truncated: new Map(long.map((p) => [p.key, { head: CUT_KEEP, tail: CUT_KEEP }])),
          };
          const afterCutting = render(atoms, cutting);
          await expectAccepted(sent(afterCutting), conv.messages);
          const cutTexts = new Map(
            atoms.flatMap((atom, k) =>
              textParts({ ...atom, messages: afterCutting[k]! }, wire).map((p) => [p.key, p.text] as const),
            ),
          );
          for (const part of long) {
            expect(cutTexts.get(part.key)?.length ?? 0, `text ${part.key} is cut`).toBeLessThan(
              part.text.length,
            );
            cut++;
          }
        }),
        { numRuns: Math.ceil(runs / 2) },
      );
      // The runs did reach both.
      expect(cleared).toBeGreaterThan(0);
      expect(cut).toBeGreaterThan(0);
    }, 300_000);

    it('counts a message with its readable text, the same whatever format the counter is told', async () => {
      await fc.assert(
        fc.property(format.conversations, (conv) => {
          for (const m of conv.messages) {
            const own = counter.countMessage(m, format.name);
            // Its readable text is in the count (a format's own parts, blocks and items included);
            // the text read joined by newlines may tokenize a little longer than its pieces.
            expect(own).toBeGreaterThanOrEqual(Math.floor(counter.countText(messageText(m)) * TEXT_COUNTED));
            for (const other of WIRE_FORMATS) expect(counter.countMessage(m, other)).toBe(own);
          }
        }),
        { numRuns: Math.ceil(runs / 2) },
      );
    });

    it('reads its usage, refusing an implausible figure in any field with an InvalidUsageError naming the field', () => {
      // Issue 31, item 11: usage.output_tokens of 1e300 or MAX_SAFE_INTEGER reached a stored count.
      const { response, fields } = USAGE_SHAPES[format.name];
      const read = wireFormat(format.name).usage;
      const plain = read(response({}));
      expect(plain.totalInputTokens).toBeGreaterThan(0);
      for (const field of fields) {
        for (const figure of [1e300, Number.MAX_SAFE_INTEGER, 2 ** 40, MAX_USAGE_TOKENS + 1]) {
          const error = (() => {
            try {
              read(response({ [field]: figure }));
              return undefined;
            } catch (e) {
              return e;
            }
          })();
          expect(error, `${field} = ${figure}`).toBeInstanceOf(InvalidUsageError);
          expect((error as InvalidUsageError).field).toBe(field);
          expect((error as Error).message).toContain(String(figure));
        }
        // The largest plausible figure is read (where a cached part must stay within its total, both move).
        expect(() => read(response({ [field]: 1_000 }))).not.toThrow();
      }
    });

    it('the shared readers read its messages: every text, call and result the neutral reading finds', () => {
      // Recall, facts, the summaries and the replay's cost read messages through these readers.
      fc.assert(
        fc.property(format.convertible, (messages) => {
          const neutral = format.read(messages);
          // Word by word: formats join blocks and parts differently, and the neutral reading marks
          // errors in its own words. Every word the conversation says is read.
          const read = new Set(messages.flatMap((m) => messageText(m).split(/\s+/)));
          for (const entry of neutral) {
            if (!('text' in entry)) continue;
            for (const word of entry.text.split(/\s+/)) if (/\d/.test(word)) expect(read).toContain(word);
          }
          const calls = messages.flatMap((m) => toolCallIds(m));
          const results = messages.flatMap((m) => toolResultIds(m));
          expect(calls).toHaveLength(neutral.filter((e) => 'call' in e).length);
          expect(results).toHaveLength(neutral.filter((e) => 'result' in e).length);
        }),
        { numRuns: Math.ceil(runs / 2) },
      );
    });

    it('adds a provider reply all or nothing: a refused reply stores nothing and learns no usage, a retry adds it once', async () => {
      for (const store of [null, new MemoryStore()]) {
        const calibration = createCalibration();
        const ctx = new ContextManager({
          model: format.model,
          calibration,
          ...(store ? { store, conversationId: `reply-${format.name}` } : {}),
        });
        const task =
          format.name === 'gemini'
            ? { role: 'user', parts: [{ text: 'Look up order 42.' }] }
            : format.name === 'openai-responses'
              ? { role: 'user', content: 'Look up order 42.' }
              : format.name === 'bedrock'
                ? { role: 'user', content: [{ text: 'Look up order 42.' }] }
                : { role: 'user', content: 'Look up order 42.' };
        await ctx.addMessage(task);
        await ctx.getMessagesForRequest({ tokenBudget: 50_000 });
        const before = await ctx.getMessages();
        const samples = () => Object.values(calibration.snapshot()).reduce((n, e) => n + e.samples, 0);
        await expect(format.reply.add(ctx, format.reply.refused)).rejects.toBeInstanceOf(InvalidMessageError);
        expect(await ctx.getMessages()).toEqual(before);
        expect(samples()).toBe(0);
        if (store) expect(await store.read(`reply-${format.name}`)).toHaveLength(before.length);
        // The caller retries with the reply fixed: every message of it is stored once.
        const returned = await format.reply.add(ctx, format.reply.accepted);
        const after = await ctx.getMessages();
        expect(after.slice(before.length)).toEqual(Array.isArray(returned) ? returned : [returned]);
        expect(samples()).toBe(1);
        if (store) expect(await store.read(`reply-${format.name}`)).toHaveLength(after.length);
      }
    });

    describe('the real tau-bench runs', skipFor(missingData(TAU_BENCH_PATH)), () => {
      it(`${TAU_RUNS} runs at ${TAU_SHARES.map((s) => `${s * 100}%`).join(', ')} of their size: every view accepted by the fake API, within budget, history unchanged`, async () => {
        let views = 0;
        for (const run of loadTauBench().slice(0, TAU_RUNS)) {
          const messages = format.fromTauBench(run);
          const full = await measure(messages);
          for (const share of TAU_SHARES) {
            const budget = Math.floor(full * share);
            const ctx = new ContextManager({ model: format.model });
            for (const m of messages) await ctx.addMessage(m);
            let view: Message[];
            try {
              view = await ctx.getMessagesForRequest({ tokenBudget: budget });
            } catch (error) {
              expectJustifiedOverflow(error, budget);
              continue;
            }
            await expectAccepted(view, messages);
            expect(await measure(view)).toBeLessThanOrEqual(budget);
            expect(await ctx.getMessages()).toEqual(messages);
            views++;
          }
        }
        expect(views).toBeGreaterThan(TAU_RUNS);
      }, 300_000);
    });
  });
}
