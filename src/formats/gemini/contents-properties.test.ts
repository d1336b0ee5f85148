/**
 * Issue 11, Gemini `contents` as a fourth format: contents are detected, validated by path,
 * stored as they came (thought signatures included), grouped into atoms (calls with their
 * responses), counted, cleared, converted where lossless, and every view is accepted by a fake
 * `generateContent` that reads requests on its own, at every budget, through every strategy.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeCountServer } from '../../../test/support/fake-count-server.js';
import {
  type FakeGeminiServer,
  geminiRequestProblems,
  sealPart,
  startFakeGemini,
} from '../../../test/support/fake-gemini-server.js';
import { geminiConversationArb } from '../../../test/support/gemini-arb.js';
import { runCli } from '../../../test/support/run-cli.js';
import { viewAtShare } from '../../../test/support/view-at-share.js';
import { renderAtom } from '../../compaction/edit-atom.js';
import { FormatMismatchError, InvalidMessageError } from '../../errors.js';
import { addGeminiResponse } from '../../integrations/providers.js';
import { ContextManager } from '../../manager.js';
import { createCountClient } from '../../measure/count-endpoints.js';
import type { GeminiMessage } from '../../messages/gemini-types.js';
import type { HistoryEntry, Message } from '../../messages/types.js';
import { recallToolDefinition } from '../../recall/recall-tool.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { AtomIndex, buildAtoms } from '../../wire/atoms.js';
import { convertMessages } from '../../wire/convert.js';
import { detectConversationFormat } from '../../wire/detect.js';
import { validateMessage } from '../../wire/validate-message.js';
import { validateRequest } from '../../wire/validate-request.js';
import { gemini } from './format.js';
import { GEMINI_AUDIO_TOKENS_PER_SECOND } from './media.js';
import { toGeminiRequest } from './request.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const STRATEGIES = ['summarize', 'truncate', 'smart', 'layered'] as const;
const MODEL = 'gemini-2.5-flash';

let server: FakeGeminiServer;
beforeAll(async () => {
  server = await startFakeGemini({ requireSignatures: true });
});
afterAll(async () => {
  await server.close();
});

function body(view: readonly Message[]): Record<string, unknown> {
  return { ...toGeminiRequest(view as GeminiMessage[]) };
}

async function post(view: readonly Message[]): Promise<number> {
  const res = await fetch(`${server.url}/v1beta/models/${MODEL}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body(view)),
  });
  await res.text();
  return res.status;
}

type Part = Record<string, unknown>;
const signed = (part: Part): Part => ({ ...part, thoughtSignature: sealPart(part) });
const msgs = (...list: unknown[]) => list as Message[];
const entries = (messages: readonly Message[]): HistoryEntry[] =>
  messages.map((message, seq) => ({ seq, message, metadata: { timestamp: '2026-01-01T00:00:00.000Z' } }));

const ask = { role: 'user', parts: [{ text: 'weather in Paris and Rome?' }] };
const calls = {
  role: 'model',
  parts: [
    signed({ functionCall: { name: 'weather', args: { city: 'Paris' } } }),
    { functionCall: { name: 'weather', args: { city: 'Rome' } } },
  ],
};
const answers = {
  role: 'user',
  parts: [
    { functionResponse: { name: 'weather', response: { content: 'Paris: 18C' } } },
    { functionResponse: { name: 'weather', response: { content: 'Rome: 24C' } } },
  ],
};
const reply = { role: 'model', parts: [signed({ text: 'Paris 18C, Rome 24C.' })] };

describe('Gemini contents', () => {
  it('are detected from parts or the model role, and a mixed conversation is refused', () => {
    expect(detectConversationFormat([ask])).toBe('gemini');
    expect(
      detectConversationFormat([
        { role: 'system', content: 'x' },
        { role: 'model', parts: [{ text: 'hi' }] },
      ]),
    ).toBe('gemini');
    expect(() => detectConversationFormat([ask, { role: 'tool', tool_call_id: 'a', content: 'x' }])).toThrow(
      FormatMismatchError,
    );
  });

  it('are validated at addMessage with typed errors by path, and stored as they came', async () => {
    const ctx = new ContextManager({ model: MODEL });
    await ctx.addMessage(ask);
    const bad = [
      [{ role: 'assistant', parts: [{ text: 'x' }] }, /\.role: .*Gemini calls the assistant "model"/],
      [{ role: 'model', parts: [] }, /\.parts: expected a non-empty array/],
      [{ role: 'system', content: 'be brief' }, /\.parts: .*not "content"/],
      [{ role: 'model', parts: [{ text: 'a', functionCall: { name: 'f' } }] }, /exactly one datum/],
      [
        { role: 'user', parts: [{ functionCall: { name: 'f' } }] },
        /parts\[0\]\.functionCall: .*only allowed in a model content/,
      ],
      [
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: 'x' } }] },
        /functionResponse\.response: expected a JSON object/,
      ],
      [
        { role: 'model', parts: [{ text: 'a', thoughtSignature: 'not base64!' }] },
        /thoughtSignature: expected a base64 string/,
      ],
      [{ role: 'user', parts: [{ inlineData: { data: 'AAAA' } }] }, /inlineData\.mimeType/],
      [{ role: 'model', parts: [{ codeExecutionResult: { outcome: 'FINE' } }] }, /outcome: expected one of/],
    ] as const;
    for (const [message, pattern] of bad) {
      await expect(ctx.addMessage(message)).rejects.toThrow(InvalidMessageError);
      await expect(ctx.addMessage(message)).rejects.toThrow(pattern);
    }
    await ctx.addMessage(calls);
    await ctx.addMessage(answers);
    await ctx.addMessage(reply);
    expect(await ctx.getMessages()).toEqual([ask, calls, answers, reply]);
    expect(
      validateMessage({ role: 'model', parts: [{ thoughtSignature: sealPart({}) }] }, 'm'),
    ).toBeDefined();
  });

  it('keep a model content with calls and the user content with the responses in one atom', () => {
    const { atoms, repairs } = buildAtoms(entries(msgs(ask, calls, answers, reply)), 'gemini');
    expect(atoms.map((a) => a.kind)).toEqual(['message', 'exchange', 'message']);
    expect(atoms[1]!.messages).toEqual([calls, answers]);
    expect(atoms[1]!.results.map((s) => [s.messageIndex, s.blockIndex])).toEqual([
      [1, 0],
      [1, 1],
    ]);
    expect(repairs).toEqual([]);
  });

  it('join split responses, answer a missing one with a placeholder and move what slipped between', () => {
    const first = { role: 'user', parts: [answers.parts[0]] };
    const aside = { role: 'user', parts: [{ text: 'hurry' }] };
    const second = { role: 'user', parts: [answers.parts[1]] };
    const joined = buildAtoms(entries(msgs(ask, calls, first, aside, second, reply)), 'gemini');
    expect(joined.atoms[1]!.messages[1]).toEqual(answers);
    expect(joined.atoms[2]!.messages).toEqual([aside]);
    const missing = buildAtoms(entries(msgs(ask, calls, first, reply)), 'gemini');
    const parts = (missing.atoms[1]!.messages[1] as { parts: Part[] }).parts;
    expect(parts).toHaveLength(2);
    expect(JSON.stringify(parts[1])).toMatch(/no result was recorded/);
    expect(missing.repairs.map((r) => r.kind)).toEqual(['missing_result']);
    const view = missing.atoms.flatMap((a) => a.messages);
    expect(geminiRequestProblems(body(view))).toEqual([]);
  });

  it('answer calls still waiting at the open tail with placeholders, replaced once the responses come', () => {
    const open = buildAtoms(entries(msgs(ask, calls)), 'gemini');
    expect(open.atoms[1]!.open).toBe(true);
    const view = open.atoms.flatMap((a) => a.messages);
    expect(validateRequest(view, 'gemini').problems).toEqual([]);
    const done = buildAtoms(entries(msgs(ask, calls, answers)), 'gemini');
    expect(done.atoms[1]!.messages).toEqual([calls, answers]);
    expect(done.atoms[1]!.open).toBe(false);
  });

  it('group the same atoms incrementally as all at once', () => {
    fc.assert(
      fc.property(geminiConversationArb(), (conv) => {
        const all = entries(conv);
        const index = new AtomIndex('gemini');
        for (let n = 1; n <= all.length; n++) index.update(all.slice(0, n));
        const once = buildAtoms(all, 'gemini');
        expect(index.all()).toEqual(once.atoms);
        expect(index.repairs()).toEqual(once.repairs);
      }),
      { numRuns: RUNS },
    );
  });

  it('validateRequest applies the order and pairing rules', () => {
    expect(validateRequest(msgs(ask, calls, answers, reply), 'gemini').problems).toEqual([]);
    const problems = (view: unknown[]) =>
      validateRequest(view, 'gemini')
        .problems.map((p) => p.message)
        .join('\n');
    expect(problems([reply])).toMatch(/first content must be a user content/);
    expect(problems([ask, calls, reply])).toMatch(/not answered by function responses/);
    expect(problems([ask, calls, { role: 'user', parts: [answers.parts[0]] }])).toMatch(
      /number of function response parts/,
    );
    expect(problems([ask, answers])).toMatch(/right after a function call turn/);
    expect(problems([ask, reply, calls, answers])).toMatch(
      /right after a user turn or a function response turn/,
    );
    expect(problems([ask, calls])).toMatch(/ends with function calls/);
  });

  it('count media from what they are, never from the size of their data', () => {
    const counter = createTokenCounter(getModelInfo(MODEL)!);
    const audio = (seconds: number, pad: number) => {
      const b = Buffer.alloc(44 + pad);
      b.write('RIFF', 0, 'latin1');
      b.write('WAVEfmt ', 8, 'latin1');
      b.writeUInt32LE(8000, 28);
      b.write('data', 36, 'latin1');
      b.writeUInt32LE(8000 * seconds, 40);
      return {
        role: 'user',
        parts: [{ inlineData: { mimeType: 'audio/wav', data: b.toString('base64') } }],
      } as Message;
    };
    const base = counter.countMessage(audio(0, 0), 'gemini');
    expect(counter.countMessage(audio(10, 0), 'gemini') - base).toBe(10 * GEMINI_AUDIO_TOKENS_PER_SECOND);
    // Padding the data does not change the count.
    expect(counter.countMessage(audio(10, 30_000), 'gemini')).toBe(
      counter.countMessage(audio(10, 0), 'gemini'),
    );
    const text = counter.countMessage(reply as Message, 'gemini');
    expect(text).toBeGreaterThan(5);
  });

  it('clear a function response in place, keeping name and id, and never edit model parts', () => {
    const { atoms } = buildAtoms(entries(msgs(ask, calls, answers, reply)), 'gemini');
    const exchange = atoms[1]!;
    const key = exchange.results[1]!.key;
    const rendered = renderAtom(exchange, { cleared: new Map([[key, 1234]]), truncated: new Map() }, gemini);
    expect(rendered[0]).toBe(calls);
    const parts = (rendered[1] as { parts: Part[] }).parts;
    expect(parts[0]).toBe(answers.parts[0]);
    expect(parts[1]!.functionResponse).toMatchObject({
      name: 'weather',
      response: { content: expect.stringMatching(/contextkit/) },
    });
    const view = [ask, ...rendered, reply] as Message[];
    expect(geminiRequestProblems(body(view), { requireSignatures: true })).toEqual([]);
    const inputs = renderAtom(
      exchange,
      { cleared: new Map([[key, 1]]), truncated: new Map(), clearInputs: true },
      gemini,
    );
    expect(inputs[0]).toBe(calls);
  });

  it('cut an oversized function response of the exchange in progress in the middle, never a model part', async () => {
    const call = {
      role: 'model',
      parts: [signed({ functionCall: { name: 'read_log', id: 'r1', args: {} } })],
    };
    const log = `log start ${'line of output '.repeat(4000)} log end`;
    const result = {
      role: 'user',
      parts: [{ functionResponse: { name: 'read_log', id: 'r1', response: { content: log } } }],
    };
    const conv = msgs(ask, reply, { role: 'user', parts: [{ text: 'read the log' }] }, call, result);
    const ctx = new ContextManager({ model: MODEL });
    for (const m of conv) await ctx.addMessage(m);
    const counter = createTokenCounter(getModelInfo(MODEL)!);
    const full = await counter.measure(conv, { format: 'gemini' });
    const view = await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * 0.5) });
    const parts = view.flatMap((m) => ('parts' in m ? (m.parts as Part[]) : []));
    const response = parts.find((p) => p.functionResponse)!.functionResponse as {
      id: string;
      response: { content: string };
    };
    expect(response.id).toBe('r1');
    expect(response.response.content.length).toBeLessThan(log.length);
    expect(response.response.content).toMatch(/^log start[\s\S]*log end$/);
    expect(view).toContainEqual(call);
    expect(geminiRequestProblems(body(view), { requireSignatures: true })).toEqual([]);
    expect(await ctx.getMessages()).toEqual(conv);
  });

  it('near the limit, Gemini countTokens is asked about the view as it is, signatures included', async () => {
    const counting = await startFakeCountServer({ apiKey: 'k-test' });
    try {
      const countClient = createCountClient({ provider: 'google', baseURL: counting.url, apiKey: 'k-test' });
      const conv = msgs({ role: 'system', parts: [{ text: 'be brief' }] }, ask, calls, answers, reply, {
        role: 'user',
        parts: [{ text: 'and tomorrow?' }],
      });
      const ctx = new ContextManager({ model: MODEL, countClient });
      for (const m of conv) await ctx.addMessage(m);
      const full = await createTokenCounter(getModelInfo(MODEL)!).measure(conv, { format: 'gemini' });
      await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full / 0.91) });
      expect(counting.rejections).toEqual([]);
      expect(counting.requests.length).toBeGreaterThan(0);
      const sent = (counting.requests[0]!.body as { generateContentRequest: Record<string, unknown> })
        .generateContentRequest;
      expect(sent.systemInstruction).toEqual({ parts: [{ text: 'be brief' }] });
      expect(sent.contents).toEqual(conv.slice(1));
    } finally {
      await counting.close();
    }
  });

  it('the recall tool answers a Gemini functionCall with a functionResponse the API accepts', async () => {
    const ctx = new ContextManager({ model: MODEL, recall: true });
    const again = { role: 'user', parts: [{ text: 'what was Rome again?' }] };
    for (const m of msgs(ask, calls, answers, reply, again)) await ctx.addMessage(m);
    const call = { functionCall: { name: 'recall', id: 'r9', args: { query: 'Rome' } } };
    await ctx.addMessage({ role: 'model', parts: [call] });
    const result = await ctx.handleToolCall(call);
    expect(result).toMatchObject({
      role: 'user',
      parts: [
        {
          functionResponse: {
            name: 'recall',
            id: 'r9',
            response: { content: expect.stringMatching(/Rome: 24C/) },
          },
        },
      ],
    });
    await ctx.addMessage(result!);
    const view = await ctx.getMessagesForRequest();
    expect(validateRequest(view, 'gemini').problems).toEqual([]);
    expect(geminiRequestProblems(body(view))).toEqual([]);
    expect(recallToolDefinition('gemini')).toMatchObject({
      name: 'recall',
      parametersJsonSchema: { type: 'object' },
    });
    expect(await ctx.handleToolCall({ functionCall: { name: 'recall', args: {} } })).toMatchObject({
      parts: [{ functionResponse: { name: 'recall', response: { error: expect.stringMatching(/query/) } } }],
    });
  });

  it('convert to and from the other formats where lossless, and list what cannot go across', () => {
    const plain = msgs(
      { role: 'system', parts: [{ text: 'be brief' }] },
      ask,
      { role: 'model', parts: [{ functionCall: { name: 'weather', id: 'c1', args: { city: 'Paris' } } }] },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'weather', id: 'c1', response: { content: '18C' } } }],
      },
      { role: 'model', parts: [{ text: '18C.' }] },
    );
    for (const to of ['openai', 'anthropic', 'openai-responses'] as const) {
      const there = convertMessages(plain, to);
      expect(convertMessages(there, 'gemini')).toEqual(plain);
    }
    const chat = msgs(
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'r' },
    );
    const gem = convertMessages(chat, 'gemini');
    expect(validateRequest(gem, 'gemini').problems).toEqual([]);
    let error: unknown;
    try {
      convertMessages(
        msgs(ask, calls, answers, { role: 'model', parts: [{ text: 'hm', thought: true }] }),
        'anthropic',
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidMessageError);
    const text = (error as InvalidMessageError).issues.map((i) => i.path).join('\n');
    expect(text).toMatch(/messages\[1\]\.parts\[0\]\.thoughtSignature/);
    expect(text).toMatch(/messages\[3\]\.parts\[0\]\.thought/);
    expect(() =>
      convertMessages(
        msgs(
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 't', signature: 's' },
              { type: 'text', text: 'a' },
            ],
          },
        ),
        'gemini',
      ),
    ).toThrow(/"thinking" block has no Gemini counterpart/);
  });

  it('with dropThinking, reasoning is left out both ways instead of refused, as the view does', async () => {
    const thinking = msgs(
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 't', signature: 's' },
          { type: 'redacted_thinking', data: 'xyz' },
          { type: 'text', text: 'a' },
        ],
      },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'only' }] },
      { role: 'user', content: 'and?' },
    );
    const gem = convertMessages(thinking, 'gemini', { dropThinking: true });
    expect(gem).toEqual([
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ text: 'a' }] },
      { role: 'user', parts: [{ text: 'and?' }] },
    ]);
    expect(validateRequest(gem, 'gemini').problems).toEqual([]);

    const thought = msgs(
      ask,
      calls,
      answers,
      { role: 'model', parts: [{ text: 'hm', thought: true }] },
      reply,
    );
    for (const to of ['anthropic', 'openai', 'openai-responses'] as const) {
      const there = convertMessages(thought, to, { dropThinking: true });
      const json = JSON.stringify(there);
      expect(json).not.toMatch(/thoughtSignature|"hm"/);
      expect(json).toContain('Paris: 18C');
      expect(validateRequest(there, to).problems).toEqual([]);
    }
    // Through the manager: a conversation viewed for another provider leaves its reasoning out.
    for (const [stored, provider] of [
      [thinking, 'gemini'],
      [thought, 'anthropic'],
      [thought, 'openai'],
    ] as const) {
      const ctx = new ContextManager({ model: MODEL });
      for (const m of stored) await ctx.addMessage(m);
      const view = await ctx.getMessagesForRequest({ provider });
      expect(validateRequest(view, provider).problems).toEqual([]);
      expect(JSON.stringify(view)).not.toMatch(/thoughtSignature|"thinking"|redacted_thinking/);
    }
  });

  it('addGeminiResponse adds candidates[0].content as it came and records usageMetadata', async () => {
    const ctx = new ContextManager({ model: MODEL });
    await ctx.addMessage(ask);
    const res = await fetch(`${server.url}/v1beta/models/${MODEL}:generateContent`, {
      method: 'POST',
      body: JSON.stringify(body(await ctx.getMessagesForRequest())),
    });
    expect(res.status).toBe(200);
    const added = await addGeminiResponse(ctx, await res.json());
    expect(added.role).toBe('model');
    expect((await ctx.getMessages()).at(-1)).toEqual(added);
    await expect(addGeminiResponse(ctx, { candidates: [] })).rejects.toThrow(
      /candidates\[0\]\.content\.parts/,
    );
  });

  it('the fake generateContent refuses an edited signed part and a missing signature in the current turn', () => {
    const edited = {
      role: 'model',
      parts: [
        { ...(calls.parts[0] as Part), functionCall: { name: 'weather', args: { city: 'Nice' } } },
        calls.parts[1],
      ],
    };
    expect(geminiRequestProblems(body(msgs(ask, edited, answers)))).toEqual([
      expect.stringMatching(/invalid thought signature/),
    ]);
    const unsigned = {
      role: 'model',
      parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }, calls.parts[1]],
    };
    expect(geminiRequestProblems(body(msgs(ask, unsigned, answers)), { requireSignatures: true })).toEqual([
      expect.stringMatching(/missing a thought_signature/),
    ]);
  });
});

describe('the CLI takes the Gemini format', () => {
  it('validate detects it and applies its rules; compact converts a Chat Completions file to it', async () => {
    const ok = await runCli(['validate', '-'], { input: JSON.stringify([ask, calls, answers, reply]) });
    expect(ok.stdout).toMatch(/valid \(4 messages, Gemini\)/);
    expect(ok.code).toBe(0);
    const bad = await runCli(['validate', '-', '--provider', 'gemini'], {
      input: JSON.stringify([ask, calls]),
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/ends with function calls/);
    const chat = JSON.stringify([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
    ]);
    const compacted = await runCli(['compact', '-', '--format', 'gemini', '--max-tokens', '10000'], {
      input: chat,
    });
    expect(compacted.code).toBe(0);
    expect(compacted.stdout).toContain('"functionResponse"');
  }, 60_000);
});

describe('every Gemini part kind, every budget, every strategy', () => {
  it('each view is accepted by the fake generateContent and the history is unchanged', async () => {
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(
        geminiConversationArb(),
        fc.double({ min: 0.1, max: 1.3, noNaN: true }),
        fc.constantFrom(...STRATEGIES),
        async (conv, share, strategy) => {
          const ctx = new ContextManager({ model: MODEL, strategy });
          for (const m of conv) await ctx.addMessage(m);
          const fitted = await viewAtShare(ctx, conv, MODEL, 'gemini', share);
          if (!fitted) return;
          const { view, budget } = fitted;
          if (JSON.stringify(view).includes('contextkit')) compacted++;
          expect(validateRequest(view, 'gemini').problems).toEqual([]);
          expect(geminiRequestProblems(body(view), { requireSignatures: true })).toEqual([]);
          expect(await post(view)).toBe(200);
          expect(await ctx.getMessages()).toEqual(conv);
          // Keeps the system instruction and the latest user content verbatim; deterministic.
          for (const m of conv) if (m.role === 'system') expect(view).toContainEqual(m);
          const latest = conv.findLast(
            (m) =>
              m.role === 'user' &&
              (m as { parts: Part[] }).parts.some((p) => p.functionResponse === undefined),
          );
          if (latest) expect(view).toContainEqual(latest);
          const again = new ContextManager({ model: MODEL, strategy });
          for (const m of conv) await again.addMessage(m);
          expect(await again.getMessagesForRequest({ tokenBudget: budget })).toEqual(view);
        },
      ),
      { numRuns: RUNS },
    );
    expect(compacted).toBeGreaterThan(0);
  }, 300_000);
});
