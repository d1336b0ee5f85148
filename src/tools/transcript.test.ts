import { describe, expect, it } from 'vitest';
import { historyEntries } from '../../test/support/history-entries.js';
import type { Message } from '../messages/types.js';
import { cutMiddle, renderTranscript } from './transcript.js';

describe('renderTranscript', () => {
  it('tags each part with its message number and speaker, calls as name and arguments', () => {
    const transcript = renderTranscript(
      historyEntries([
        { role: 'system', content: 'Secret system prompt.' },
        { role: 'user', content: 'Read src/a.ts' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'src/a.ts' } }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ENOENT', is_error: true }],
        },
      ]),
    );
    expect(transcript).toBe(
      [
        '[#1 user] Read src/a.ts',
        '[#2 call read_file] {"path":"src/a.ts"}',
        '[#3 tool read_file (error)] ENOENT',
      ].join('\n'),
    );
  });

  it('cuts long tool results in the middle and keeps the whole under maxChars', () => {
    const big = `HEAD ${'x'.repeat(50_000)} TAIL`;
    const list = historyEntries([
      { role: 'user', content: 'Run it.' },
      { role: 'tool', tool_call_id: 'a', content: big },
    ]);
    const transcript = renderTranscript(list, { maxResultChars: 1000 });
    expect(transcript).toContain('HEAD');
    expect(transcript).toContain('TAIL');
    expect(transcript).toMatch(/\[… \d+ characters omitted …\]/);
    expect(transcript.length).toBeLessThan(1200);
    const many = historyEntries(
      Array.from(
        { length: 400 },
        (_, i): Message => ({ role: 'user', content: `message ${i} ${'y'.repeat(300)}` }),
      ),
    );
    const small = renderTranscript(many, { maxChars: 20_000 });
    expect(small.length).toBeLessThanOrEqual(20_000);
    expect(small).toContain('[#0 user]');
    expect(small).toContain('[#399 user]');
    expect(small).toMatch(/message parts omitted/);
  });

  it('cutMiddle keeps short text as it is', () => {
    expect(cutMiddle('short', 10)).toBe('short');
    expect(cutMiddle('0123456789abcdef', 10)).toBe('0123456\n[… 6 characters omitted …]\ndef');
  });
});
