/**
 * Issue 30, item 2: the facts of a tool result are what it was read for. A source file read for
 * one constant, a JSON config read for one key, a failing test run, a grep: the value the work
 * needs is kept, first among the result's facts and through a tight facts block, and the file's
 * first identifiers, its line numbers and counters are not what the block spends its room on.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capFactsFor } from '../compaction/fact-candidates.js';
import type { HistoryEntry } from '../messages/types.js';
import { renderCompactFacts } from './facts-block.js';
import { extractFactsOffline } from './offline-facts.js';
import type { ExtractedFact } from './types.js';

const FIXTURES = new URL('../../test/fixtures/facts/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

/** `cat -n`'s output, as read tools print a file: each line led by its number and a tab. */
function numbered(text: string): string {
  return text
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join('\n');
}

/** A user request, the agent's call, its result: the conversation a result is read in. */
function session(
  request: string,
  tool: string,
  args: Record<string, unknown>,
  result: string,
): HistoryEntry[] {
  return [
    { seq: 0, message: { role: 'system', content: 'You are a careful coding agent.' } },
    { seq: 1, message: { role: 'user', content: request } },
    {
      seq: 2,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: tool, arguments: JSON.stringify(args) } },
        ],
      },
    },
    { seq: 3, message: { role: 'tool', tool_call_id: 'call_1', content: result } },
  ] as HistoryEntry[];
}

/** The facts of the result (seq 3), in the extractor's order. */
function resultFactsOf(entries: readonly HistoryEntry[], request: string): ExtractedFact[] {
  return extractFactsOffline(entries, { request }).filter((f) => f.seq === 3);
}

/**
 * The facts block capped to `room` tokens beside its markers and heading (about four characters a
 * token), as the planner caps it: facts the user or the agent stated go first.
 */
function capped(entries: readonly HistoryEntry[], request: string, room: number): ExtractedFact[] {
  const count = (text: string) => Math.ceil(text.length / 4);
  const facts = extractFactsOffline(entries, { request });
  const frame = count(renderCompactFacts([]));
  return capFactsFor(facts, frame + room, entries, (f) => count(renderCompactFacts(f)), count).facts;
}

/** Facts that are a bare number the extractor could not name: a line number, a counter. */
const unnamedNumbers = (facts: readonly ExtractedFact[]) =>
  facts.filter((f) => f.category === 'number' && /^number(?:_\d+)?$/.test(f.key));

describe('facts of a source file read for one constant', () => {
  const source = fixture('http-client.ts.txt');
  const request =
    'Set the upload timeout in src/upload/worker.ts to the value of BACKOFF_CAP_MS in the http client.';
  const entries = session(request, 'read_file', { path: 'src/net/http-client.ts' }, numbered(source));

  it('is a file of 3-4k tokens', () => {
    expect(source.length / 4).toBeGreaterThan(2_800);
    expect(source.length / 3).toBeLessThan(4_200);
  });

  it('keeps the assignment the file was read for, first of its facts', () => {
    const facts = resultFactsOf(entries, request);
    expect(facts[0]).toMatchObject({ key: 'backoff_cap_ms', value: '12_500' });
  });

  it('keeps no line number or other unnamed number of the file', () => {
    expect(unnamedNumbers(resultFactsOf(entries, request))).toEqual([]);
  });

  it('keeps the value through a facts block of 40 tokens', () => {
    expect(capped(entries, request, 40).map((f) => f.value)).toContain('12_500');
  });
});

describe('facts of a JSON config read for a key', () => {
  const config = fixture('service-config.json');
  const request =
    "Size the export worker's pool like the replica database: use the replica's maxConnections.";
  const entries = session(request, 'read_file', { path: 'config/service-config.json' }, config);

  it("keeps the replica's maxConnections first, before the other databases' and the first ids", () => {
    const facts = resultFactsOf(entries, request);
    expect(facts[0]).toMatchObject({ key: 'max_connections', value: '24' });
    const values = facts.map((f) => f.value);
    expect(values.indexOf('24')).toBeLessThan(values.indexOf('64'));
    expect(values.indexOf('24')).toBeLessThan(values.indexOf('9f2c4e1ab77d'));
  });

  it('keeps the value through a facts block of 30 tokens', () => {
    expect(capped(entries, request, 30).map((f) => f.value)).toContain('24');
  });
});

describe('facts of a failing test run', () => {
  const log = fixture('vitest-fail.log');
  const request = 'The date tests fail since the last change: fix parseDate in src/dates/parse.ts.';
  const entries = session(request, 'run_command', { command: 'npx vitest run' }, log);

  it('keeps the failing test, the assertion and the stack top', () => {
    const values = resultFactsOf(entries, request).map((f) => f.value);
    expect(values).toContain('FAIL  src/dates/parse.test.ts > parseDate > keeps the offset of a zoned time');
    expect(
      values.some((v) => v.startsWith("AssertionError: expected '2024-05-20T00:00:00.000Z' to be")),
    ).toBe(true);
    expect(values).toContain('❯ src/dates/parse.test.ts:48:33');
  });

  it('keeps none of its counters (test counts, durations, line numbers)', () => {
    const facts = resultFactsOf(entries, request);
    expect(unnamedNumbers(facts)).toEqual([]);
    for (const counter of ['260', '261', '524ms', '312ms'])
      expect(facts.map((f) => f.value)).not.toContain(counter);
  });

  it('keeps the failure and the assertion through a facts block of 120 tokens, not the passing files', () => {
    const values = capped(entries, request, 120).map((f) => f.value);
    expect(values.some((v) => v.startsWith('FAIL  src/dates/parse.test.ts'))).toBe(true);
    expect(values.some((v) => v.startsWith('AssertionError:'))).toBe(true);
    expect(values).not.toContain('src/money/round.test.ts');
  });
});

describe('facts of a grep for a name', () => {
  const grep = fixture('grep-request-timeout.txt');
  const request = 'Uploads time out too early. Find where the request timeout is set.';
  const entries = session(request, 'grep', { pattern: 'REQUEST_TIMEOUT', path: 'src' }, grep);

  it('keeps the definition and its file first, not the first of sixty files that use it', () => {
    const facts = resultFactsOf(entries, request);
    expect(facts[0]).toMatchObject({ key: 'request_timeout', value: '15_000' });
    expect(facts[1]).toMatchObject({ category: 'path', value: 'src/config/limits.ts' });
  });

  it('keeps the value through a facts block of 40 tokens', () => {
    expect(capped(entries, request, 40).map((f) => f.value)).toContain('15_000');
  });
});
