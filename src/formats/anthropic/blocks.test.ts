/**
 * Issue 11, Anthropic: every block the Messages API documents is stored, counted, compacted and
 * sent so that the API (here its fake, which reads requests on its own) accepts the view, at every
 * budget, through every strategy, with and without automatic cache breakpoints.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BlocksConversation,
  blocksConversationArb,
} from '../../../test/support/anthropic-blocks-arb.js';
import {
  anthropicRequestProblems,
  type FakeAnthropicServer,
  messagesBody,
  signThinking,
  startFakeAnthropic,
} from '../../../test/support/fake-anthropic-server.js';
import { historyEntries } from '../../../test/support/history-entries.js';
import { viewAtShare } from '../../../test/support/view-at-share.js';
import { InvalidMessageError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import type { Message } from '../../messages/types.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { createTokenCounter } from '../../tokens/counter.js';
import { AtomIndex, buildAtoms } from '../../wire/atoms.js';
import { convertMessages } from '../../wire/convert.js';
import { validateMessage } from '../../wire/validate-message.js';
import { validateRequest } from '../../wire/validate-request.js';

const MODEL = 'claude-sonnet-4-5';
const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const STRATEGIES = ['summarize', 'truncate', 'smart', 'layered'] as const;

let server: FakeAnthropicServer;
beforeAll(async () => {
  server = await startFakeAnthropic();
});
afterAll(async () => {
  await server.close();
});

async function post(view: readonly Message[], thinking: boolean): Promise<{ status: number; text: string }> {
  const body = messagesBody(view, thinking ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : {});
  const res = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

const long = (n: number) => Array.from({ length: n }, (_, i) => `line ${i} of output`).join('\n');

const codeReply: Message = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Let me compute that.' },
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'print(1)' } },
    {
      type: 'code_execution_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: { type: 'code_execution_result', stdout: long(400), stderr: '', return_code: 0, content: [] },
    },
    { type: 'text', text: 'The answer is 1.' },
  ],
} as unknown as Message;

describe('Anthropic blocks beyond the basic ones', () => {
  it('stores a web-search reply (the one the issue says threw) as it came', async () => {
    const ctx = new ContextManager({ model: MODEL });
    await ctx.addMessage({ role: 'user', content: 'What is new in TypeScript?' });
    const reply = {
      role: 'assistant',
      content: [
        {
          type: 'server_tool_use',
          id: 'srvtoolu_01',
          name: 'web_search',
          input: { query: 'typescript news' },
        },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_01',
          content: [
            {
              type: 'web_search_result',
              url: 'https://x.dev',
              title: 'X',
              encrypted_content: 'QUJD',
              page_age: null,
            },
          ],
        },
        {
          type: 'text',
          text: 'TypeScript 6 shipped.',
          citations: [
            {
              type: 'web_search_result_location',
              url: 'https://x.dev',
              title: 'X',
              encrypted_index: 'QQ==',
              cited_text: 'TS 6',
            },
          ],
        },
      ],
    };
    await ctx.addMessage(reply);
    expect((await ctx.getMessages())[1]).toEqual(reply);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
    expect(view[1]).toEqual(reply);
    expect(validateRequest(view, 'anthropic').problems).toEqual([]);
  });

  it('refuses to convert server-tool, MCP, upload, search-result and unknown blocks to OpenAI, listing them', () => {
    const list = [
      {
        role: 'user',
        content: [{ type: 'search_result', source: 's', title: 't', content: [{ type: 'text', text: 'b' }] }],
      },
      codeReply,
      {
        role: 'user',
        content: [
          { type: 'container_upload', file_id: 'f' },
          { type: 'text', text: 'x' },
        ],
      },
    ] as unknown as Message[];
    for (const to of ['openai', 'openai-responses'] as const) {
      try {
        convertMessages(list, to);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidMessageError);
        expect((err as InvalidMessageError).code).toBe('not_convertible');
        expect((err as InvalidMessageError).issues.map((i) => i.path)).toEqual([
          'messages[0].content[0]',
          'messages[1].content[1]',
          'messages[1].content[2]',
          'messages[2].content[0]',
        ]);
      }
    }
  });

  it('checks the new blocks’ fields and where they may stand', () => {
    expect(() =>
      validateMessage(
        { role: 'assistant', content: [{ type: 'mcp_tool_use', id: 'a', name: 'f', input: {} }] },
        'm',
        'anthropic',
      ),
    ).toThrow('m.content[0].server_name: expected a non-empty string');
    expect(() =>
      validateMessage({ role: 'user', content: [{ type: 'container_upload' }] }, 'm', 'anthropic'),
    ).toThrow('m.content[0].file_id: expected a non-empty string');
    expect(() =>
      validateMessage(
        { role: 'assistant', content: [{ type: 'web_fetch_tool_result', tool_use_id: 'x' }] },
        'm',
        'anthropic',
      ),
    ).toThrow('m.content[0].content: expected the result content');
    expect(() =>
      validateMessage(
        { role: 'assistant', content: [{ type: 'text', text: 'a', citations: 'x' }] },
        'm',
        'anthropic',
      ),
    ).toThrow('m.content[0].citations: expected an array of citations');
  });

  it('pairs server-tool results with their calls inside the assistant turn', () => {
    const user: Message = { role: 'user', content: 'hi' };
    const orphan = {
      role: 'assistant',
      content: [{ type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_9', content: {} }],
    } as unknown as Message;
    expect(validateRequest([user, orphan], 'anthropic').problems.map((p) => p.path)).toEqual([
      'messages[1].content[0].tool_use_id',
    ]);
    const running = {
      role: 'assistant',
      content: [{ type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: {} }],
    } as unknown as Message;
    // A pause_turn reply may end the request; a user message may not follow it unanswered.
    expect(validateRequest([user, running], 'anthropic').valid).toBe(true);
    expect(validateRequest([user, running, user], 'anthropic').problems.map((p) => p.path)).toEqual([
      'messages[1].content[0].id',
    ]);
    expect(anthropicRequestProblems(messagesBody([user, running, user]))).not.toEqual([]);
  });

  it('keeps a pause_turn reply and the reply that continues it in one atom, also when built turn by turn', () => {
    const paused = {
      role: 'assistant',
      content: [{ type: 'server_tool_use', id: 'srvtoolu_p', name: 'code_execution', input: { code: 'x' } }],
    } as unknown as Message;
    const rest = {
      role: 'assistant',
      content: [(codeReply.content as unknown[])[2], { type: 'text', text: 'done' }].map((b) =>
        JSON.stringify(b).includes('srvtoolu_1')
          ? JSON.parse(JSON.stringify(b).replaceAll('srvtoolu_1', 'srvtoolu_p'))
          : b,
      ),
    } as unknown as Message;
    const list = historyEntries([
      { role: 'user', content: 'run it' },
      paused,
      rest,
      { role: 'user', content: 'thanks' },
    ]);
    const { atoms } = buildAtoms(list, 'anthropic');
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [1, 2], [3]]);
    expect(atoms[1]!.results.map((r) => [r.key, r.messageIndex, r.toolName])).toEqual([
      ['2:b0', 1, 'code_execution'],
    ]);
    const index = new AtomIndex('anthropic');
    index.update(list.slice(0, 2));
    expect(index.at(1).open).toBe(true);
    index.update(list);
    expect(index.all().map((a) => a.seqs)).toEqual([[0], [1, 2], [3]]);
  });

  it('clearing shortens a server tool’s output in its own shape, keeping the pair in one atom', async () => {
    const { atoms } = buildAtoms(
      historyEntries([{ role: 'user', content: 'compute' }, codeReply]),
      'anthropic',
    );
    expect(atoms[1]!.results.map((s) => [s.key, s.toolName, s.blockIndex])).toEqual([
      ['1:b2', 'code_execution', 2],
    ]);

    const ctx = new ContextManager({ model: MODEL, keepToolResults: 0, strategy: 'truncate' });
    await ctx.addMessage({ role: 'system', content: 'sys' });
    await ctx.addMessage({ role: 'user', content: 'compute' });
    await ctx.addMessage(codeReply);
    for (let t = 0; t < 4; t++) {
      await ctx.addMessage({ role: 'user', content: `next ${t}` });
      await ctx.addMessage({ role: 'assistant', content: `ok ${t}` });
    }
    const full = await ctx.getTokenCount();
    const view = await ctx.getMessagesForRequest({ tokenBudget: Math.floor(full * 0.6) });
    const shown = view.find((m) => JSON.stringify(m).includes('srvtoolu_1')) as unknown as {
      content: Array<Record<string, unknown>>;
    };
    expect(shown).toBeDefined();
    const result = shown.content.find((b) => b.type === 'code_execution_tool_result')!;
    const content = result.content as Record<string, unknown>;
    expect(content.type).toBe('code_execution_result');
    expect(content.return_code).toBe(0);
    expect(String(content.stdout)).toMatch(/contextkit/);
    expect(String(content.stdout).length).toBeLessThan(300);
    expect(validateRequest(view, 'anthropic').problems).toEqual([]);
    expect((await post(view, false)).status).toBe(200);
    expect((await ctx.getMessages())[2]).toEqual(codeReply); // stored as it came
  });

  it('counts server-tool results, MCP results and unknown blocks, warning once per unknown type', async () => {
    const counter = createTokenCounter(getModelInfo(MODEL)!);
    const bare = { role: 'assistant', content: [{ type: 'text', text: 'The answer is 1.' }] } as Message;
    expect(counter.countMessage(codeReply, 'anthropic')).toBeGreaterThan(
      counter.countMessage(bare, 'anthropic') + 1000,
    );
    const future = {
      role: 'assistant',
      content: [{ type: 'hologram_v9', payload: long(50) }],
    } as unknown as Message;
    expect(counter.countMessage(future, 'anthropic')).toBeGreaterThan(100);

    const ctx = new ContextManager({ model: MODEL });
    const warnings: string[] = [];
    ctx.on('context:warn', (e) => warnings.push(`${e.code}: ${e.message}`));
    await ctx.addMessage({ role: 'user', content: 'show me' });
    await ctx.addMessage(future);
    await ctx.addMessage({ role: 'user', content: 'again' });
    await ctx.addMessage(future);
    expect(warnings.filter((w) => w.startsWith('unknown_block'))).toEqual([
      'unknown_block: content block type "hologram_v9" is not one contextkit knows: stored and sent as it came, counted by an estimate',
    ]);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 50_000 });
    expect(view[1]).toEqual(future);
  });

  it('keeps cache_control on a cleared tool_result', async () => {
    const ctx = new ContextManager({ model: MODEL, keepToolResults: 0, strategy: 'truncate' });
    await ctx.addMessage({ role: 'user', content: 'look it up' });
    await ctx.addMessage({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: {} }],
    });
    await ctx.addMessage({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: long(300), cache_control: { type: 'ephemeral' } },
      ],
    });
    for (let t = 0; t < 3; t++) {
      await ctx.addMessage({ role: 'assistant', content: `ok ${t}` });
      await ctx.addMessage({ role: 'user', content: `next ${t}` });
    }
    const view = await ctx.getMessagesForRequest({
      tokenBudget: Math.floor((await ctx.getTokenCount()) * 0.5),
    });
    const results = view.find((m) => JSON.stringify(m).includes('tool_result'))!;
    const result = (results.content as unknown as Array<Record<string, unknown>>)[0]!;
    expect(String(result.content)).toMatch(/contextkit/);
    expect(result.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('keeps the thinking of the last tool-loop turn exactly as it came', async () => {
    const ctx = new ContextManager({ model: MODEL, strategy: 'truncate' });
    await ctx.addMessage({ role: 'system', content: 'sys' });
    for (let t = 0; t < 6; t++) {
      await ctx.addMessage({ role: 'user', content: `q${t} ${long(40)}` });
      await ctx.addMessage({ role: 'assistant', content: `a${t} ${long(40)}` });
    }
    const think = { type: 'thinking', thinking: `I should look it up. ${long(30)}`, signature: '' };
    think.signature = signThinking(think.thinking);
    await ctx.addMessage({ role: 'user', content: 'look it up' });
    await ctx.addMessage({
      role: 'assistant',
      content: [think, { type: 'tool_use', id: 't1', name: 'f', input: {} }],
    });
    await ctx.addMessage({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: long(200) }],
    });
    const view = await ctx.getMessagesForRequest({
      tokenBudget: Math.floor((await ctx.getTokenCount()) * 0.4),
    });
    expect((view.at(-2)!.content as unknown[])[0]).toEqual(think);
    expect((await post(view, true)).status).toBe(200);
  });

  it('refuses thinking going to OpenAI by default; a view for OpenAI leaves it out and keeps the history', async () => {
    const think = {
      type: 'thinking',
      thinking: 'plan the lookup',
      signature: signThinking('plan the lookup'),
    };
    const list = [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: [think, { type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'found' }] },
      {
        role: 'assistant',
        content: [
          { type: 'redacted_thinking', data: 'enc' },
          { type: 'text', text: 'done' },
        ],
      },
    ] as unknown as Message[];
    expect(() => convertMessages(list, 'openai')).toThrow(/messages\[1\]\.content\[0\].*and 1 more/);
    const ctx = new ContextManager({ model: MODEL });
    for (const m of list) await ctx.addMessage(m);
    for (const provider of ['openai', 'openai-responses'] as const) {
      const view = await ctx.getMessagesForRequest({ tokenBudget: 100_000, provider });
      expect(JSON.stringify(view)).not.toMatch(/thinking|plan the lookup|enc"/);
      expect(validateRequest(view, provider).problems).toEqual([]);
    }
    expect(await ctx.getMessages()).toEqual(list);
  });
});

describe('the fake Messages API refuses what the documentation says the API refuses', () => {
  const think = (text: string) => ({ type: 'thinking', thinking: text, signature: signThinking(text) });
  const loop = (first: unknown): Message[] =>
    [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [first, { type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r' }] },
    ] as unknown as Message[];
  const thinkingOn = { thinking: { type: 'enabled', budget_tokens: 1024 } };

  it('an edited thinking block, a tool loop without its thinking, five cache marks', () => {
    expect(anthropicRequestProblems(messagesBody(loop(think('plan')), thinkingOn))).toEqual([]);
    const edited = { ...think('plan'), thinking: 'plan, edited' };
    expect(anthropicRequestProblems(messagesBody(loop(edited), thinkingOn)).join()).toMatch(
      /Invalid signature/,
    );
    const noThinking = { type: 'text', text: 'calling' };
    expect(anthropicRequestProblems(messagesBody(loop(noThinking), thinkingOn)).join()).toMatch(
      /Expected `thinking` or `redacted_thinking`/,
    );
    const marked = (t: string) => ({ type: 'text', text: t, cache_control: { type: 'ephemeral' } });
    const five = [1, 2, 3, 4, 5].map((n) => ({
      role: n % 2 ? 'user' : 'assistant',
      content: [marked(`m${n}`)],
    }));
    expect(anthropicRequestProblems(messagesBody(five)).join()).toMatch(/maximum of 4 blocks/);
    expect(anthropicRequestProblems(messagesBody([{ role: 'assistant', content: 'hi' }])).join()).toMatch(
      /first message/,
    );
  });
});

describe('cacheBreakpoints: auto', () => {
  it('marks the last message, the last unchanged one and the system prompt on copies, at most 4 marks', async () => {
    const ctx = new ContextManager({ model: MODEL, cacheBreakpoints: 'auto' });
    await ctx.addMessage({ role: 'system', content: 'You are helpful.' });
    await ctx.addMessage({ role: 'user', content: 'one' });
    const first = await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
    expect(first[0]).toEqual({
      role: 'system',
      content: [{ type: 'text', text: 'You are helpful.', cache_control: { type: 'ephemeral' } }],
    });
    // The last message: the whole prompt is written for the next request (issue 34, item 4).
    expect(first[1]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'one', cache_control: { type: 'ephemeral' } }],
    });
    await ctx.addMessage({ role: 'assistant', content: 'two' });
    await ctx.addMessage({ role: 'user', content: 'three' });
    const second = await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
    // "one" was the last message the previous request also sent.
    expect(second[1]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'one', cache_control: { type: 'ephemeral' } }],
    });
    expect(second[3]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'three', cache_control: { type: 'ephemeral' } }],
    });
    expect(second[2]).toEqual({ role: 'assistant', content: 'two' });
    // Never stored.
    expect((await ctx.getMessages())[0]).toEqual({ role: 'system', content: 'You are helpful.' });
    expect((await post(second, false)).status).toBe(200);
  });

  it('leaves room for the caller’s own marks (4 in all)', async () => {
    const ctx = new ContextManager({ model: MODEL, cacheBreakpoints: 'auto' });
    await ctx.addMessage({ role: 'system', content: 'sys' });
    for (let t = 0; t < 4; t++) {
      await ctx.addMessage({
        role: 'user',
        content: [{ type: 'text', text: `u${t}`, cache_control: { type: 'ephemeral' } }],
      });
      await ctx.addMessage({ role: 'assistant', content: `a${t}` });
    }
    await ctx.addMessage({ role: 'user', content: 'last' });
    const view = await ctx.getMessagesForRequest({ tokenBudget: 10_000 });
    expect(JSON.stringify(view).split('cache_control').length - 1).toBe(4);
    expect(view[0]).toEqual({ role: 'system', content: 'sys' });
    expect((await post(view, false)).status).toBe(200);
  });

  it('refuses a value that is not auto or off', () => {
    expect(() => new ContextManager({ cacheBreakpoints: 'always' as 'auto' })).toThrow(/cacheBreakpoints/);
  });
});

const seen = { compacted: 0, thinkingLoops: 0 };

async function checkBlocksView(
  conv: BlocksConversation,
  share: number,
  strategy: (typeof STRATEGIES)[number],
  breakpoints: 'auto' | 'off',
): Promise<void> {
  const ctx = new ContextManager({ model: MODEL, strategy, cacheBreakpoints: breakpoints });
  for (const m of conv.messages) await ctx.addMessage(m);
  const fitted = await viewAtShare(ctx, conv.messages, MODEL, 'anthropic', share);
  if (!fitted) return;
  const { view } = fitted;
  expect(validateRequest(view, 'anthropic').problems).toEqual([]);
  if (JSON.stringify(view).includes('contextkit')) seen.compacted++;
  if (conv.thinkingLoop) seen.thinkingLoops++;
  const answer = await post(view, conv.thinkingLoop);
  expect(answer.text).toContain('"type":"message"');
  expect(answer.status).toBe(200);
  expect(await ctx.getMessages()).toEqual(conv.messages);
}

describe('every Anthropic block kind, every budget, every strategy', () => {
  it('each view is accepted by the fake Messages API and the history is unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        blocksConversationArb,
        fc.double({ min: 0.1, max: 1.3, noNaN: true }),
        fc.constantFrom(...STRATEGIES),
        fc.constantFrom('auto' as const, 'off' as const),
        checkBlocksView,
      ),
      { numRuns: RUNS },
    );
    // The runs did reach compaction and thinking tool loops.
    expect(seen.compacted).toBeGreaterThan(0);
    expect(seen.thinkingLoops).toBeGreaterThan(0);
  });
});
