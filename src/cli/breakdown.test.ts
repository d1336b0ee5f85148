import { describe, expect, it } from 'vitest';
import { callingMessage, functionCall } from '../../test/support/openai-calls.js';
import type { Message } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { ModelInfo } from '../tokens/types.js';
import { convertMessages } from '../wire/convert.js';
import { conversationBreakdown, previewMessage } from './breakdown.js';

const counter = createTokenCounter(getModelInfo('gpt-4o') as ModelInfo);
const bigFile = Array.from(
  { length: 200 },
  (_, i) => `${i + 1}\texport const rate${i} = ${i * 7} / 100;`,
).join('\n');

const conversation: Message[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Why does INV-2024-00042 total 101.99?' },
  callingMessage(
    functionCall('call_1', 'read_file', '{"path":"src/tax.ts"}'),
    functionCall('call_2', 'grep', '{"pattern":"rate"}'),
  ),
  { role: 'tool', tool_call_id: 'call_1', content: bigFile },
  { role: 'tool', tool_call_id: 'call_2', content: 'src/tax.ts:3: rate' },
  {
    role: 'assistant',
    content: 'Checking again.',
    // Real logs reuse ids: pairing is by the calls of the message just before.
    tool_calls: [functionCall('call_1', 'read_file', '{"path":"src/total.ts"}')],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'export const total = 1;' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Here is the screenshot.' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
    ],
  },
  { role: 'assistant', content: 'The rate table rounds each line; total.ts sums after.' },
];

describe('conversationBreakdown', () => {
  const b = conversationBreakdown(conversation, 'openai', counter);

  it('adds every message and the request overhead up to the total', () => {
    const perMessage = conversation.reduce((n, m) => n + counter.countMessage(m, 'openai'), 0);
    expect(b.tokens).toBe(perMessage + counter.requestOverhead);
    expect(b.byRole.reduce((n, r) => n + r.tokens, 0)).toBe(perMessage);
    expect(b.byRole.find((r) => r.role === 'tool')).toMatchObject({ messages: 3 });
    expect(b.messages).toBe(conversation.length);
  });

  it('attributes calls and results to their tool, pairing reused ids by position', () => {
    const read = b.byTool.find((t) => t.tool === 'read_file');
    const grep = b.byTool.find((t) => t.tool === 'grep');
    expect(read).toMatchObject({ calls: 2, results: 2 });
    expect(grep).toMatchObject({ calls: 1, results: 1 });
    expect(read?.resultTokens).toBe(
      counter.countMessage(conversation[3] as Message, 'openai') +
        counter.countMessage(conversation[6] as Message, 'openai'),
    );
    expect(read?.largestResult).toBe(counter.countMessage(conversation[3] as Message, 'openai'));
    expect(b.byTool[0]?.tool).toBe('read_file');
  });

  it('lists messages largest first with a preview, and counts images', () => {
    expect(b.bySize[0]).toMatchObject({ seq: 3, role: 'tool' });
    expect(b.bySize[0]?.preview).toMatch(/^\[read_file\] 1 export const rate0/);
    expect(b.images).toBe(1);
  });

  it('gives the same attribution for the Anthropic form of the conversation', () => {
    const anthropic = convertMessages(conversation, 'anthropic');
    const a = conversationBreakdown(anthropic, 'anthropic', counter);
    expect(a.byTool.map((t) => [t.tool, t.calls, t.results]).sort()).toEqual([
      ['grep', 1, 1],
      ['read_file', 2, 2],
    ]);
    expect(a.images).toBe(1);
  });
});

describe('previewMessage', () => {
  it('shows the calls a message makes and keeps to one short line', () => {
    expect(previewMessage(conversation[2] as Message)).toBe(
      '→ read_file({"path":"src/tax.ts"}), grep({"pattern":"rate"})',
    );
    const long = previewMessage({ role: 'user', content: `line one\n\nline two ${'x'.repeat(200)}` });
    expect(long).not.toMatch(/\n/);
    expect(long.length).toBeLessThanOrEqual(90);
    expect(previewMessage({ role: 'assistant', content: '' })).toBe('(empty)');
  });
});
