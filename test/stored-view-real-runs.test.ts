/**
 * Issue 32 item 1 on the real runs in ../shared/data: agents served by workers that keep no
 * conversation (a new manager each step, its messages appended unread, its view from the stored
 * view record) see byte for byte what workers that read the whole history each step see, on the
 * tau-bench airline runs in both formats and on the LoCoMo chats; a step that needs no compaction
 * and reuses no tool id the stored view showed reads only the rows its view holds.
 */
import { describe, expect, it } from 'vitest';
import type { Message, MessageFormat } from '../src/messages/types.js';
import { MemoryStore } from '../src/stores/memory.js';
import type { ConversationStore } from '../src/stores/types.js';
import { LOCOMO_DIR, loadChats } from './support/locomo.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from './support/tau-bench.js';
import { countingLoads, type WorkerOutcome, workerStep } from './support/workers.js';

const MODEL: Record<string, string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5' };
const CLOCK = () => new Date(Date.UTC(2026, 10, 29));

const tau = hasTauBench();
if (!tau) console.warn(`skipping the stored-view tau-bench test: ${TAU_BENCH_PATH} is absent`);
const chats = loadChats();
if (!chats) console.warn(`skipping the stored-view LoCoMo test: ${LOCOMO_DIR} is absent`);

/** One step of a worker that keeps no conversation: a new manager adds `messages`, then serves a view. */
function step(
  store: ConversationStore,
  format: MessageFormat,
  storedView: boolean,
  messages: readonly Message[],
  budget: number,
): Promise<WorkerOutcome> {
  const options = { model: MODEL[format]!, store, conversationId: 'run', storedView, now: CLOCK };
  return workerStep(
    options,
    (ctx) => (messages.length > 0 ? ctx.addMessages(messages) : Promise.resolve()),
    budget,
  );
}

/** Runs `messages` step by step (a step ends before each assistant message) on both kinds of worker. */
async function compare(
  messages: readonly Message[],
  format: MessageFormat,
  budget: number,
): Promise<{ steps: number; unread: number }> {
  const served = countingLoads(new MemoryStore());
  const whole = countingLoads(new MemoryStore());
  let from = 0;
  let steps = 0;
  let unread = 0;
  for (let i = 1; i <= messages.length; i++) {
    if (i < messages.length && messages[i]!.role !== 'assistant') continue;
    const part = messages.slice(from, i);
    const before = served.wholeReads;
    const outcome = await step(served, format, true, part, budget);
    if (served.wholeReads === before) unread++;
    expect(outcome).toEqual(await step(whole, format, false, part, budget));
    steps++;
    from = i;
  }
  return { steps, unread };
}

describe.skipIf(!tau)('workers that keep no conversation, on the tau-bench runs', () => {
  it.each(['openai', 'anthropic'] as const)(
    '%s: every step of every fifth run is the view of a worker that reads the whole history',
    async (format) => {
      let steps = 0;
      let unread = 0;
      const runs = loadTauBench().filter((_, i) => i % 5 === 0);
      for (const run of runs) {
        // A budget of half the run (its characters / 8): most runs compact a few times.
        const chars = JSON.stringify(run[format]).length;
        const figures = await compare(
          run[format] as Message[],
          format,
          Math.max(1_500, Math.floor(chars / 8)),
        );
        steps += figures.steps;
        unread += figures.unread;
      }
      console.log(
        `tau-bench ${format}: ${unread} of ${steps} steps served without reading the history whole`,
      );
      // The others compacted (a tool result often takes a run past half its size), reused a tool
      // id the record's prefix showed, or came before the conversation had a stored view.
      expect(unread).toBeGreaterThan(steps / 5);
    },
    300_000,
  );
});

describe.skipIf(!chats)('workers that keep no conversation, on the LoCoMo chats', () => {
  it('every 40 messages of every chat, at a quarter of the chat, the view of a worker that reads the whole history', async () => {
    let steps = 0;
    let unread = 0;
    for (const chat of chats ?? []) {
      const messages = chat.entries.map((e) => e.message);
      const budget = Math.max(2_000, Math.floor(JSON.stringify(messages).length / 16));
      const served = countingLoads(new MemoryStore());
      const whole = countingLoads(new MemoryStore());
      for (let at = 0; at < messages.length; at += 40) {
        const part = messages.slice(at, at + 40);
        const before = served.wholeReads;
        const outcome = await step(served, 'openai', true, part, budget);
        if (served.wholeReads === before) unread++;
        expect(outcome).toEqual(await step(whole, 'openai', false, part, budget));
        steps++;
      }
    }
    console.log(`LoCoMo: ${unread} of ${steps} steps served without reading the history whole`);
    // The others compacted: 40 messages a step take a quarter-sized view past its trigger often.
    expect(unread).toBeGreaterThan(steps / 5);
  }, 300_000);
});
