import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/types.js';
import { messageText, toolCallIds } from '../wire/content.js';
import { detectConversationFormat } from '../wire/detect.js';
import { validateRequest } from '../wire/validate-request.js';
import { DemoSession, demoMessages } from './demo-session.js';

function toolNames(messages: readonly Message[]): Set<string> {
  const names = new Set<string>();
  for (const m of messages) {
    if ('tool_calls' in m && Array.isArray(m.tool_calls))
      for (const c of m.tool_calls) names.add(c.function.name);
  }
  return names;
}

describe('the demo session', () => {
  const openai = demoMessages('openai', 400);

  it('is the same for the same seed, and another for another seed', () => {
    expect(demoMessages('openai', 400)).toEqual(openai);
    expect(demoMessages('openai', 50, 7)).not.toEqual(openai.slice(0, 50));
  });

  it('is a valid request in both formats at every turn boundary', () => {
    for (const format of ['openai', 'anthropic'] as const) {
      const session = new DemoSession(format);
      const messages: Message[] = [];
      for (let i = 0; i < 40; i++) {
        messages.push(...session.nextTurn());
        if (i % 8 === 7) expect(validateRequest(messages, format).problems).toEqual([]);
      }
      expect(detectConversationFormat(messages)).toBe(format);
    }
  });

  it('looks like a coding agent at work: the four tools, parallel calls, large results, facts', () => {
    expect([...toolNames(openai)].sort()).toEqual(['edit_file', 'grep', 'read_file', 'run_tests']);
    expect(openai.some((m) => toolCallIds(m).length >= 3)).toBe(true);
    const sizes = openai.filter((m) => m.role === 'tool').map((m) => messageText(m).length);
    expect(Math.max(...sizes)).toBeGreaterThan(40_000);
    expect(Math.min(...sizes)).toBeLessThan(200);
    const text = openai.map((m) => messageText(m)).join('\n');
    expect(text).toMatch(/src\/[a-z/]+\.ts/);
    expect(text).toMatch(/BILL-\d{4}/);
    expect(text).toMatch(/INV-2024-\d{5}/);
  });

  it('yields whole turns: each starts with a user message and ends with an answer', () => {
    const session = new DemoSession('openai');
    for (let i = 0; i < 30; i++) {
      const turn = session.nextTurn();
      const first = i === 0 ? turn[1] : turn[0];
      expect(first?.role).toBe('user');
      const last = turn.at(-1);
      expect(last?.role).toBe('assistant');
      expect(last && toolCallIds(last)).toEqual([]);
    }
  });

  it('gives a prefix of itself when asked for fewer messages', () => {
    expect(demoMessages('openai', 123)).toEqual(openai.slice(0, 123));
  });
});
