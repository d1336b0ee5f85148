import { describe, expect, it } from 'vitest';
import { transcriptPrefix } from './transcript-prefix.js';

describe('transcriptPrefix', () => {
  it('reads a stamp with a date and a speaker', () => {
    const text = '[1:56 pm on 8 May, 2023] Caroline: Hey Mel!';
    const p = transcriptPrefix(text);
    expect(p.stamp).toBe('[1:56 pm on 8 May, 2023]');
    expect(p.speaker).toBe('Caroline');
    expect(p.day?.first).toBe(Date.UTC(2023, 4, 8) / 86_400_000);
    expect(text.slice(p.bodyStart)).toBe('Hey Mel!');
  });

  it('reads a speaker alone, a stamp alone, and multi-word names', () => {
    expect(transcriptPrefix('Alice: hi').speaker).toBe('Alice');
    expect(transcriptPrefix('Mary Ann Lee: hello').speaker).toBe('Mary Ann Lee');
    const stamped = transcriptPrefix('[2024-03-01 10:02] the build is green');
    expect(stamped.speaker).toBeUndefined();
    expect(stamped.day).toBeDefined();
  });

  it('reads nothing from ordinary text', () => {
    for (const text of [
      'the plan: ship it',
      'see [the docs] first',
      '',
      'Error in step 3 of the plan: retry',
    ]) {
      const p = transcriptPrefix(text);
      expect(p.bodyStart, text).toBe(0);
      expect(p.speaker, text).toBeUndefined();
    }
  });
});
