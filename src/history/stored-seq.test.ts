import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/types.js';
import { markStoredSeq, storedSeqOf } from './stored-seq.js';

describe('which stored message an object is', () => {
  it('is read back from the object, unseen by JSON, copies and equality', () => {
    const message: Message = { role: 'user', content: 'hi' };
    markStoredSeq(message, 7);
    Object.freeze(message);
    expect(storedSeqOf(message)).toBe(7);
    expect(JSON.stringify(message)).toBe('{"role":"user","content":"hi"}');
    expect(Object.keys(message)).toEqual(['role', 'content']);
    expect(message).toEqual({ role: 'user', content: 'hi' });
    // A copy is another object: not the stored message.
    expect(storedSeqOf({ ...message })).toBeUndefined();
    expect(storedSeqOf(structuredClone(message))).toBeUndefined();
    expect(storedSeqOf({ role: 'user', content: 'hi' })).toBeUndefined();
  });

  it('marks a message frozen before it was marked, and one marked again with another seq', () => {
    const frozen = Object.freeze({ role: 'user', content: 'a' }) as Message;
    markStoredSeq(frozen, 3);
    expect(storedSeqOf(frozen)).toBe(3);
    const moved: Message = { role: 'user', content: 'b' };
    markStoredSeq(moved, 1);
    Object.freeze(moved);
    markStoredSeq(moved, 1);
    expect(storedSeqOf(moved)).toBe(1);
    markStoredSeq(moved, 2);
    expect(storedSeqOf(moved)).toBe(2);
  });
});
