import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import { withCpuTime } from '../../test/support/cpu-time.js';
import type { HistoryEntry } from '../messages/types.js';
import { entrySegments } from './entry-segments.js';
import { extractFactsOffline } from './offline-facts.js';
import { summarizeOffline } from './offline-summarizer.js';

describe('offline tools speed', () => {
  it('summarize and extract facts of 10,000 agent messages in well under two seconds', () => {
    const entries: HistoryEntry[] = longSessionMessages(10_000, 'openai', 7).map((message, seq) => ({
      seq,
      message,
      metadata: { timestamp: '2024-01-01T00:00:00.000Z' },
    }));
    const chars = entrySegments(entries).reduce((sum, segment) => sum + segment.text.length, 0);
    const runs: Array<{ summarize: number; extract: number }> = [];
    for (let i = 0; i < 3; i += 1) {
      // CPU time, not wall time (see cpu-time.ts).
      const summary = withCpuTime(() => summarizeOffline(entries, { maxTokens: 4000 }));
      const facts = withCpuTime(() => extractFactsOffline(entries));
      expect(summary.result.length).toBeGreaterThan(0);
      expect(facts.result.length).toBeGreaterThan(0);
      runs.push({ summarize: summary.cpuMs, extract: facts.cpuMs });
    }
    const best = runs.reduce((a, b) => (a.summarize + a.extract <= b.summarize + b.extract ? a : b));
    const first = runs[0] as { summarize: number; extract: number };
    console.log(
      `offline tools on 10,000 messages (${(chars / 1e6).toFixed(2)} MB of text): ` +
        `first run summarize ${first.summarize.toFixed(0)} ms + extract ${first.extract.toFixed(0)} ms; ` +
        `best run summarize ${best.summarize.toFixed(0)} ms + extract ${best.extract.toFixed(0)} ms of CPU`,
    );
    expect(best.summarize + best.extract).toBeLessThan(2000);
  });
});
