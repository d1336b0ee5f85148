/**
 * Issue 31 item 10: model narration stored as a content of its own right before the content with
 * the function call. Gemini refuses a function call turn that does not come right after a user
 * turn or a function response turn (its 400: "Please ensure that function call turn comes
 * immediately after a user turn or after a function response turn"); a reply that narrates and
 * calls is one `model` content with a text part and a `functionCall` part (ai.google.dev/gemini-api/docs/function-calling).
 * The view joins the narration to the call's content, parts in stored order; the history keeps both.
 */
import { describe, expect, it } from 'vitest';
import { geminiRequestProblems } from '../../../test/support/fake-gemini-server.js';
import { ContextManager, type GeminiMessage, toRequest, validateRequest } from '../../index.js';
import type { Message } from '../../messages/types.js';

const NARRATED = [
  { role: 'user', parts: [{ text: 'Find order 42.' }] },
  { role: 'model', parts: [{ text: 'Let me look that up.' }] },
  { role: 'model', parts: [{ functionCall: { name: 'get_order', args: { id: 42 } } }] },
  { role: 'user', parts: [{ functionResponse: { name: 'get_order', response: { status: 'shipped' } } }] },
  { role: 'user', parts: [{ text: 'And order 43?' }] },
];

async function viewOf(messages: readonly unknown[], tokenBudget?: number): Promise<Message[]> {
  const ctx = new ContextManager({ model: 'gemini-2.5-flash' });
  for (const m of messages) await ctx.addMessage(m);
  const view = await ctx.getMessagesForRequest(tokenBudget === undefined ? {} : { tokenBudget });
  expect(await ctx.getMessages()).toEqual(messages);
  return view;
}

function expectAccepted(view: readonly Message[]): void {
  expect(validateRequest(view, 'gemini').problems).toEqual([]);
  expect(geminiRequestProblems({ ...toRequest(view as GeminiMessage[], 'gemini') })).toEqual([]);
}

describe('Gemini narration before a call', () => {
  it('joins the narration to the call content in the view: accepted by the validator and the fake API', async () => {
    const view = await viewOf(NARRATED);
    expectAccepted(view);
    expect(view[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Let me look that up.' }, { functionCall: { name: 'get_order', args: { id: 42 } } }],
    });
    expect(view).toHaveLength(4);
  });

  it('joins every narrating content, and keeps narration that no call follows as it is', async () => {
    const messages = [
      NARRATED[0],
      { role: 'model', parts: [{ text: 'Hm.' }] },
      ...NARRATED.slice(1),
      { role: 'model', parts: [{ text: 'Order 42 shipped; checking 43.' }] },
      { role: 'model', parts: [{ text: 'One moment.' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_order', args: { id: 43 } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_order', response: { status: 'lost' } } }] },
      { role: 'model', parts: [{ text: 'Order 43 was lost.' }] },
      { role: 'user', parts: [{ text: 'Thanks.' }] },
    ];
    const view = await viewOf(messages);
    expectAccepted(view);
    expect(view.map((m) => (m as unknown as { parts: unknown[] }).parts.length)).toEqual([
      1, 3, 1, 1, 3, 1, 1, 1,
    ]);
  });

  it('a call added after its narration was the tail joins it (the tail is grouped again)', async () => {
    const ctx = new ContextManager({ model: 'gemini-2.5-flash' });
    await ctx.addMessage(NARRATED[0]);
    await ctx.addMessage(NARRATED[1]);
    await ctx.getMessagesForRequest();
    for (const m of NARRATED.slice(2)) await ctx.addMessage(m);
    expectAccepted(await ctx.getMessagesForRequest());
  });

  it('under compaction the narration and its call stay or go together', async () => {
    const long = (n: number) => Array.from({ length: 300 }, (_, i) => `w${(i * 7 + n) % 53}`).join(' ');
    const messages: unknown[] = [];
    for (let t = 0; t < 12; t++) {
      messages.push(
        { role: 'user', parts: [{ text: `ask ${t}: ${long(t)}` }] },
        { role: 'model', parts: [{ text: `looking ${t}` }] },
        { role: 'model', parts: [{ functionCall: { name: 'search', args: { q: `q${t}` } } }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'search', response: { content: long(t + 1) } } }],
        },
        { role: 'user', parts: [{ text: `go on ${t}` }] },
      );
    }
    for (const budget of [900, 1_500, 3_000, 6_000]) expectAccepted(await viewOf(messages, budget));
  });
});
