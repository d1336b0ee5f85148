import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import type { Message } from '../messages/types.js';
import { isToolResultMessage } from '../wire/content.js';
import { renderReportHtml } from './html.js';
import { replayConversation } from './replay.js';
import { slidingWindow } from './replay-cost.js';

describe('replay cost', () => {
  it('bills every call and sets contextkit beside a sliding window at the same budget', async () => {
    const messages = longSessionMessages(600, 'anthropic', 11);
    // Anthropic caches only where a breakpoint is sent (issue 34): contextkit's marks, as the
    // alternatives are billed with a breakpoint on their last block.
    const report = await replayConversation(messages, {
      model: 'claude-sonnet-4-5',
      maxTokens: 20_000,
      cacheBreakpoints: 'auto',
    });
    const [ours, window, whole] = report.cost.alternatives;
    expect(report.cost.pricing).toContain('2026-11-24');
    const sent = report.turns.filter((t) => t.sentTokens !== null);
    expect(sent.every((t) => t.cost !== undefined)).toBe(true);
    expect(ours!.totals.requests).toBe(sent.length);
    expect(window!.totals.requests).toBe(report.turns.length);
    // Prefix-stable views read most of their input from the cache; a sliding window cannot.
    expect(ours!.totals.cachedTokens / ours!.totals.inputTokens).toBeGreaterThan(0.8);
    expect(ours!.totals.price!).toBeLessThan(window!.totals.price! * 0.5);
    // The whole history fits claude's window here: no compaction is billed too.
    expect(whole!.fits).toBe(true);
    expect(whole!.totals.inputTokens).toBeGreaterThan(ours!.totals.inputTokens);
    const sum = report.turns.reduce(
      (n, t) => n + (t.cost ? t.cost.cached + t.cost.written + t.cost.fresh : 0),
      0,
    );
    expect(sum).toBe(ours!.totals.inputTokens);
    // --json carries it as is.
    expect(JSON.parse(JSON.stringify(report)).cost).toEqual(report.cost);
  });

  it('draws the chart and the totals, escaped, under the same CSP', async () => {
    const messages: Message[] = [
      { role: 'system', content: 'You help. <script>alert(1)</script>' },
      { role: 'user', content: 'hello '.repeat(800) },
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'sure' },
    ];
    const report = await replayConversation(messages, { model: 'gpt-4o', source: '<b>x</b>.json' });
    const html = renderReportHtml(report);
    expect(html).toContain('Billed input per model call');
    expect(html).toContain('class="cost-table"');
    expect(html).not.toContain('<b>x</b>');
    expect(html).not.toMatch(/style="/);
    expect(html).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/,
    );
  });

  it('a sliding window fits its budget and starts its turns on a user message', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 200 }),
        fc.integer({ min: 200, max: 8000 }),
        fc.constantFrom('openai' as const, 'anthropic' as const),
        (n, budget, format) => {
          const stored = longSessionMessages(n, format, n);
          const tokens = (m: Message) => JSON.stringify(m).length;
          const view = slidingWindow(stored, budget, tokens);
          const rest = view.filter((m) => m.role !== 'system');
          const systemTokens = view.filter((m) => m.role === 'system').reduce((s, m) => s + tokens(m), 0);
          if (rest.length > 0) {
            expect(rest[0]!.role).toBe('user');
            // A turn, not the results of calls the window left out.
            expect(isToolResultMessage(rest[0]!)).toBe(false);
            expect(rest.reduce((s, m) => s + tokens(m), 0)).toBeLessThanOrEqual(budget - systemTokens);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('shows what each price kept, and marks a sliding window that drops the task, not ranked', async () => {
    // An agent run with one user turn (as a SWE-agent run has): a window at a small budget soon
    // holds only the system prompt and the newest calls, and looks cheap for forgetting the task.
    const messages: Message[] = [
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'user', content: 'Fix the failing test in src/date.ts (ticket BUG-4127).' },
    ];
    // 150 calls: the turn (everything after the one user message) is kept verbatim while it fits,
    // its oldest results cleared, and only past that do its oldest calls leave the view.
    for (let i = 0; i < 150; i++) {
      const id = `call_${i}`;
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id, type: 'function', function: { name: 'read', arguments: `{"path":"src/f${i}.ts"}` } },
        ],
      });
      messages.push({ role: 'tool', tool_call_id: id, content: `line ${i}: ${'const x = 1; '.repeat(60)}` });
    }
    messages.push({ role: 'assistant', content: 'Fixed src/date.ts; BUG-4127 closed.' });
    const report = await replayConversation(messages, { model: 'gpt-4o', maxTokens: 3000 });
    const [ours, window] = report.cost.alternatives;
    expect(window!.kept.requests).toBe(report.turns.length);
    expect(window!.kept.taskInView).toBeLessThan(window!.kept.accepted);
    expect(window!.unusable).toMatch(/drops the task/);
    // contextkit keeps the task in every view it sends, so its price is ranked.
    expect(ours!.kept.taskInView).toBe(ours!.kept.accepted);
    expect(ours!.kept.accepted).toBeGreaterThan(0);
    expect(ours!.unusable).toBeUndefined();
    // The last view left most calls out; the facts said in them are counted against what it shows.
    expect(ours!.kept.factsLeftOut).toBeGreaterThan(0);
    const html = renderReportHtml(report);
    expect(html).toContain('task in view');
    expect(html).toMatch(/not ranked: drops the task/);
  });
});
