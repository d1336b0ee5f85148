/**
 * Issue 30, item 2, through the manager: an agent reads files of a few thousand tokens each for
 * one value apiece; when the reads leave the view, its facts block still holds each value the
 * agent read a file for, not the files' first identifiers or line numbers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ContextManager } from '../src/manager.js';
import type { Message, MessageFormat, OpenAIMessage } from '../src/messages/types.js';
import { convertMessages } from '../src/wire/convert.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/facts/${name}`, import.meta.url), 'utf8');

function numbered(text: string): string {
  return text
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join('\n');
}

/** The facts block of a view, or '' when it has none. */
function factsBlock(view: readonly Message[]): string {
  const block = view.find((m) => JSON.stringify(m).includes('contextkit:facts'));
  return block === undefined ? '' : JSON.stringify(block);
}

describe('the facts block holds what each cleared read was for', () => {
  it('keeps the constant, the config key and the definition a grep found', async () => {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.addMessage({ role: 'system', content: 'You are a careful coding agent.' });
    await ctx.addMessage({
      role: 'user',
      content:
        "Make the export worker wait like the http client: use BACKOFF_CAP_MS, the replica's maxConnections and REQUEST_TIMEOUT.",
    });
    const reads: Array<[string, Record<string, unknown>, string]> = [
      ['read_file', { path: 'src/net/http-client.ts' }, numbered(fixture('http-client.ts.txt'))],
      ['read_file', { path: 'config/service-config.json' }, fixture('service-config.json')],
      ['grep', { pattern: 'REQUEST_TIMEOUT', path: 'src' }, fixture('grep-request-timeout.txt')],
      ['read_file', { path: 'src/net/http-client.ts', offset: 1 }, numbered(fixture('http-client.ts.txt'))],
    ];
    for (const [i, [name, args, result]] of reads.entries()) {
      const id = `call_${i}`;
      await ctx.addMessage({
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
      });
      await ctx.addMessage({ role: 'tool', tool_call_id: id, content: result });
    }
    await ctx.addMessage({ role: 'assistant', content: 'I have read the three files.' });
    await ctx.addMessage({ role: 'user', content: 'Go ahead and write the change.' });
    // A budget none of the reads stays in (at 4k the config read, about 900 tokens, fits beside the
    // placeholders under the target and stays verbatim: an older read that fits is not cleared).
    const view = await ctx.getMessagesForRequest({ tokenBudget: 2000 });
    const shown = JSON.stringify(view);
    // The reads left the view (the test is about what the block keeps of them)…
    expect(shown).not.toContain('RETRYABLE_CODES');
    expect(shown).not.toContain('ledger-api');
    // …and the block keeps the values they were read for.
    const facts = factsBlock(view);
    expect(facts).toContain('12_500');
    expect(facts).toContain('15_000');
    expect(facts).toMatch(/max_connections: (?:\d+ \| )*24\b/);
  });
});

/**
 * A file of `lines` assignments, `name` among them about 60% of the way in with `value`: more
 * facts than one result may add, so which of them are kept is the extractor's choice.
 */
function assignments(prefix: string, name: string, value: number, lines = 300): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    out.push(
      i === Math.floor(lines * 0.6)
        ? `export const ${name} = ${value};`
        : `export const ${prefix}_${i}_q${(i * 37) % 97} = ${(i * 7919) % 10_000};`,
    );
  }
  return out.join('\n');
}

describe('the facts of parallel reads, whichever format carries their results', () => {
  // OpenAI Chat and Responses carry each result in its own message; Anthropic, Bedrock and Gemini
  // carry every result of a parallel call in one user turn. Each result is read for its facts on
  // its own: a turn's second result never goes without facts because its first had many.
  const formats: MessageFormat[] = ['openai', 'openai-responses', 'anthropic', 'bedrock', 'gemini'];

  /**
   * The task, two parallel reads of `src/left.ts` and `src/right.ts` (each call's arguments, and
   * whether the task names the values, as given), the answer, and the next request.
   */
  function twoReads(task: string, args: (path: string, symbol: string) => string): OpenAIMessage[] {
    const call = (id: string, path: string, symbol: string) => ({
      id,
      type: 'function' as const,
      function: { name: 'read_file', arguments: args(path, symbol) },
    });
    return [
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'user', content: task },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          call('call_a', 'src/left.ts', 'left_gauge_k17'),
          call('call_b', 'src/right.ts', 'right_gauge_m42'),
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: assignments('left', 'left_gauge_k17', 4321) },
      { role: 'tool', tool_call_id: 'call_b', content: assignments('right', 'right_gauge_m42', 8765) },
      { role: 'assistant', content: 'I have read both files.' },
      { role: 'user', content: 'Good. Now write src/total.ts.' },
    ];
  }

  /** The view of `conversation` in `format` at 3,000 tokens, where neither read (about 4,000 tokens each) stays. */
  async function viewOf(conversation: OpenAIMessage[], format: MessageFormat): Promise<Message[]> {
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.setMessages(format === 'openai' ? conversation : convertMessages(conversation, format));
    return ctx.getMessagesForRequest({ tokenBudget: 3_000, provider: format });
  }

  // Each read is read for what its own call asked (its arguments), matched by the call's id in every
  // format that gives one: not for what the turn's last call of that tool asked.
  for (const format of formats) {
    it(`${format}: keeps what each parallel read's own call asked for, where the request names neither`, async () => {
      const view = await viewOf(
        twoReads('Look up the two gauges the dashboard needs and set TOTAL to their sum.', (path, symbol) =>
          JSON.stringify({ path, symbol }),
        ),
        format,
      );
      const facts = factsBlock(view);
      expect(facts).toMatch(/left_gauge_k17: 4321\b/);
      expect(facts).toMatch(/right_gauge_m42: 8765\b/);
    });
  }
  for (const format of formats) {
    it(`${format}: keeps the value each of two parallel reads was for once both leave the view`, async () => {
      const view = await viewOf(
        twoReads(
          'Set `TOTAL` in src/total.ts to the sum of `left_gauge_k17` (in src/left.ts) and `right_gauge_m42` (in src/right.ts).',
          (path) => JSON.stringify({ path }),
        ),
        format,
      );
      const shown = JSON.stringify(view);
      expect(shown).not.toContain('left_41_q');
      expect(shown).not.toContain('right_41_q');
      const facts = factsBlock(view);
      expect(facts).toMatch(/left_gauge_k17: 4321\b/);
      expect(facts).toMatch(/right_gauge_m42: 8765\b/);
    });
  }
});

describe('the facts of parallel reads whose calls have no ids (Gemini)', () => {
  it('reads each response for the call it answers, in order, where the request names neither value', async () => {
    // Gemini's API leaves a call's id out unless it sets one: the responses then answer the calls in order.
    const response = (prefix: string, name: string, value: number) => ({
      functionResponse: { name: 'read_file', response: { content: assignments(prefix, name, value) } },
    });
    const conversation = [
      {
        role: 'user',
        parts: [{ text: 'Look up the two gauges the dashboard needs and set TOTAL to their sum.' }],
      },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'read_file', args: { path: 'src/left.ts', symbol: 'left_gauge_k17' } } },
          { functionCall: { name: 'read_file', args: { path: 'src/right.ts', symbol: 'right_gauge_m42' } } },
        ],
      },
      {
        role: 'user',
        parts: [response('left', 'left_gauge_k17', 4321), response('right', 'right_gauge_m42', 8765)],
      },
      { role: 'model', parts: [{ text: 'I have read both files.' }] },
      { role: 'user', parts: [{ text: 'Good. Now write src/total.ts.' }] },
    ] as unknown as Message[];
    const ctx = new ContextManager({ model: 'gpt-4o' });
    await ctx.setMessages(conversation);
    const view = await ctx.getMessagesForRequest({ tokenBudget: 3_000, provider: 'gemini' });
    const facts = factsBlock(view);
    expect(facts).toMatch(/left_gauge_k17: 4321\b/);
    expect(facts).toMatch(/right_gauge_m42: 8765\b/);
  });
});
