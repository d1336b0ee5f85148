/**
 * With `recall: true`, the summary and the facts block tell the model the `recall` tool exists and
 * searches the whole history: one fixed sentence, the same at every compaction.
 */
import { describe, expect, it } from 'vitest';
import { RECALL_NOTE } from '../src/compaction/summary-message.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { messageText } from '../src/wire/content.js';

function turn(i: number): Message[] {
  const day = `${(i % 28) + 1} June, 2024`;
  return [
    {
      role: 'user',
      content: `[9:00 am on ${day}] Ana: On day ${i} I visited the museum in Porto with my sister Joan, ticket 70${i}.`,
    },
    {
      role: 'assistant',
      content: `[9:01 am on ${day}] Ben: I finished chapter ${i} of "The Hobbit" and ran ${i + 3} km.`,
    },
  ];
}

async function memoryBlocks(recall: boolean): Promise<string[][]> {
  const ctx = new ContextManager({ model: 'gpt-4o', recall });
  const seen: string[][] = [];
  for (let i = 0; i < 120; i++) {
    for (const m of turn(i)) await ctx.addMessage(m);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2_000 });
    seen.push(
      view
        .map(messageText)
        .filter((t) => t.startsWith('[contextkit: summary') || t.includes('contextkit:facts')),
    );
  }
  return seen;
}

describe('the recall note', () => {
  it('is in every memory block when recall is on, once, the same sentence at every compaction', async () => {
    const seen = await memoryBlocks(true);
    const blocks = seen.flat();
    expect(new Set(seen.map((s) => s.join('\n'))).size).toBeGreaterThan(2);
    expect(blocks.length).toBeGreaterThan(0);
    for (const text of blocks) expect(text.split(RECALL_NOTE)).toHaveLength(2);
  });

  it('is nowhere when recall is off', async () => {
    for (const text of (await memoryBlocks(false)).flat()) expect(text).not.toContain('recall');
  });
});
