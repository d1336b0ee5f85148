import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { wireFormat } from '../formats/registry.js';
import type { HistoryEntry, Message } from '../messages/types.js';
import { withSum } from '../record-sum.js';
import { buildAtoms } from '../wire/atoms.js';
import { clearToolResults } from './clear-tool-results.js';
import type { PlanContext, Protection } from './draft.js';
import { initialDraft } from './draft.js';
import { dropOldest } from './drop-oldest.js';
import { NO_EDITS, renderAtom } from './edit-atom.js';
import { type CompactionPlan, decodePlan, dropsAny, encodePlan, type PlanEdits, startDraft } from './plan.js';
import { capProtectedOversized, fitText, truncateOversized } from './truncate-oversized.js';

const countText = (t: string) => Math.ceil(t.length / 4);

function context(
  messages: Message[],
  target: number,
  protect: (i: number) => Protection = () => 'none',
): PlanContext {
  const entries: HistoryEntry[] = messages.map((message, seq) => ({
    seq,
    message,
    metadata: { timestamp: 't' },
  }));
  const { atoms } = buildAtoms(entries, 'openai');
  const wire = wireFormat('openai');
  return {
    atoms,
    wire,
    protection: atoms.map((_, i) => protect(i)),
    measure: (atom, edits) =>
      renderAtom(atom, edits, wire).reduce((n, m) => n + countText(JSON.stringify(m)), 0),
    countText,
    fixedTokens: 0,
    budget: target * 2,
    target,
    keepToolResults: 1,
  };
}

const round = (id: string, result: string): Message[] => [
  { role: 'user', content: `ask ${id}` },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'fetch', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: id, content: result },
];

describe('clearToolResults', () => {
  it('clears the oldest results first, keeps the newest, and stops at the target', async () => {
    const messages = [
      ...round('a', 'x'.repeat(4000)),
      ...round('b', 'y'.repeat(4000)),
      ...round('c', 'z'.repeat(4000)),
    ];
    const ctx = context(messages, 1500);
    const draft = await clearToolResults(ctx, initialDraft(ctx, NO_EDITS));
    expect([...draft.cleared.keys()]).toEqual(['1:0', '4:0']);
    expect(draft.total).toBeLessThanOrEqual(1500);
    // With more room, only the oldest goes.
    const roomy = context(messages, 2400);
    expect([...(await clearToolResults(roomy, initialDraft(roomy, NO_EDITS))).cleared.keys()]).toEqual([
      '1:0',
    ]);
    expect(draft.dropped.size).toBe(0);
  });

  it('pausing after each atom clears what it clears in place', async () => {
    const messages = Array.from({ length: 12 }, (_, i) => round(`p${i}`, 'w'.repeat(600 + 300 * i))).flat();
    for (const target of [800, 2_000, 4_000]) {
      const ctx = context(messages, target);
      let pauses = 0;
      const paused = await clearToolResults(ctx, initialDraft(ctx, NO_EDITS), () => {
        pauses++;
        return Promise.resolve();
      });
      const inPlace = await clearToolResults(ctx, initialDraft(ctx, NO_EDITS));
      expect(pauses).toBeGreaterThan(0);
      expect([...paused.cleared]).toEqual([...inPlace.cleared]);
      expect(paused.atomTokens).toEqual(inPlace.atomTokens);
      expect(paused.total).toBe(inPlace.total);
    }
  });

  it('leaves protected atoms alone', async () => {
    const messages = [
      ...round('a', 'x'.repeat(4000)),
      ...round('b', 'y'.repeat(4000)),
      ...round('c', 'z'.repeat(4000)),
    ];
    const ctx = context(messages, 1000, (i) => (i === 1 ? 'keep' : 'none'));
    const draft = await clearToolResults(ctx, initialDraft(ctx, NO_EDITS));
    expect(draft.cleared.has('1:0')).toBe(false);
  });

  it('does not clear results of atoms that dropping will remove anyway', async () => {
    const messages = Array.from({ length: 40 }, (_, i) => round(`c${i}`, 'r'.repeat(2000))).flat();
    const ctx = context(messages, 600);
    const draft = await clearToolResults(ctx, initialDraft(ctx, NO_EDITS));
    // Only the last few rounds fit even cleared: the results before them are not worth clearing.
    expect(draft.cleared.size).toBeLessThan(10);
    const after = dropOldest(ctx, draft);
    expect(after.total).toBeLessThanOrEqual(600);
    for (const key of after.cleared.keys()) expect(after.dropped.has(Number(key.split(':')[0]))).toBe(false);
  });
});

describe('dropOldest', () => {
  it('drops whole atoms, oldest first, skipping protected ones', () => {
    const messages = [
      { role: 'system', content: 'sys' } as Message,
      ...round('a', 'x'.repeat(400)),
      ...round('b', 'y'.repeat(400)),
    ];
    const ctx = context(messages, 160, (i) => (i === 0 ? 'verbatim' : 'none'));
    const draft = dropOldest(ctx, initialDraft(ctx, NO_EDITS));
    // Atoms: system, user a, exchange a, user b, exchange b.
    expect([...draft.dropped].sort((x, y) => x - y)).toEqual([1, 2, 4]);
    expect(draft.total).toBeLessThanOrEqual(160);
  });
});

describe('truncateOversized', () => {
  it('cuts the middle of the largest text, keeping head and tail', () => {
    const big = `HEAD ${'m'.repeat(8000)} TAIL`;
    const messages = round('a', big);
    const ctx = context(messages, 600, (i) => (i === 0 ? 'verbatim' : 'none'));
    const draft = truncateOversized(ctx, initialDraft(ctx, NO_EDITS));
    expect(draft.total).toBeLessThanOrEqual(600);
    const rendered = renderAtom(
      ctx.atoms[1]!,
      { cleared: draft.cleared, truncated: draft.truncated },
      ctx.wire,
    );
    const text = String(rendered[1]!.content);
    expect(text.startsWith('HEAD')).toBe(true);
    expect(text.endsWith('TAIL')).toBe(true);
  });

  it('fitText finds a head and tail that fit, or says the text already fits', () => {
    expect(fitText('short', 100, countText)).toBeUndefined();
    const fit = fitText('a'.repeat(10_000), 500, countText)!;
    expect(fit.head + fit.tail).toBeLessThan(2000);
    expect(fit.head).toBeGreaterThan(0);
  });
});

/** The truncating pipeline, from a previous plan's decisions. */
async function planView(ctx: PlanContext, previous: PlanEdits) {
  let draft = await clearToolResults(ctx, startDraft(ctx, previous));
  for (const step of [capProtectedOversized, dropOldest, truncateOversized]) draft = step(ctx, draft);
  return draft;
}

describe('a new plan over a previous one', () => {
  it('only ever adds to the previous plan', async () => {
    const messages = Array.from({ length: 10 }, (_, i) => round(`c${i}`, 'r'.repeat(800))).flat();
    const ctx = context(messages, 800);
    const first = await planView(ctx, { ...NO_EDITS, dropped: new Set() });
    const second = await planView(
      { ...ctx, target: 400 },
      { cleared: first.cleared, truncated: first.truncated, dropped: first.dropped },
    );
    for (const id of first.dropped) expect(second.dropped.has(id)).toBe(true);
    for (const key of first.cleared.keys())
      expect(second.cleared.has(key) || second.dropped.has(Number(key.split(':')[0]))).toBe(true);
    expect(second.total).toBeLessThanOrEqual(400);
  });
});

describe('a plan as kept in a store', () => {
  it('reads back as it was, its long id lists kept as bitmaps a fraction of their JSON size', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat(200_000), { maxLength: 3_000 }),
        fc.uniqueArray(fc.nat(200_000), { maxLength: 3_000 }),
        fc.boolean(),
        (dropped, summarized, sorted) => {
          const order = (ids: number[]) => (sorted ? ids.sort((a, b) => a - b) : ids);
          const plan: CompactionPlan = {
            v: 1,
            dropped: order(dropped),
            cleared: [['3:0', 120]],
            truncated: [],
            historyLength: 200_001,
            budget: 1_000,
            tokens: 900,
            counterId: 'o200k',
            summarized: order(summarized),
          };
          const stored = JSON.parse(JSON.stringify(encodePlan(plan)));
          expect(decodePlan(stored)).toEqual(plan);
        },
      ),
    );
    const ids = Array.from({ length: 50_000 }, (_, i) => i * 2);
    const plan = {
      v: 1,
      dropped: ids,
      summarized: ids,
      cleared: [],
      truncated: [],
      historyLength: 100_000,
      budget: 1,
      tokens: 1,
      counterId: 'x',
    } as CompactionPlan;
    expect(JSON.stringify(encodePlan(plan)).length).toBeLessThan(JSON.stringify(plan).length / 10);
    // Refused for their ids (their sums holding), and for a sum that is missing or does not hold.
    expect(decodePlan(withSum({ ...encodePlan(plan), dropped: { bits: 7 } }))).toBeNull();
    expect(decodePlan(withSum({ ...encodePlan(plan), summarized: [1, 'x'] }))).toBeNull();
    const { sum: _, ...unsummed } = encodePlan(plan);
    expect(decodePlan(unsummed)).toBeNull();
    expect(decodePlan({ ...encodePlan(plan), budget: 2 })).toBeNull();
    expect(decodePlan({ ...encodePlan(plan), budget: 2 }, { sumChecked: true })).not.toBeNull();
    // Decoded when first read, then the same list; JSON, spreads and clones see the ids; a list set replaces them.
    const decoded = decodePlan(JSON.parse(JSON.stringify(encodePlan(plan))))!;
    expect(decoded.dropped).toBe(decoded.dropped);
    expect(decoded.dropped).toEqual(ids);
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(plan);
    expect(structuredClone(decoded)).toEqual(plan);
    expect({ ...decoded }.summarized).toEqual(ids);
    // The fields as kept, in order; the sum is the record's, not the plan's.
    expect(Object.keys(encodePlan(plan)).at(-1)).toBe('sum');
    expect(Object.keys(decoded)).toEqual(Object.keys(encodePlan(plan)).slice(0, -1));
    expect(encodePlan(decoded).sum).toBe(encodePlan(plan).sum);
    decoded.summarized = [4];
    expect(decoded.summarized).toEqual([4]);
  });

  it('tells whether it drops any atom without decoding its ids (a view asks on every request)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(20_000), { maxLength: 400 }), fc.boolean(), (dropped, reset) => {
        const plan: CompactionPlan = {
          v: 1,
          dropped: dropped.sort((a, b) => a - b),
          cleared: [],
          truncated: [],
          historyLength: 20_001,
          budget: 1_000,
          tokens: 900,
          counterId: 'o200k',
        };
        expect(dropsAny(plan)).toBe(dropped.length > 0);
        const decoded = decodePlan(JSON.parse(JSON.stringify(encodePlan(plan))))!;
        const from = vi.spyOn(Buffer, 'from');
        try {
          expect(dropsAny(decoded)).toBe(dropped.length > 0);
          // Its bitmap (over 64 ids) is not decoded to tell.
          expect(from).not.toHaveBeenCalled();
        } finally {
          from.mockRestore();
        }
        // Once read, or set, the ids tell.
        if (reset) decoded.dropped = [];
        else expect(decoded.dropped).toEqual(plan.dropped);
        expect(dropsAny(decoded)).toBe(!reset && dropped.length > 0);
      }),
    );
  });
});
