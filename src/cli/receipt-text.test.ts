import { describe, expect, it } from 'vitest';
import type { CompactionReceipt } from '../events.js';
import { receiptLines, receiptSummary, seqRanges } from './receipt-text.js';

const receipt: CompactionReceipt = {
  reason: 'threshold',
  budget: 16_000,
  trigger: 14_720,
  target: 9_600,
  tokensBefore: 15_102,
  tokensAfter: 9_544,
  messagesBefore: 80,
  messagesAfter: 56,
  dropped: [1, 2, 3, 4, 9],
  summarized: [20, 21, 22],
  summary: { fromSeq: 20, toSeq: 22, tools: 'offline', chars: 1_840 },
  facts: { kept: 12, added: 3, omitted: 1, values: ['src/date.ts', 'INV-2024-00042'] },
  cleared: [
    { seq: 12, callSeq: 11, tool: 'read_file', tokens: 2_000 },
    { seq: 14, callSeq: 13, tool: 'read_file', tokens: 1_500 },
    { seq: 16, callSeq: 15, tool: 'grep', tokens: 300 },
  ],
  truncated: [{ seq: 40, removedChars: 12_345 }],
  repairs: [{ kind: 'missing_result', seq: 70, detail: 'call_9 never answered' }],
  atFloor: false,
  counter: 'openai:o200k_base',
  exact: true,
  durationMs: 3.2,
};

describe('seqRanges', () => {
  it('joins consecutive seqs into ranges', () => {
    expect(seqRanges([5, 1, 2, 3, 9, 10, 12])).toBe('#1–3, #5, #9–10, #12');
    expect(seqRanges([])).toBe('');
  });

  it('keeps a long list short', () => {
    expect(seqRanges([1, 3, 5, 7, 9], 2)).toBe('#1, #3, … (3 more ranges)');
  });
});

describe('receipt text', () => {
  it('sums a compaction up in one line', () => {
    expect(receiptSummary(receipt)).toBe(
      '15,102 → 9,544 tokens: cleared 3 tool results, summarized 3 messages, dropped 5 messages, truncated 1 message',
    );
    expect(
      receiptSummary({ ...receipt, cleared: [], summarized: [], dropped: [], truncated: [], atFloor: true }),
    ).toMatch(/nothing more could be removed \(at the floor/);
  });

  it('lists what was cleared per tool, dropped, summarized and truncated, by seq, and the facts kept', () => {
    expect(receiptLines(receipt)).toEqual([
      'compacted (threshold): 15,102 → 9,544 tokens: cleared 3 tool results, summarized 3 messages, dropped 5 messages, truncated 1 message',
      '  budget 16,000, trigger 14,720, target 9,600; 80 → 56 messages in the view',
      '  cleared 3 tool results: read_file #12, #14 (3,500 tokens); grep #16 (300 tokens)',
      '  dropped 5 messages: #1–4, #9',
      '  summarized 3 messages: #20–22 (summary of #20–22 by offline, 1,840 chars)',
      '  facts kept in the view: 12 (3 new, 1 left out for room)',
      '  truncated 1 message: #40 (−12,345 chars)',
      '  repaired in the view: missing result #70',
    ]);
  });
});
