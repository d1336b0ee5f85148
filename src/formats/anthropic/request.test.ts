import { describe, expect, it } from 'vitest';
import { toAnthropicRequest } from './request.js';

describe('toAnthropicRequest', () => {
  it('lifts system messages into the system prompt and keeps the turns in order', () => {
    const parts = toAnthropicRequest([
      { role: 'system', content: 'Be careful.' },
      { role: 'system', content: 'Facts: id=7' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
    ]);
    expect(parts).toEqual({
      system: 'Be careful.\n\nFacts: id=7',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
      ],
    });
  });

  it('keeps text blocks (and their cache_control) when a system message has blocks', () => {
    const parts = toAnthropicRequest([
      {
        role: 'system',
        content: [{ type: 'text', text: 'Long policy', cache_control: { type: 'ephemeral' } }],
      },
      { role: 'user', content: 'hi' },
    ]);
    expect(parts.system).toEqual([
      { type: 'text', text: 'Long policy', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('omits system when there is none', () => {
    expect(toAnthropicRequest([{ role: 'user', content: 'hi' }])).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
    });
  });
});
