/**
 * Issue 11, the OpenAI Responses API as a third format: items are detected, stored as they came,
 * counted with o200k, compacted, converted where lossless, and every view is accepted by a fake
 * Responses API that reads requests on its own, at every budget, through every strategy.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeResponsesServer,
  responsesRequestProblems,
  sealReasoning,
  startFakeResponses,
} from '../../../test/support/fake-responses-server.js';
import { itemsConversationArb } from '../../../test/support/responses-items-arb.js';
import { runCli } from '../../../test/support/run-cli.js';
import { viewAtShare } from '../../../test/support/view-at-share.js';
import { InvalidMessageError } from '../../errors.js';
import { addOpenAIResponse } from '../../integrations/providers.js';
import { ContextManager } from '../../manager.js';
import type { HistoryEntry, Message } from '../../messages/types.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { getTextTokenCounter } from '../../tokens/encodings.js';
import { buildAtoms } from '../../wire/atoms.js';
import { convertMessages } from '../../wire/convert.js';
import { detectConversationFormat } from '../../wire/detect.js';
import { validateMessage } from '../../wire/validate-message.js';
import { validateRequest } from '../../wire/validate-request.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const STRATEGIES = ['summarize', 'truncate', 'smart', 'layered'] as const;

let server: FakeResponsesServer;
beforeAll(async () => {
  server = await startFakeResponses();
});
afterAll(async () => {
  await server.close();
});

async function post(input: readonly Message[]): Promise<number> {
  const res = await fetch(`${server.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', input }),
  });
  await res.text();
  return res.status;
}

const rs = {
  type: 'reasoning',
  id: 'rs_1',
  summary: [{ type: 'summary_text', text: 's' }],
  encrypted_content: sealReasoning('rs_1', ['s']),
};
const call = {
  type: 'function_call',
  id: 'fc_rs_1_0',
  call_id: 'call_1',
  name: 'lookup',
  arguments: '{"q":1}',
};
const output = (text: string) => ({ type: 'function_call_output', call_id: 'call_1', output: text });
const items = (...list: unknown[]) => list as Message[];
const entries = (messages: readonly Message[]): HistoryEntry[] =>
  messages.map((message, seq) => ({ seq, message, metadata: { timestamp: '2026-01-01T00:00:00.000Z' } }));

describe('Responses API items', () => {
  it('are detected, including after a developer message that fits both OpenAI APIs', () => {
    expect(
      detectConversationFormat(items({ role: 'user', content: [{ type: 'input_text', text: 'hi' }] })),
    ).toBe('openai-responses');
    expect(detectConversationFormat(items(call))).toBe('openai-responses');
  });

  it('are stored as they came and validated by their documented fields', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'developer', content: 'be brief' });
    await ctx.addMessage({ role: 'user', content: 'look it up' });
    for (const item of [rs, call, output('found')]) await ctx.addMessage(item);
    expect(await ctx.getMessages()).toEqual([
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: 'look it up' },
      rs,
      call,
      output('found'),
    ]);
    expect(() =>
      validateMessage({ type: 'function_call', call_id: '', name: 'f' }, 'm', 'openai-responses'),
    ).toThrow(/m\.call_id: expected a non-empty string/);
    expect(() => validateMessage({ type: 'teleport', id: 'x' }, 'm', 'openai-responses')).toThrow(
      /m\.type: expected a Responses API item type/,
    );
  });

  it('keep reasoning with the call it precedes and calls with their outputs, placeholders for missing ones', () => {
    const { atoms, repairs } = buildAtoms(
      entries(items({ role: 'user', content: 'go' }, rs, call)),
      'openai-responses',
    );
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [1, 2]]);
    expect(atoms[1]!.open).toBe(true);
    const closed = buildAtoms(
      entries(items({ role: 'user', content: 'go' }, rs, call, { role: 'user', content: 'next' })),
      'openai-responses',
    );
    expect(closed.atoms[1]!.messages.at(-1)).toMatchObject({
      type: 'function_call_output',
      call_id: 'call_1',
    });
    expect(closed.repairs.map((r) => r.kind)).toContain('missing_result');
    // The open tail shows a placeholder too until the output comes (as in Chat Completions).
    expect(repairs.map((r) => r.kind)).toEqual(['missing_result']);
  });

  it('keep reasoning with its call when the model wrote a message between them (an empty one, narration)', () => {
    // Found by the hostile-views property (seed 1407531717): the reasoning went with the empty
    // message, its call (whose id names the reasoning) with the output, and a compaction that
    // summarized the first atom sent the call without its reasoning, which the API refuses.
    const empty = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '' }] };
    const named = { ...call, id: `fc_${(rs as { id: string }).id}_0` };
    const list = items({ role: 'user', content: 'go' }, rs, empty, named, output('r'), {
      role: 'user',
      content: 'next',
    });
    const { atoms } = buildAtoms(entries(list), 'openai-responses');
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [1, 2, 3, 4], [5]]);
    // Without the reasoning's atom the view is still one the API takes: the call went with it.
    const view = [atoms[0]!, atoms[2]!].flatMap((a) => a.messages);
    expect(validateRequest(view, 'openai-responses').problems).toEqual([]);
  });

  it('show a reused call_id renamed, call and output alike, and leave the stored items alone', () => {
    const again = { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' };
    const list = items({ role: 'user', content: 'go' }, call, output('a'), again, output('b'));
    const { atoms, repairs } = buildAtoms(entries(list), 'openai-responses');
    expect(atoms[2]!.messages).toEqual([
      { ...again, call_id: 'call_1_s3' },
      { type: 'function_call_output', call_id: 'call_1_s3', output: 'b' },
    ]);
    expect(repairs.map((r) => r.kind)).toEqual(['renamed_id']);
    const view = atoms.flatMap((a) => a.messages);
    expect(validateRequest(view, 'openai-responses').problems).toEqual([]);
    expect(list[3]).toEqual(again);
  });

  it('validateRequest applies the pairing and reasoning rules', () => {
    expect(
      validateRequest(items({ role: 'user', content: 'go' }, rs, call, output('r')), 'openai-responses')
        .problems,
    ).toEqual([]);
    const paths = (list: Message[]) => validateRequest(list, 'openai-responses').problems.map((p) => p.path);
    expect(paths(items({ role: 'user', content: 'go' }, call))).toEqual(['input[1].call_id']);
    expect(paths(items({ role: 'user', content: 'go' }, output('r')))).toEqual(['input[1].call_id']);
    expect(paths(items({ role: 'user', content: 'go' }, rs))).toEqual(['input[1]']);
  });

  it('count text exactly with o200k', () => {
    const counter = createTokenCounter(getModelInfo('gpt-4o')!);
    const o200k = getTextTokenCounter('o200k_base');
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    const a = counter.countMessage(output(text) as Message, 'openai-responses');
    const b = counter.countMessage(output(`${text}${text}`) as Message, 'openai-responses');
    expect(b - a).toBe(o200k(`${text}${text}`) - o200k(text));
    const m1 = counter.countMessage(
      { role: 'user', content: [{ type: 'input_text', text }] } as Message,
      'openai-responses',
    );
    expect(m1 - o200k(text)).toBe(
      counter.countMessage(
        { role: 'user', content: [{ type: 'input_text', text: '' }] } as Message,
        'openai-responses',
      ),
    );
  });

  it('convert to and from Chat Completions where lossless, and list what cannot go across', () => {
    const chat = convertMessages(items({ role: 'user', content: 'go' }, call, output('r')), 'openai');
    expect(chat).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'r' },
    ]);
    expect(convertMessages(chat, 'openai-responses')).toEqual([
      { type: 'message', role: 'user', content: 'go' },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":1}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'r' },
    ]);
    try {
      convertMessages(
        items({ role: 'user', content: 'go' }, rs, call, output('r'), {
          type: 'web_search_call',
          id: 'ws',
          status: 'completed',
        }),
        'anthropic',
      );
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidMessageError);
      expect((err as InvalidMessageError).issues.map((i) => i.path)).toEqual(['messages[1]', 'messages[4]']);
      expect((err as InvalidMessageError).message).toMatch(/encrypted_content/);
    }
  });

  it('addOpenAIResponse adds a Responses response’s output and records its usage', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'user', content: 'go' });
    const added = await addOpenAIResponse(ctx, {
      object: 'response',
      output: [rs, call],
      usage: { input_tokens: 12, output_tokens: 5, total_tokens: 17 },
    });
    expect(added).toEqual([rs, call]);
    await ctx.addMessage(output('r'));
    const view = await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
    expect(view).toEqual(items({ role: 'user', content: 'go' }, rs, call, output('r')));
    expect(await post(view)).toBe(200);
  });

  it('the fake Responses API refuses an edited reasoning item and a call without its reasoning', () => {
    const edited = { ...rs, summary: [{ type: 'summary_text', text: 'changed' }] };
    expect(
      responsesRequestProblems({
        input: [{ role: 'user', content: 'go' }, edited, call, output('r')],
      }).join(),
    ).toMatch(/modified/);
    expect(
      responsesRequestProblems({ input: [{ role: 'user', content: 'go' }, call, output('r')] }).join(),
    ).toMatch(/required 'reasoning' item/);
  });
});

describe('the CLI takes the Responses format', () => {
  it('validate detects it and applies its rules; compact converts a Chat Completions file to it', async () => {
    const good = JSON.stringify([
      { role: 'developer', content: 'x' },
      { role: 'user', content: 'go' },
      rs,
      call,
      output('r'),
    ]);
    const ok = await runCli(['validate', '-'], { input: good });
    expect(ok.stdout).toMatch(/valid \(5 messages, OpenAI Responses\)/);
    expect(ok.code).toBe(0);
    const bad = await runCli(['validate', '-', '--provider', 'openai-responses'], {
      input: JSON.stringify([{ role: 'user', content: 'go' }, call]),
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/No tool output found for function call/);
    const chat = JSON.stringify([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
    ]);
    const compacted = await runCli(
      ['compact', '-', '--format', 'openai-responses', '--max-tokens', '10000'],
      {
        input: chat,
      },
    );
    expect(compacted.code).toBe(0);
    expect(compacted.stdout).toContain('"function_call_output"');
  }, 60_000);
});

describe('every Responses item kind, every budget, every strategy', () => {
  it('each view is accepted by the fake Responses API and the history is unchanged', async () => {
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(
        itemsConversationArb,
        fc.double({ min: 0.1, max: 1.3, noNaN: true }),
        fc.constantFrom(...STRATEGIES),
        async (conv, share, strategy) => {
          const ctx = new ContextManager({ model: 'gpt-4o', strategy });
          for (const m of conv) await ctx.addMessage(m);
          const fitted = await viewAtShare(ctx, conv, 'gpt-4o', 'openai-responses', share);
          if (!fitted) return;
          const { view } = fitted;
          if (JSON.stringify(view).includes('contextkit')) compacted++;
          expect(validateRequest(view, 'openai-responses').problems).toEqual([]);
          expect(responsesRequestProblems({ input: view })).toEqual([]);
          expect(await post(view)).toBe(200);
          expect(await ctx.getMessages()).toEqual(conv);
        },
      ),
      { numRuns: RUNS },
    );
    expect(compacted).toBeGreaterThan(0);
  });
});
