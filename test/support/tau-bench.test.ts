import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/messages/types.js';
import { referenceProblems } from './reference-validator.js';
import { missingData, skipFor } from './requirements.js';
import { actionFacts, loadTauBench, TAU_BENCH_PATH, toAnthropic } from './tau-bench.js';

/** Call ids of the messages in order, in either format. */
function callIds(messages: readonly Message[]): string[] {
  return messages.flatMap((m) => {
    if (m.role !== 'assistant') return [];
    if ('tool_calls' in m && m.tool_calls) return m.tool_calls.map((c) => c.id);
    return Array.isArray(m.content) ? m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
  });
}

describe('tau-bench airline runs', skipFor(missingData(TAU_BENCH_PATH)), () => {
  it('loads all 200 runs once', () => {
    const runs = loadTauBench();
    expect(runs).toHaveLength(200);
    expect(loadTauBench()).toBe(runs);
    expect(new Set(runs.map((r) => r.taskId)).size).toBe(50);
    for (const run of runs) {
      expect(run.openai.length).toBeGreaterThanOrEqual(6);
      expect(run.openai.length).toBeLessThanOrEqual(62);
    }
  });

  it('has 49 runs that reuse a tool call id, in both formats', () => {
    const runs = loadTauBench();
    const reusing = (ids: string[]) => new Set(ids).size < ids.length;
    expect(runs.filter((r) => reusing(callIds(r.openai))).length).toBe(49);
    expect(runs.filter((r) => reusing(callIds(r.anthropic))).length).toBe(49);
  });

  it('gives conversations the reference validator accepts in both formats', () => {
    for (const run of loadTauBench()) {
      expect(referenceProblems(run.openai, 'openai')).toEqual([]);
      expect(referenceProblems(run.anthropic, 'anthropic')).toEqual([]);
    }
  });

  it('converts every call and result and nothing else', () => {
    for (const run of loadTauBench()) {
      expect(callIds(run.anthropic)).toEqual(callIds(run.openai));
      const toolMessages = run.openai.filter((m) => m.role === 'tool');
      const results = run.anthropic.flatMap((m) =>
        Array.isArray(m.content) ? m.content.flatMap((b) => (b.type === 'tool_result' ? [b] : [])) : [],
      );
      expect(results.map((b) => b.tool_use_id)).toEqual(toolMessages.map((m) => m.tool_call_id));
      expect(results.map((b) => b.content ?? '')).toEqual(toolMessages.map((m) => m.content));
      const userTexts = (ms: readonly Message[]) =>
        ms.filter((m) => m.role === 'user' && typeof m.content === 'string').map((m) => m.content);
      expect(userTexts(run.anthropic)).toEqual(userTexts(run.openai));
      expect(run.anthropic[0]).toEqual(run.openai[0]);
    }
  });

  it('lists the ground-truth argument values as facts', () => {
    const runs = loadTauBench();
    const first = runs[0];
    expect(first?.facts).toEqual(
      expect.arrayContaining([
        'mia_li_3668',
        'JFK',
        'SEA',
        'HAT136',
        'HAT039',
        '2024-05-20',
        'certificate_7504069',
        '250',
      ]),
    );
    const all = new Set(runs.flatMap((r) => r.facts));
    for (const trivial of ['economy', 'one_way', 'no', 'Li', '0', '5', 'true'])
      expect(all.has(trivial)).toBe(false);
    for (const run of runs) expect(new Set(run.facts).size).toBe(run.facts.length);
    // Some tasks need no action (the agent must refuse), so not every run has facts.
    const withActions = runs.filter((r) => r.facts.length > 0).length;
    expect(withActions).toBeGreaterThan(150);
    expect(withActions).toBeLessThan(runs.length);
  });

  it('marks which facts the trajectory itself contains', () => {
    let total = 0;
    let present = 0;
    for (const run of loadTauBench()) {
      const text = JSON.stringify(run.openai);
      for (const fact of run.presentFacts) expect(text).toContain(fact);
      for (const fact of run.facts.filter((f) => !run.presentFacts.includes(f)))
        expect(text).not.toContain(fact);
      total += run.facts.length;
      present += run.presentFacts.length;
    }
    expect(present / total).toBeGreaterThan(0.7);
  });
});

describe('toAnthropic', () => {
  it('turns calls into tool_use after the text and each run of tool messages into one user message', () => {
    const converted = toAnthropic([
      { role: 'system', content: 'policy' },
      { role: 'user', content: 'change my flight' },
      {
        role: 'assistant',
        content: 'Looking it up.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_user_details', arguments: '{"user_id":"u_1"}' },
          },
          { id: 'call_2', type: 'function', function: { name: 'think', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'get_user_details', content: '{"name":"Mia"}' },
      { role: 'tool', tool_call_id: 'call_2', name: 'think', content: '' },
      { role: 'assistant', content: 'Done.' },
    ]);
    expect(converted).toEqual([
      { role: 'system', content: 'policy' },
      { role: 'user', content: 'change my flight' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking it up.' },
          { type: 'tool_use', id: 'call_1', name: 'get_user_details', input: { user_id: 'u_1' } },
          { type: 'tool_use', id: 'call_2', name: 'think', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '{"name":"Mia"}' },
          { type: 'tool_result', tool_use_id: 'call_2' },
        ],
      },
      { role: 'assistant', content: 'Done.' },
    ]);
  });
});

describe('actionFacts', () => {
  it('flattens nested values, dedupes, and leaves trivial ones out', () => {
    expect(
      actionFacts([
        {
          user_id: 'omar_rossi_1241',
          cabin: 'business',
          flights: [{ flight_number: 'HAT036', date: '2024-05-21' }],
          passengers: [{ first_name: 'Omar', last_name: 'Li' }],
          payment_methods: [{ payment_id: 'gift_card_8190333', amount: 1786 }],
          total_baggages: 2,
          insurance: 'no',
          refund: true,
          summary: 'User wants a refund.',
        },
        { reservation_id: 'FQ8APE', user_id: 'omar_rossi_1241' },
      ]),
    ).toEqual(['omar_rossi_1241', 'HAT036', '2024-05-21', 'Omar', 'gift_card_8190333', '1786', 'FQ8APE']);
  });
});
