import { describe, expect, it } from 'vitest';
import { historyEntry } from '../../test/support/history-entries.js';
import { MAX_SEARCH_CHARS, searchText, turnText } from './turn-text.js';

describe('turnText', () => {
  it('searches a transcript turn without its prefix and shows it under the speaker', () => {
    const t = turnText(
      historyEntry(0, {
        role: 'user',
        content: '[1:14 pm on 25 May, 2023] Caroline: Researching adoption agencies',
      }),
    );
    expect(t.search).toBe('Researching adoption agencies');
    expect(t.speaker).toBe('Caroline');
    expect(t.stamp).toBe('[1:14 pm on 25 May, 2023]');
    expect(t.lines).toEqual([{ label: 'Caroline', text: 'Researching adoption agencies' }]);
  });

  it('searches tool names, call arguments and results in both formats, labelled by tool', () => {
    const names = new Map<string, string>();
    const call = turnText(
      historyEntry(0, {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_order', arguments: '{"id":"W123"}' } },
        ],
      }),
      names,
    );
    expect(call.search).toContain('get_order');
    expect(call.search).toContain('W123');
    const result = turnText(
      historyEntry(1, { role: 'tool', tool_call_id: 'c1', content: 'status: shipped' }),
      names,
    );
    expect(result.lines).toEqual([{ label: 'tool get_order', text: 'status: shipped' }]);
    const anthropic = turnText(
      historyEntry(2, {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: { city: 'Lisbon' } }],
      }),
      names,
    );
    expect(anthropic.search).toContain('Lisbon');
    const answer = turnText(
      historyEntry(3, {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }],
      }),
      names,
    );
    expect(answer.lines[0]).toEqual({ label: 'tool lookup', text: 'sunny' });
  });

  it('takes the speaker from an OpenAI name field', () => {
    expect(turnText(historyEntry(0, { role: 'user', name: 'bob', content: 'hi' })).speaker).toBe('bob');
  });
});

describe('searchText', () => {
  it('indexes at most MAX_SEARCH_CHARS and no NUL characters', () => {
    const big = searchText({ role: 'tool', tool_call_id: 'x', content: 'a\u0000b '.repeat(100_000) });
    expect(big.length).toBe(MAX_SEARCH_CHARS);
    expect(big.includes('\u0000')).toBe(false);
  });
});
