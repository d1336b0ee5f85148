/**
 * A compaction receipt in words, for people reading a terminal: what was cleared, summarized,
 * dropped and truncated, by sequence number, the facts kept, and the tokens before and after.
 */

import type { CompactionReceipt } from '../events.js';
import { formatInt } from '../format-number.js';

/** Sorted sequence numbers as ranges: `#1–9, #12, #15–16`. */
export function seqRanges(seqs: readonly number[], max = 8): string {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    ranges.push(i === j ? `#${sorted[i]}` : `#${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  if (ranges.length <= max) return ranges.join(', ');
  return `${ranges.slice(0, max).join(', ')}, … (${ranges.length - max} more ranges)`;
}

function plural(n: number, word: string): string {
  return `${formatInt(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** One line: `15,102 → 9,544 tokens: cleared 6 tool results, summarized 24 messages, truncated 1 message`. */
export function receiptSummary(receipt: CompactionReceipt): string {
  const did: string[] = [];
  if (receipt.cleared.length > 0) did.push(`cleared ${plural(receipt.cleared.length, 'tool result')}`);
  if (receipt.summarized.length > 0) did.push(`summarized ${plural(receipt.summarized.length, 'message')}`);
  if (receipt.dropped.length > 0) did.push(`dropped ${plural(receipt.dropped.length, 'message')}`);
  if (receipt.truncated.length > 0) did.push(`truncated ${plural(receipt.truncated.length, 'message')}`);
  if (did.length === 0) did.push('nothing more could be removed');
  const floor = receipt.atFloor
    ? ' (at the floor: what must be kept, the system prompt, the task, pinned messages and the current turn, is above the target; the next compaction waits for real growth)'
    : '';
  const again = receipt.consecutive
    ? `; right after the last compaction, because the ${formatInt(receipt.consecutive.addedTokens)} tokens added since exceed the ${formatInt(receipt.consecutive.room)} it left under the budget`
    : '';
  return `${formatInt(receipt.tokensBefore)} → ${formatInt(receipt.tokensAfter)} tokens: ${did.join(', ')}${floor}${again}`;
}

/** The full report: the summary, then one line per kind of change with the seqs concerned. */
export function receiptLines(receipt: CompactionReceipt): string[] {
  const lines = [
    `compacted (${receipt.reason}): ${receiptSummary(receipt)}`,
    `  budget ${formatInt(receipt.budget)}, trigger ${formatInt(receipt.trigger)}, target ${formatInt(receipt.target)}; ` +
      `${formatInt(receipt.messagesBefore)} → ${formatInt(receipt.messagesAfter)} messages in the view`,
  ];
  if (receipt.cleared.length > 0) {
    const byTool = new Map<string, { seqs: number[]; tokens: number }>();
    for (const c of receipt.cleared) {
      const t = byTool.get(c.tool) ?? { seqs: [], tokens: 0 };
      t.seqs.push(c.seq);
      t.tokens += c.tokens;
      byTool.set(c.tool, t);
    }
    const parts = [...byTool].map(
      ([tool, t]) => `${tool} ${seqRanges(t.seqs, 4)} (${formatInt(t.tokens)} tokens)`,
    );
    lines.push(`  cleared ${plural(receipt.cleared.length, 'tool result')}: ${parts.join('; ')}`);
  }
  if (receipt.dropped.length > 0) {
    lines.push(`  dropped ${plural(receipt.dropped.length, 'message')}: ${seqRanges(receipt.dropped)}`);
    if (receipt.noSummary !== undefined) lines.push(`  no summary: ${receipt.noSummary}`);
  }
  if (receipt.summarized.length > 0) {
    const summary = receipt.summary
      ? ` (summary of #${receipt.summary.fromSeq}–${receipt.summary.toSeq} by ${receipt.summary.tools}, ${formatInt(receipt.summary.chars)} chars)`
      : '';
    lines.push(
      `  summarized ${plural(receipt.summarized.length, 'message')}: ${seqRanges(receipt.summarized)}${summary}`,
    );
  }
  const facts = receipt.facts;
  if (facts.kept > 0 || facts.added > 0 || facts.omitted > 0) {
    const omitted = facts.omitted > 0 ? `, ${formatInt(facts.omitted)} left out for room` : '';
    lines.push(
      `  facts kept in the view: ${formatInt(facts.kept)} (${formatInt(facts.added)} new${omitted})`,
    );
  }
  if (receipt.truncated.length > 0) {
    const parts = receipt.truncated.map((t) => `#${t.seq} (−${formatInt(t.removedChars)} chars)`);
    lines.push(`  truncated ${plural(receipt.truncated.length, 'message')}: ${parts.join(', ')}`);
  }
  if (receipt.repairs.length > 0) {
    const kinds = new Map<string, number[]>();
    for (const r of receipt.repairs) kinds.set(r.kind, [...(kinds.get(r.kind) ?? []), r.seq]);
    const parts = [...kinds].map(([kind, seqs]) => `${kind.replace(/_/g, ' ')} ${seqRanges(seqs, 4)}`);
    lines.push(`  repaired in the view: ${parts.join('; ')}`);
  }
  return lines;
}
