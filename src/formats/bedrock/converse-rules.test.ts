/**
 * Issue 31 item 5: every rule of the Converse API reference on a message's content, in the fake
 * server, in `validateRequest` and at `addMessage`. From
 * docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html ("up to 20 images",
 * "up to five documents", "if you include a ContentBlock with a document field … you must also
 * include a ContentBlock with a text field", "you can only include images and documents if the
 * role is user"), API_runtime_DocumentBlock.html (the name: alphanumerics, single whitespace,
 * hyphens, parentheses, square brackets, 1–200) and API_runtime_ToolUseBlock.html (the name: 1–64
 * of [a-zA-Z0-9_-]). What can be shaped is shaped in the view (a document's name, a text block
 * beside documents alone); what cannot is refused at `addMessage` with its path.
 */
import { describe, expect, it } from 'vitest';
import { bedrockRequestProblems } from '../../../test/support/fake-bedrock-server.js';
import { InvalidMessageError } from '../../errors.js';
import { ContextManager } from '../../manager.js';
import type { Message } from '../../messages/types.js';
import { validateRequest } from '../../wire/validate-request.js';
import { toBedrockRequest } from './request.js';
import { bedrockTurnBreaks } from './request-problems.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF').toString('base64');
const PNG = (() => {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'ascii');
  b.writeUInt32BE(64, 16);
  b.writeUInt32BE(64, 20);
  return b.toString('base64');
})();
const doc = (name: string) => ({ document: { name, format: 'pdf', source: { bytes: PDF } } });
const image = { image: { format: 'png', source: { bytes: PNG } } };
const reply = { role: 'assistant', content: [{ text: 'Read it.' }] };

function fakeProblems(view: readonly Message[]): string[] {
  return bedrockRequestProblems({ ...toBedrockRequest(view) }, { signatures: false });
}

async function viewOf(messages: readonly unknown[]): Promise<Message[]> {
  const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
  for (const m of messages) await ctx.addMessage(m);
  const view = await ctx.getMessagesForRequest();
  expect(await ctx.getMessages()).toEqual(messages);
  return view;
}

describe('Converse rules on message content', () => {
  it('the fake server and validateRequest refuse what Converse refuses', () => {
    const cases: Message[][] = [
      [
        { role: 'user', content: [{ text: 'Summarize.' }, doc('report.pdf')] } as unknown as Message,
        reply as Message,
      ],
      [{ role: 'user', content: [doc('Report')] } as unknown as Message, reply as Message],
      [
        { role: 'user', content: [{ text: 'All six.' }, ...[1, 2, 3].map((n) => doc(`Part ${n}`))] },
        { role: 'user', content: [4, 5, 6].map((n) => doc(`Part ${n}`)) },
        reply,
      ] as unknown as Message[],
      [
        { role: 'user', content: [{ text: 'Draw.' }] },
        { role: 'assistant', content: [{ text: 'Here.' }, image] },
        { role: 'user', content: [{ text: 'Thanks.' }] },
      ] as unknown as Message[],
      [
        { role: 'user', content: [{ text: 'Read a file.' }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'fs.read', input: {} } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'ok' }] } }] },
      ] as unknown as Message[],
    ];
    for (const messages of cases) {
      expect(
        validateRequest(messages, 'bedrock').problems.length,
        JSON.stringify(messages).slice(0, 120),
      ).toBeGreaterThan(0);
      expect(fakeProblems(messages).length, JSON.stringify(messages).slice(0, 120)).toBeGreaterThan(0);
    }
  });

  it('addMessage refuses what no view can shape, naming where', async () => {
    const refused: Array<[unknown, string]> = [
      [{ role: 'assistant', content: [{ text: 'Here.' }, image] }, 'messages[1].content[1].image'],
      [{ role: 'assistant', content: [{ text: 'Here.' }, doc('Report')] }, 'messages[1].content[1].document'],
      [
        { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'fs.read', input: {} } }] },
        'messages[1].content[0].toolUse.name',
      ],
      [
        { role: 'user', content: [{ text: 'Six.' }, ...[1, 2, 3, 4, 5, 6].map((n) => doc(`Part ${n}`))] },
        'messages[1].content',
      ],
      [
        { role: 'user', content: [{ text: 'Many.' }, ...Array.from({ length: 21 }, () => image)] },
        'messages[1].content',
      ],
    ];
    for (const [message, path] of refused) {
      const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
      await ctx.addMessage({ role: 'user', content: [{ text: 'Start.' }] });
      const error = await ctx.addMessage(message).catch((e: unknown) => e);
      expect(error, path).toBeInstanceOf(InvalidMessageError);
      expect((error as InvalidMessageError).issues.map((i) => i.path)).toContain(path);
      expect(await ctx.getMessages()).toHaveLength(1);
    }
  });

  it('shapes in the view what it can: a document name Converse refuses, documents without a text block', async () => {
    const messages = [
      { role: 'user', content: [{ text: 'Summarize the attached.' }, doc('report.pdf')] },
      reply,
      { role: 'user', content: [doc('Q3 results (final).v2.pdf'), doc('notes_2024.pdf')] },
      reply,
      {
        role: 'user',
        content: [
          { text: 'And this one?' },
          { document: { name: 'a   b', format: 'txt', source: { text: 'plain words' } } },
        ],
      },
    ];
    const view = await viewOf(messages);
    expect(validateRequest(view, 'bedrock').problems).toEqual([]);
    expect(fakeProblems(view)).toEqual([]);
    const names = JSON.stringify(view).match(/"name":"[^"]*"/g);
    expect(names).toEqual([
      '"name":"report pdf"',
      '"name":"Q3 results (final) v2 pdf"',
      '"name":"notes 2024 pdf"',
      '"name":"a b"',
    ]);
    expect(JSON.stringify(view[2])).toContain('[documents: Q3 results (final) v2 pdf, notes 2024 pdf]');
  });

  it('breaks a run of user messages whose documents or images one turn cannot hold with a model turn', async () => {
    const look = (k: number, docs: number, images = 0) => ({
      role: 'user',
      content: [
        { text: `Look at these ${k}` },
        ...Array.from({ length: docs }, (_, d) => doc(`Report ${k} ${d}`)),
        ...Array.from({ length: images }, () => image),
      ],
    });
    const long = { role: 'assistant', content: [{ text: 'words '.repeat(40_000) }] };
    const messages = [look(0, 3), long, look(1, 3, 11), long, look(2, 2, 11)];
    const ctx = new ContextManager({ model: 'claude-sonnet-4-5' });
    await ctx.addMessage(messages[0]!, { critical: true });
    await ctx.addMessage(messages[1]!);
    await ctx.addMessage(messages[2]!, { pinned: true });
    await ctx.addMessage(messages[3]!);
    await ctx.addMessage(messages[4]!);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 45_000 });
    // The long replies left out, the three user messages stand side by side: 8 documents, 22 images.
    const shown = view.map((m) => JSON.stringify(m));
    for (const kept of [messages[0], messages[2], messages[4]]) expect(shown).toContain(JSON.stringify(kept));
    expect(shown).not.toContain(JSON.stringify(long));
    expect(validateRequest(view, 'bedrock').problems).toEqual([]);
    expect(fakeProblems(view)).toEqual([]);
    const breaks = view.filter(
      (m) => m.role === 'assistant' && JSON.stringify(m).includes('are omitted from this request'),
    );
    expect(breaks).toHaveLength(2);
    expect(await ctx.getMessages()).toEqual(messages);
  });

  it('counts its turn breaks where it fits the view: one they take past the budget is compacted, not refused', async () => {
    const look = (k: number) => ({
      role: 'user',
      content: [
        { text: `Look at these ${k}` },
        ...Array.from({ length: 3 }, (_, d) => doc(`Report ${k} ${d}`)),
      ],
    });
    const messages: unknown[] = [];
    for (let t = 0; t < 6; t++) {
      messages.push({ role: 'user', content: [{ text: `question ${t} ${'word '.repeat(300)}` }] });
      messages.push({ role: 'assistant', content: [{ text: 'answer '.repeat(600) }] });
    }
    // Two user messages side by side, six documents: one turn cannot hold them, a break goes between.
    messages.push(look(1), look(2));
    // Compacting only past the budget: the whole view, its break included, is what a request sends.
    const options = { model: 'claude-sonnet-4-5', compactThreshold: 1 };
    const roomy = new ContextManager(options);
    for (const m of messages) await roomy.addMessage(m);
    const whole = await roomy.getMessagesForRequest({ tokenBudget: 1_000_000 });
    expect(whole).toHaveLength(messages.length + 1);
    const { tokens, budget } = roomy.usage();
    // A budget one token short of the whole view with its break: the messages alone fit it.
    const tokenBudget = tokens - 1 + (1_000_000 - budget);
    const ctx = new ContextManager(options);
    for (const m of messages) await ctx.addMessage(m);
    const view = await ctx.getMessagesForRequest({ tokenBudget });
    const sent = ctx.usage();
    expect(sent.budget).toBe(tokens - 1);
    expect(sent.tokens).toBeLessThanOrEqual(sent.budget);
    expect(view.length).toBeLessThan(whole.length);
    expect(JSON.stringify(view.at(-1))).toBe(JSON.stringify(messages.at(-1)));
    expect(validateRequest(view, 'bedrock').problems).toEqual([]);
    expect(fakeProblems(view)).toEqual([]);
    expect(await ctx.getMessages()).toEqual(messages);
  });

  it('puts no break before a user message that answers tool calls, nor between turns that fit', () => {
    const calls = { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'read', input: {} } }] };
    const results = {
      role: 'user',
      content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'ok' }] } }, doc('a'), doc('b'), doc('c')],
    };
    const three = { role: 'user', content: [{ text: 'x' }, doc('d'), doc('e'), doc('f')] };
    expect(bedrockTurnBreaks([three, calls, results, three])).toEqual([3]);
    expect(bedrockTurnBreaks([three, three, three])).toEqual([1, 2]);
    expect(bedrockTurnBreaks([three, calls, three])).toEqual([]);
    expect(bedrockTurnBreaks([{ role: 'user', content: [{ text: 'x' }, doc('a')] }, three])).toEqual([]);
  });
});
