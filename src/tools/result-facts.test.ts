import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withCpuTime } from '../../test/support/cpu-time.js';
import type { HistoryEntry } from '../messages/types.js';
import { categoryOf } from './facts-block.js';
import { MAX_JSON_FACTS } from './json-facts.js';
import { extractFactsOffline } from './offline-facts.js';
import { assignmentOf, MAX_RESULT_SCAN_CHARS, resultFacts, resultFocus } from './result-facts.js';

/** A request, a call and its result (seq 3). */
function session(request: string, args: Record<string, unknown>, result: string): HistoryEntry[] {
  return [
    { seq: 0, message: { role: 'user', content: request } },
    {
      seq: 1,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'read', arguments: JSON.stringify(args) } },
        ],
      },
    },
    { seq: 2, message: { role: 'tool', tool_call_id: 'c1', content: result } },
  ] as HistoryEntry[];
}

describe('assignmentOf: assignments and keys in several languages', () => {
  it.each([
    ['export const MAX_RETRIES = 4;', 'MAX_RETRIES', '4'],
    ['export const BACKOFF: number = 12_500; // ms', 'BACKOFF', '12_500'],
    ['MAX_RETRIES: int = 5', 'MAX_RETRIES', '5'],
    ['timeout := 30 * time.Second', 'timeout', '30 * time.Second'],
    [
      '    private static final String API_URL = "https://api.example.com/v2";',
      'API_URL',
      'https://api.example.com/v2',
    ],
    ['#define BUFFER_SIZE 4096', 'BUFFER_SIZE', '4096'],
    ['export DATABASE_URL=postgres://db:5432/app', 'DATABASE_URL', 'postgres://db:5432/app'],
    ['max_connections = 24  # per host', 'max_connections', '24'],
    ['  replicas: 3', 'replicas', '3'],
    ['    "maxConnections": 24,', 'maxConnections', '24'],
    ['  --accent-color: #0a84ff;', '--accent-color', '#0a84ff'],
    ['config.retry.limit = 7', 'config.retry.limit', '7'],
  ])('%s', (line, name, value) => {
    expect(assignmentOf(line)).toMatchObject({ name, value });
  });

  it.each([
    'if (count == 3) {',
    'for (let i = 0; i < n; i++) {',
    'const { a, b } = options;',
    'function retry(fn, attempts = MAX_RETRIES) {',
    '<div class="card">',
    'see https://example.com/?page=2',
    'return a >= b;',
    'const config = {',
  ])('not %s', (line) => {
    expect(assignmentOf(line)).toBeUndefined();
  });
});

describe('resultFacts', () => {
  it('never takes a line number, a counter or a bare number of a line nobody asked about', () => {
    const text = Array.from(
      { length: 40 },
      (_, i) => `${String(i + 1).padStart(6)}\tprocessed 1${i}4 rows in 2${i}ms`,
    ).join('\n');
    const facts = resultFacts(text, { categoryOf });
    expect(facts.filter((f) => f.category === 'number')).toEqual([]);
  });

  it("ranks what the request names above what the call's arguments name above the rest", () => {
    const text = ['alpha_limit = 1', 'beta_limit = 2', 'gamma_limit = 3'].join('\n');
    const focus = resultFocus('{"pattern":"beta_limit"}', 'and what is gamma_limit?');
    const facts = resultFacts(text, { categoryOf, focus });
    expect(
      facts
        .map((f) => f.value)
        .slice(0, 2)
        .sort(),
    ).toEqual(['2', '3']);
    expect(facts[2]).toMatchObject({ value: '1', relevance: 0 });
  });

  it('is deterministic', () => {
    const text = 'a_b = 1\nError: it broke\n    at main (src/x.ts:3:5)\nuser_id: usr_8f3a\n'.repeat(30);
    const focus = resultFocus('{"q":"a_b"}', 'why did it break?');
    expect(resultFacts(text, { categoryOf, focus })).toEqual(resultFacts(text, { categoryOf, focus }));
  });
});

// ---------------------------------------------------------------- property

/** The styles a name is assigned in, by language: the line for `name` and value `v`. */
const STYLES: ReadonlyArray<(name: string, v: string, quoted: boolean) => string> = [
  (n, v, q) => `const ${n} = ${q ? `'${v}'` : v};`,
  (n, v, q) => `export const ${n}: ${q ? 'string' : 'number'} = ${q ? `"${v}"` : v};`,
  (n, v, q) => `${n} = ${q ? `"${v}"` : v}`,
  (n, v, q) => `\t${n} := ${q ? `"${v}"` : v}`,
  (n, v, q) => `    static final ${q ? 'String' : 'int'} ${n} = ${q ? `"${v}"` : v};`,
  (n, v, q) => `#define ${n} ${q ? `"${v}"` : v}`,
  (n, v, q) => `${n}: ${q ? `'${v}'` : v}`,
  (n, v, q) => `  "${n}": ${q ? `"${v}"` : v},`,
  (n, v, q) => `export ${n}=${q ? `'${v}'` : v}`,
  (n, v, q) => `${n} = ${q ? `"${v}"` : v}  # set by ops`,
  (n, v, q) => `let ${n} = ${q ? `'${v}'` : v}; // the limit`,
];

const nameArb = fc.oneof(
  fc.stringMatching(/^K[A-Z0-9]{2,8}(?:_[A-Z0-9]{2,6}){0,2}$/),
  fc.stringMatching(/^[a-z]{3,6}[A-Z][a-z]{2,6}$/),
);

const valueArb = fc.oneof(
  fc.record({ v: fc.integer({ min: -100_000, max: 10_000_000 }).map(String), q: fc.constant(false) }),
  fc.record({
    v: fc.double({ min: 0.001, max: 1e6, noNaN: true }).map((d) => d.toFixed(3)),
    q: fc.constant(false),
  }),
  fc.record({ v: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), q: fc.constant(false) }),
  fc.record({
    v: fc.stringMatching(/^[A-Za-z0-9](?:[A-Za-z0-9 ]{0,18}[A-Za-z0-9])?$/),
    q: fc.constant(true),
  }),
  fc.record({ v: fc.stringMatching(/^https:\/\/[a-z]{2,8}\.example\/[a-z0-9]{1,8}$/), q: fc.constant(true) }),
);

/** Lines that mention `name` without assigning it. */
const mentions = (name: string) =>
  fc.constantFrom(
    `  await retry(() => send(req), ${name});`,
    `// ${name} is read by the uploader`,
    `return ${name} * 2;`,
    `log: ${name} changed by the last deploy`,
    `<td class="limit">${name}</td>`,
    `row,${name},12,ok`,
    `2026-11-28T10:00:00Z WARN ${name} exceeded, backing off 250ms`,
  );

/** Lines of all kinds: other assignments, logs, prose, JSON, errors, and any text at all. */
const noiseArb = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 0, max: STYLES.length - 1 }),
      fc.stringMatching(/^[a-z]{2,7}_[a-z0-9]{1,6}$/),
      valueArb,
    )
    .map(([s, n, { v, q }]) => (STYLES[s] as (typeof STYLES)[number])(n, v, q)),
  fc.constantFrom(
    "import { readFileSync } from 'node:fs';",
    '2026-11-28T10:00:01Z INFO worker 12 started in 431ms',
    'The service retries failed uploads with an exponential backoff.',
    '{"id": "usr_8f3a21", "count": 42, "path": "/srv/data/a.csv"}',
    'Error: connection refused (ECONNREFUSED 10.0.0.12:5432)',
    '    at connect (src/db/pool.ts:88:13)',
    'function backoff(attempt) {',
    '}',
    '',
    ' ✓ src/a.test.ts (12 tests) 5ms',
  ),
  fc.string({ maxLength: 120 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
);

describe('resultFacts: the assignment a result was read for is kept (property)', () => {
  it('for any file that assigns the name once, whatever else it holds, the assigned value is a fact', () => {
    fc.assert(
      fc.property(
        nameArb,
        valueArb,
        fc.integer({ min: 0, max: STYLES.length - 1 }),
        fc.array(fc.oneof(noiseArb, fc.constant('@mention')), { maxLength: 300 }),
        fc.nat(),
        fc.boolean(),
        fc.constantFrom('arguments', 'request', 'both'),
        (name, { v, q }, style, lines, at, numbered, where) => {
          const lower = name.toLowerCase();
          const body = lines
            // A noise line never assigns the name (it may mention it).
            .filter((l) => !l.toLowerCase().includes(lower))
            .map((l, i) => (l === '@mention' ? fc.sample(mentions(name), { seed: i, numRuns: 1 })[0]! : l));
          const line = (STYLES[style] as (typeof STYLES)[number])(name, v, q);
          body.splice(at % (body.length + 1), 0, line);
          const text = numbered
            ? body.map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join('\n')
            : body.join('\n');
          const args = where === 'request' ? { path: 'src/settings.ts' } : { pattern: name };
          const request = where === 'arguments' ? 'Check the settings file.' : `What is ${name} set to?`;
          const facts = extractFactsOffline(session(request, args, text), { request }).filter(
            (f) => f.seq === 2,
          );
          expect(facts.map((f) => f.value)).toContain(v);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------- speed

/** The longest CPU time of `work` over a few runs after a warm-up (JIT), in ms. */
function cpuMs(work: () => unknown): number {
  work();
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) best = Math.min(best, withCpuTime(work).cpuMs);
  return best;
}

describe('facts of one result take no synchronous stretch over 50 ms within the documented limits', () => {
  const request = 'Why does the upload of usr_8f3a21 fail? Check MAX_RETRIES and the worker log.';
  const line = (i: number) =>
    [
      `2026-11-28T10:${String(i % 60).padStart(2, '0')}:00Z INFO worker ${i} uploaded /srv/data/part-${i}.csv for usr_${(i * 7919).toString(16)}`,
      `const LIMIT_${i} = ${i * 3}; // MAX_RETRIES stays 4`,
      `Error: upload ${i} failed for usr_8f3a21 after 4 attempts`,
      `    at send (src/net/http-client.ts:${i}:7)`,
      `The worker retried part ${i} of https://uploads.example.com/b/${i} and gave up.`,
    ][i % 5] as string;
  const lines = (chars: number) => {
    const out: string[] = [];
    for (let i = 0, n = 0; n < chars; i++) {
      const l = line(i);
      out.push(l);
      n += l.length + 1;
    }
    return out.join('\n');
  };
  const cases: Array<[string, string]> = [
    [
      `a log of ${MAX_RESULT_SCAN_CHARS / 1000}k characters, many lines naming the focus`,
      lines(MAX_RESULT_SCAN_CHARS),
    ],
    ['a log of 2 MB (only the documented part is read)', lines(2_000_000)],
    [
      `one line of ${MAX_RESULT_SCAN_CHARS / 1000}k characters`,
      lines(MAX_RESULT_SCAN_CHARS).replace(/\n/g, ' '),
    ],
    [
      `JSON of ${MAX_JSON_FACTS} records naming the focus`,
      JSON.stringify({
        uploads: Array.from({ length: MAX_JSON_FACTS }, (_, i) => ({
          id: `up_${i.toString(16).padStart(6, '0')}`,
          user_id: i % 3 === 0 ? 'usr_8f3a21' : `usr_${i}`,
          max_retries: 4,
          path: `/srv/data/part-${i}.csv`,
        })),
      }),
    ],
  ];
  it.each(cases)('%s', (_, text) => {
    const entries = session(request, { pattern: 'MAX_RETRIES', path: 'logs/worker.log' }, text);
    const ms = cpuMs(() => extractFactsOffline(entries, { request }));
    expect(ms).toBeLessThan(50);
  });
});
