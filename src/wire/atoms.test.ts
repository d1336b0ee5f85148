import { describe, expect, it } from 'vitest';
import { historyEntries } from '../../test/support/history-entries.js';
import type { Message } from '../messages/types.js';
import { AtomIndex, buildAtoms } from './atoms.js';

const call = (id: string, name = 'read_file') => ({
  id,
  type: 'function' as const,
  function: { name, arguments: '{"path":"a.ts"}' },
});

describe('atoms, OpenAI', () => {
  it('groups an assistant with parallel calls and all its results', () => {
    const { atoms, repairs } = buildAtoms(
      historyEntries([
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
        { role: 'tool', tool_call_id: 'b', content: 'B' },
        { role: 'tool', tool_call_id: 'a', content: 'A' },
        { role: 'assistant', content: 'done' },
      ]),
      'openai',
    );
    expect(atoms.map((a) => a.kind)).toEqual(['system', 'message', 'exchange', 'message']);
    expect(atoms[2]!.seqs).toEqual([2, 3, 4]);
    expect(atoms[2]!.results.map((r) => [r.key, r.resultSeq])).toEqual([
      ['2:1', 3],
      ['2:0', 4],
    ]);
    expect(atoms[2]!.repaired).toBe(false);
    expect(repairs).toEqual([]);
  });

  it('pairs reused ids by position, not by id alone', () => {
    const { atoms } = buildAtoms(
      historyEntries([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('x')] },
        { role: 'tool', tool_call_id: 'x', content: 'first' },
        { role: 'assistant', content: null, tool_calls: [call('x')] },
        { role: 'tool', tool_call_id: 'x', content: 'second' },
      ]),
      'openai',
    );
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [1, 2], [3, 4]]);
  });

  it('answers a call whose result never came with a placeholder, and leaves out an orphan result', () => {
    const { atoms, repairs } = buildAtoms(
      historyEntries([
        { role: 'user', content: 'go' },
        { role: 'tool', tool_call_id: 'ghost', content: 'orphan' },
        { role: 'assistant', content: null, tool_calls: [call('a'), call('b', 'grep')] },
        { role: 'tool', tool_call_id: 'a', content: 'A' },
        { role: 'assistant', content: 'moving on' },
      ]),
      'openai',
    );
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [2, 3], [4]]);
    const exchange = atoms[1]!;
    expect(exchange.messages).toHaveLength(3);
    expect(exchange.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'b' });
    expect(String(exchange.messages[2]!.content)).toContain('no result was recorded for this grep call');
    expect(repairs.map((r) => r.kind).sort()).toEqual(['missing_result', 'orphan_result']);
  });

  it('moves a message a hook inserted between a call and its results after them', () => {
    const { atoms } = buildAtoms(
      historyEntries([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('a')] },
        { role: 'user', content: 'hook says hi' },
        { role: 'tool', tool_call_id: 'a', content: 'A' },
      ]),
      'openai',
    );
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [1, 3], [2]]);
  });

  it('keeps the stored objects when nothing needs repair', () => {
    const msgs: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'ok' },
    ];
    const { atoms } = buildAtoms(historyEntries(msgs), 'openai');
    expect(atoms[0]!.messages[0]).toBe(msgs[0]);
    expect(atoms[1]!.messages[0]).toBe(msgs[1]);
  });
});

describe('atoms, Anthropic', () => {
  const use = (id: string, name = 'read_file') => ({
    type: 'tool_use' as const,
    id,
    name,
    input: { path: 'a.ts' },
  });
  const result = (id: string, content = 'ok') => ({ type: 'tool_result' as const, tool_use_id: id, content });

  it('groups tool_use with the next user message of results', () => {
    const { atoms } = buildAtoms(
      historyEntries([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'text', text: 'reading' }, use('a'), use('b')] },
        { role: 'user', content: [result('a'), result('b'), { type: 'text', text: 'and also…' }] },
      ]),
      'anthropic',
    );
    expect(atoms.map((a) => a.seqs)).toEqual([[0], [1, 2]]);
    expect(atoms[1]!.repaired).toBe(false);
    expect(atoms[1]!.hasUserContent).toBe(true);
  });

  it('merges results spread over two messages, puts results first, fills the missing one', () => {
    const { atoms } = buildAtoms(
      historyEntries([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [use('a'), use('b'), use('c')] },
        { role: 'user', content: [{ type: 'text', text: 'note' }, result('a')] },
        { role: 'user', content: [result('b'), result('zzz')] },
        { role: 'assistant', content: 'next' },
      ]),
      'anthropic',
    );
    const exchange = atoms[1]!;
    expect(exchange.seqs).toEqual([1, 2, 3]);
    const blocks = exchange.messages[1]!.content as Array<{ type: string; tool_use_id?: string }>;
    expect(blocks.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'tool_result', 'text']);
    expect(blocks.slice(0, 3).map((b) => b.tool_use_id)).toEqual(['a', 'b', 'c']);
    expect(exchange.results.map((r) => r.resultSeq)).toEqual([2, 3, null]);
  });

  it('drops empty text blocks and keeps non-result content of an orphan result message', () => {
    const { atoms } = buildAtoms(
      historyEntries([
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'hi' },
          ],
        },
        { role: 'user', content: [result('gone'), { type: 'text', text: 'still here' }] },
      ]),
      'anthropic',
    );
    expect(atoms.map((a) => a.messages[0]!.content)).toEqual([
      [{ type: 'text', text: 'hi' }],
      [{ type: 'text', text: 'still here' }],
    ]);
  });
});

describe('AtomIndex', () => {
  it('regroups only the open tail and matches a full build', () => {
    const msgs: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
      { role: 'assistant', content: 'done' },
      { role: 'user', content: 'again' },
    ];
    const all = historyEntries(msgs);
    const index = new AtomIndex('openai');
    for (let n = 1; n <= all.length; n++) {
      index.update(all.slice(0, n));
      const expected = buildAtoms(all.slice(0, n), 'openai').atoms;
      expect(index.all().map((a) => a.seqs)).toEqual(expected.map((a) => a.seqs));
      expect(index.all().map((a) => a.messages)).toEqual(expected.map((a) => a.messages));
    }
    // Only the exchange was ever open; everything before it stayed closed.
    expect(index.closedCount).toBe(index.length);
  });
});
