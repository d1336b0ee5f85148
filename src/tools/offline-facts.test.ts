import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { factSetArb, longSessionMessages } from '../../test/support/arbitraries.js';
import { historyEntries } from '../../test/support/history-entries.js';
import { hasTauBench, loadTauBench, TAU_BENCH_PATH } from '../../test/support/tau-bench.js';
import type { Message } from '../messages/types.js';
import { extractFactsOffline, MAX_NEW_FACTS_PER_ENTRY, OfflineFactExtractor } from './offline-facts.js';
import type { ExtractedFact, FactCategory } from './types.js';

function user(content: string): Message {
  return { role: 'user', content };
}

function find(
  facts: readonly ExtractedFact[],
  category: FactCategory,
  value: string,
): ExtractedFact | undefined {
  return facts.find((f) => f.category === category && f.value === value);
}

describe('extractFactsOffline: categories on hand-written text', () => {
  const cases: Array<[FactCategory, string, string]> = [
    ['name', 'My name is Sofia Kim and I need help.', 'Sofia Kim'],
    ['name', 'Dr. Ana Lima approved the change.', 'Dr. Ana Lima'],
    ['name', "Hi, I'm Mia Li.", 'Mia Li'],
    ['date', 'The flight is on 2024-05-20.', '2024-05-20'],
    ['date', 'Move it to May 20, please.', 'May 20'],
    ['date', 'We met on 20 May 2024.', '20 May 2024'],
    ['date', 'Due 05/21/2024 at the latest.', '05/21/2024'],
    ['date', 'Deployed at 2024-05-20T10:15:00Z yesterday.', '2024-05-20T10:15:00Z'],
    ['time', 'The call is at 3:30 pm.', '3:30 pm'],
    ['time', 'Started 15:00:05 UTC and ran long.', '15:00:05 UTC'],
    ['time', 'Call me at 10am.', '10am'],
    ['path', 'Fix the failing test in src/date.ts now.', 'src/date.ts'],
    ['path', 'Read /etc/nginx/nginx.conf first.', '/etc/nginx/nginx.conf'],
    ['path', 'Open C:\\Users\\ana\\notes.txt in the editor.', 'C:\\Users\\ana\\notes.txt'],
    ['path', 'Then update package.json.', 'package.json'],
    ['path', 'See ./scripts/build for details.', './scripts/build'],
    ['url', 'Docs are at https://example.com/docs?id=3.', 'https://example.com/docs?id=3'],
    ['email', 'Write to ana.12@example.com today.', 'ana.12@example.com'],
    ['phone', 'Call +1 415 555 0132 after six.', '+1 415 555 0132'],
    ['phone', 'Or (555) 123-4567 at the office.', '(555) 123-4567'],
    [
      'address',
      'Ship it to 825 Laurel Lane, Suite 595, Houston, TX 77243.',
      '825 Laurel Lane, Suite 595, Houston, TX 77243',
    ],
    ['amount', 'The refund is $1,234.50 in total.', '$1,234.50'],
    ['amount', 'They charged 300 USD twice.', '300 USD'],
    ['amount', 'A coffee was €12.', '€12'],
    ['number', 'There are 42 failing tests.', '42'],
    ['number', 'Bump the version to 1.5 now.', '1.5'],
    ['identifier', 'My user id is usr_8f3a.', 'usr_8f3a'],
    ['identifier', 'Flight HAT136 was delayed.', 'HAT136'],
    ['identifier', 'Reservation ZFA04Y is confirmed.', 'ZFA04Y'],
    ['identifier', 'See ticket T-1042.', 'T-1042'],
    ['identifier', 'Account mia_li_3668 is locked.', 'mia_li_3668'],
    [
      'identifier',
      'Request 123e4567-e89b-12d3-a456-426614174000 failed.',
      '123e4567-e89b-12d3-a456-426614174000',
    ],
    ['identifier', 'The reservation code is SDZQKO.', 'SDZQKO'],
    ['other', 'status: ok, order_state: shipped_late', 'shipped_late'],
  ];
  it.each(cases)('%s in %j', (category, text, value) => {
    const facts = extractFactsOffline(historyEntries([user(text)]));
    expect(facts.map((f) => `${f.category}=${f.value}`)).toContain(`${category}=${value}`);
  });

  it('leaves out tiny numbers, plain words and numbers with units', () => {
    const facts = extractFactsOffline(
      historyEntries([user('It took 3 tries, 10ms each, for the 2 of us and/or the team.')]),
    );
    expect(facts.map((f) => f.value)).toEqual([]);
  });

  it('names a fact after the words before it', () => {
    const facts = extractFactsOffline(
      historyEntries([user('My user ID is sofia_kim_7287 and my email is s.kim@example.com')]),
    );
    expect(find(facts, 'identifier', 'sofia_kim_7287')?.key).toBe('user_id');
    expect(find(facts, 'email', 's.kim@example.com')?.key).toBe('email');
  });

  it('numbers keys that are only a category: date, date_2, …', () => {
    const facts = extractFactsOffline(
      historyEntries([user('From 2024-05-20 to 2024-05-27, back 2024-06-01.')]),
    );
    expect(facts.map((f) => f.key)).toEqual(['date', 'date_2', 'date_3']);
  });

  it('gives each fact its source seq, the first occurrence, and some surrounding text', () => {
    const facts = extractFactsOffline(
      historyEntries([user('Nothing here.'), user('Look at src/a.ts please.'), user('Again src/a.ts.')], 40),
    );
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({ value: 'src/a.ts', seq: 41, category: 'path' });
    expect(facts[0]?.span).toContain('Look at src/a.ts please');
  });

  it('skips system messages: they stay in every view', () => {
    const facts = extractFactsOffline(
      historyEntries([{ role: 'system', content: 'The time is 2024-05-15 15:00:00 EST.' }]),
    );
    expect(facts).toEqual([]);
  });

  it('does not find a date or number inside a path, or a number inside an id', () => {
    const facts = extractFactsOffline(historyEntries([user('Logs in logs/2024-05-20.log mention HAT136.')]));
    expect(facts.map((f) => `${f.category}=${f.value}`)).toEqual([
      'path=logs/2024-05-20.log',
      'identifier=HAT136',
    ]);
  });
});

describe('extractFactsOffline: JSON in tool calls and results', () => {
  const call: Message = {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'call_1',
        type: 'function',
        function: {
          name: 'get_reservation_details',
          arguments: '{"reservation_id":"ZFA04Y","user_id":"mia_li_3668"}',
        },
      },
    ],
  };
  const result: Message = {
    role: 'tool',
    tool_call_id: 'call_1',
    content: JSON.stringify({
      reservation_id: 'ZFA04Y',
      origin: 'JFK',
      flights: [{ flight_number: 'HAT136', date: '2024-05-20', price: 523 }],
      passengers: [{ first_name: 'Mia', last_name: 'Li', dob: '1990-04-05' }],
      payment_methods: { certificate_7504069: { source: 'certificate', amount: 250 } },
      insurance: false,
      bags: 2,
      notes:
        'Passenger asked to move to seat 14C on 2024-05-21, see https://example.com/r/ZFA04Y for the change.',
    }),
  };
  const facts = extractFactsOffline(historyEntries([call, result]));

  it('names each value after its JSON key and finds its category', () => {
    expect(find(facts, 'identifier', 'ZFA04Y')).toMatchObject({ key: 'reservation_id', seq: 0 });
    expect(find(facts, 'identifier', 'mia_li_3668')).toMatchObject({ key: 'user_id', seq: 0 });
    expect(find(facts, 'identifier', 'HAT136')).toMatchObject({ key: 'flight_number', seq: 1 });
    expect(find(facts, 'date', '2024-05-20')).toMatchObject({ key: 'date', seq: 1 });
    expect(find(facts, 'amount', '523')).toMatchObject({ key: 'price' });
    expect(find(facts, 'name', 'Mia')).toMatchObject({ key: 'first_name' });
    expect(find(facts, 'name', 'Li')).toMatchObject({ key: 'last_name' });
    expect(find(facts, 'identifier', 'certificate_7504069')).toMatchObject({ key: 'payment_methods' });
    expect(find(facts, 'amount', '250')).toMatchObject({ key: 'amount' });
    expect(find(facts, 'identifier', 'JFK')).toMatchObject({ key: 'origin' });
  });

  it('scans long strings as text and skips booleans and one-digit numbers', () => {
    expect(find(facts, 'date', '2024-05-21')).toBeDefined();
    expect(find(facts, 'url', 'https://example.com/r/ZFA04Y')).toBeDefined();
    expect(facts.some((f) => f.value === 'false' || f.value === '2')).toBe(false);
  });

  it('spans say where in the JSON a value sits', () => {
    expect(find(facts, 'identifier', 'HAT136')?.span).toBe(
      'tool get_reservation_details: flights[0].flight_number',
    );
  });

  it('reads Anthropic tool_use input and tool_result content the same way', () => {
    const anthropic = extractFactsOffline(
      historyEntries([
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'get_user', input: { user_id: 'usr_8f3a' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: '{"email":"ana@example.com","plan":"pro"}' },
          ],
        },
      ]),
    );
    expect(find(anthropic, 'identifier', 'usr_8f3a')).toMatchObject({ key: 'user_id', seq: 0 });
    expect(find(anthropic, 'email', 'ana@example.com')).toMatchObject({
      key: 'email',
      seq: 1,
      span: 'tool get_user: email',
    });
  });
});

describe('extractFactsOffline: merging and limits', () => {
  it('never drops a previous fact, whatever the new entries hold', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.constantFrom('a', 'b_id', 'path'),
            value: fc.string({ minLength: 1, maxLength: 12 }),
            category: fc.constantFrom<FactCategory>('identifier', 'path', 'other', 'date'),
            seq: fc.nat(50),
          }),
          { maxLength: 20 },
        ),
        fc.array(factSetArb, { maxLength: 4 }),
        (previous, sets) => {
          const texts = sets.map((f) =>
            user(`Fix ${f.path} for ${f.id} (${f.email}) by ${f.date}, ${f.number} runs.`),
          );
          const merged = extractFactsOffline(historyEntries(texts, 10), { previousFacts: previous });
          for (const fact of previous) {
            expect(merged.some((m) => m.category === fact.category && m.value === fact.value)).toBe(true);
          }
          const identities = merged.map((m) => `${m.category}\u0000${m.value}`);
          expect(new Set(identities).size).toBe(identities.length);
          for (let i = 1; i < merged.length; i += 1) {
            expect((merged[i] as ExtractedFact).seq).toBeGreaterThanOrEqual(
              (merged[i - 1] as ExtractedFact).seq,
            );
          }
        },
      ),
    );
  });

  it('keeps the earliest seq when a new entry repeats a known fact', () => {
    const previous: ExtractedFact[] = [{ key: 'path', value: 'src/a.ts', category: 'path', seq: 3 }];
    const merged = extractFactsOffline(historyEntries([user('Again src/a.ts and src/b.ts.')], 9), {
      previousFacts: previous,
    });
    expect(merged).toEqual([
      previous[0],
      expect.objectContaining({ value: 'src/b.ts', seq: 9, key: 'path_2' }),
    ]);
  });

  it('keeps previous facts even when the categories filter leaves them out', () => {
    const previous: ExtractedFact[] = [{ key: 'email', value: 'a@b.io', category: 'email', seq: 0 }];
    const facts = extractFactsOffline(historyEntries([user('Fix src/a.ts by 2024-05-20.')], 1), {
      previousFacts: previous,
      categories: ['date'],
    });
    expect(facts.map((f) => `${f.category}=${f.value}`)).toEqual(['email=a@b.io', 'date=2024-05-20']);
  });

  it(`keeps at most ${MAX_NEW_FACTS_PER_ENTRY} new facts from one huge entry, ids first for JSON`, () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({
      note: `row ${i}`,
      ref: `REF${1000 + i}`,
      total: 10 + i,
    }));
    const facts = extractFactsOffline(
      historyEntries([{ role: 'tool', tool_call_id: 'x', content: JSON.stringify(rows) }]),
    );
    expect(facts).toHaveLength(MAX_NEW_FACTS_PER_ENTRY);
    expect(facts.every((f) => f.category === 'identifier')).toBe(true);
    const log = Array.from({ length: 2000 }, (_, i) => `line ${i}: wrote out/file_${i}.json`).join('\n');
    expect(extractFactsOffline(historyEntries([user(log)]))).toHaveLength(MAX_NEW_FACTS_PER_ENTRY);
  });

  it('is deterministic: the same entries give the same facts', () => {
    fc.assert(
      fc.property(fc.array(factSetArb, { minLength: 1, maxLength: 6 }), (sets) => {
        const texts = sets.map((f) =>
          user(`User ${f.id} (${f.email}) edited ${f.path} on ${f.date}: ${f.number}.`),
        );
        expect(extractFactsOffline(historyEntries(texts))).toEqual(
          extractFactsOffline(historyEntries(texts)),
        );
      }),
    );
  });

  it('finds every generated path, id, date and email verbatim', () => {
    fc.assert(
      fc.property(factSetArb, (f) => {
        const facts = extractFactsOffline(
          historyEntries([user(`User ${f.id} (${f.email}) edited ${f.path} on ${f.date}.`)]),
        );
        const values = facts.map((x) => x.value);
        for (const value of [f.id, f.email, f.path, f.date]) expect(values).toContain(value);
      }),
    );
  });
});

if (!existsSync(TAU_BENCH_PATH))
  console.log(`tau-bench data not found at ${TAU_BENCH_PATH}: coverage test skipped`);

describe.skipIf(!hasTauBench())('extractFactsOffline on the tau-bench runs', () => {
  it.each(['openai', 'anthropic'] as const)(
    'finds the ground-truth action arguments present in each run (%s)',
    (format) => {
      const runs = loadTauBench();
      let present = 0;
      let exact = 0;
      let held = 0;
      const shares: number[] = [];
      for (const run of runs) {
        if (run.presentFacts.length === 0) continue;
        const facts = extractFactsOffline(historyEntries(run[format]));
        const values = new Set(facts.map((f) => f.value));
        let runExact = 0;
        for (const fact of run.presentFacts) {
          present += 1;
          if (values.has(fact)) {
            exact += 1;
            runExact += 1;
          }
          // Held: the value is a fact, or a whole word of one ("$500" holds 500, "Mohamed Silva" holds Silva).
          const word = new RegExp(`(^|[^\\w])${fact.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w])`);
          if (values.has(fact) || facts.some((f) => word.test(f.value))) held += 1;
        }
        shares.push(runExact / run.presentFacts.length);
      }
      const exactShare = exact / present;
      const heldShare = held / present;
      const meanRun = shares.reduce((a, b) => a + b, 0) / shares.length;
      const below90 = shares.filter((share) => share < 0.9).length;
      console.log(
        `tau-bench (${format}): offline facts hold ${(100 * exactShare).toFixed(1)}% of ${present} present action ` +
          `arguments exactly, ${(100 * heldShare).toFixed(1)}% within a fact; mean per run ${(100 * meanRun).toFixed(1)}%, ` +
          `${below90} of ${shares.length} runs under 90%`,
      );
      expect(exactShare).toBeGreaterThan(0.97);
      expect(heldShare).toBeGreaterThan(0.98);
      expect(meanRun).toBeGreaterThan(0.95);
    },
  );
});

describe('OfflineFactExtractor', () => {
  it('reads entries in batches to the same facts as one call over all of them', () => {
    const history = historyEntries(longSessionMessages(400, 'openai', 7));
    const previousFacts = extractFactsOffline(history.slice(0, 40));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 8 }), (sizes) => {
        const rest = history.slice(40);
        const extractor = new OfflineFactExtractor({ previousFacts });
        let at = 0;
        for (const size of sizes) {
          extractor.add(rest.slice(at, at + size));
          at += size;
        }
        extractor.add(rest.slice(at));
        const whole = extractFactsOffline(rest, { previousFacts });
        expect(extractor.facts()).toEqual(whole);
        expect(extractor.size).toBe(whole.length);
        expect(extractor.found.length).toBe(whole.length - previousFacts.length);
      }),
      { numRuns: 25 },
    );
  });

  it('never finds again a fact it already holds, whichever batch it comes from', () => {
    const said = historyEntries([user('Ship order ORD-77120 to /srv/app/config.yaml today.')]);
    const again = historyEntries([user('Again: ORD-77120 and /srv/app/config.yaml.')], 1);
    const extractor = new OfflineFactExtractor().add(said);
    const before = extractor.size;
    extractor.add(again);
    expect(extractor.size).toBe(before);
    expect(extractor.facts().map((f) => f.seq)).toEqual(extractor.facts().map(() => 0));
  });
});
