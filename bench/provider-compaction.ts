/**
 * Part of `npm run bench -- cost` (issue 22): one agent session against the fake Responses API
 * (test/support/openai-compaction-session.ts), compacted three ways at the same budget:
 * contextkit's own summarizer, contextkit driving `/responses/compact` (`providerCompaction`),
 * and the server's compaction (`context_management`). OpenAI documents no default
 * `compact_threshold`; the server's is set at 80% of the budget, under contextkit's trigger (92%),
 * so that the server compacts first (at the trigger itself contextkit would always compact first).
 */
import {
  type CompactionMode,
  openaiCompactionSession,
  type SessionFigures,
} from '../test/support/openai-compaction-session.js';
import type { Report } from './report.js';

const BUDGET = 16_000;
const SERVER_SHARE = 0.8;

function percent(n: number, digits = 1): string {
  return `${(100 * n).toFixed(digits)}%`;
}

/** Adds the section to `report`. */
export async function providerCompactionSection(report: Report, turns: number): Promise<void> {
  const threshold = Math.floor(SERVER_SHARE * BUDGET);
  const modes: CompactionMode[] = ['contextkit', 'compact endpoint', 'server'];
  const runs: Array<[CompactionMode, SessionFigures]> = [];
  for (const mode of modes)
    runs.push([mode, await openaiCompactionSession({ turns, mode, budget: BUDGET, threshold })]);
  report.heading(`gpt-5, ${turns}-turn agent session against the fake Responses API: who compacts`);
  report.note(
    `Budget ${BUDGET.toLocaleString('en-US')} tokens (contextkit compacts past 92% of it); server compact_threshold ` +
      `${threshold.toLocaleString('en-US')} (80%: OpenAI documents no default). ` +
      'Billed input: uncached input at the input price, cached at the cache price, plus the ' +
      'compactions’ output at the output price (a compaction item renders as a tenth of what it compacted, in the fake).',
  );
  report.table(
    [
      'who compacts',
      'requests',
      'server compactions',
      '/responses/compact calls',
      'contextkit plans',
      'input tokens',
      'read from cache',
      'compaction output',
      'billed (USD)',
      'worst count error',
      'meter vs server input',
      'refused',
    ],
    runs.map(([mode, f]) => [
      mode === 'contextkit'
        ? 'contextkit (own summarizer)'
        : mode === 'compact endpoint'
          ? 'contextkit driving /responses/compact'
          : 'server (context_management)',
      String(f.requests),
      String(f.serverCompactions),
      String(f.compactCalls),
      String(f.plans),
      f.input.toLocaleString('en-US'),
      percent(f.cached / Math.max(1, f.input)),
      f.compactionOutput.toLocaleString('en-US'),
      `$${f.billedPrice.toFixed(2)}`,
      percent(f.worstCount, 2),
      percent((f.meterPrice - f.serverInputPrice) / Math.max(1e-9, f.serverInputPrice), 2),
      String(f.refused),
    ]),
  );
  const lost = runs.filter(([, f]) => !f.stored).map(([m]) => m);
  report.note(
    lost.length === 0
      ? 'Every reply was added and every item is still stored in all three runs.'
      : `Items lost: ${lost.join(', ')}.`,
  );
}
