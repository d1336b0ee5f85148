import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationArb } from '../../test/support/arbitraries.js';
import { InvalidArgumentError } from '../errors.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import { PostingsIndex } from './postings-index.js';
import { MAX_QUERY_WORDS, readQuery } from './query.js';
import { RecallIndex } from './recall-index.js';
import { searchWords } from './terms.js';
import type { TextIndex } from './text-index.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const COUNTERS: Record<MessageFormat, ReturnType<typeof createTokenCounter>> = {
  openai: createTokenCounter(getModelInfo('gpt-4o')!),
  anthropic: createTokenCounter(getModelInfo('claude-sonnet-4-5')!),
  'openai-responses': createTokenCounter(getModelInfo('gpt-4o')!),
  gemini: createTokenCounter(getModelInfo('gemini-2.5-flash')!),
  bedrock: createTokenCounter(getModelInfo('claude-sonnet-4-5')!),
};

function entriesOf(messages: readonly Message[]): HistoryEntry[] {
  return messages.map((message, seq) => ({
    seq,
    message,
    metadata: { timestamp: `2025-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000Z` },
  }));
}

function indexOver(
  entries: readonly HistoryEntry[],
  format: MessageFormat = 'openai',
  extra: Partial<ConstructorParameters<typeof RecallIndex>[0]> = {},
) {
  const counter = COUNTERS[format];
  return new RecallIndex({ entries: () => entries, countText: (t) => counter.countText(t), ...extra });
}

/** The seqs a hit shows, read from its `#seq` line labels. */
function shownSeqs(text: string): number[] {
  return [...new Set(Array.from(text.matchAll(/^#(\d+) /gm), (m) => Number(m[1])))];
}

describe('RecallIndex over generated conversations, in both formats', () => {
  it('returns at most `limit` hits within `maxTokens`, each turn once, and changes nothing stored', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb({ maxTurns: 6 }),
        fc.nat(),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 1_500 }),
        async (conv, pick, limit, maxTokens) => {
          const entries = entriesOf(conv.messages);
          const before = JSON.stringify(entries);
          const index = indexOver(entries, conv.format);
          const words = conv.messages.flatMap((m) => searchWords(JSON.stringify(m.content)));
          const query =
            words.length === 0
              ? 'anything'
              : words.slice(pick % words.length, (pick % words.length) + 4).join(' ');
          const hits = await index.recall(query, { limit, maxTokens });
          expect(hits.length).toBeLessThanOrEqual(limit);
          const counter = COUNTERS[conv.format];
          expect(hits.reduce((sum, h) => sum + counter.countText(h.text), 0)).toBeLessThanOrEqual(maxTokens);
          const shown = hits.flatMap((h) => shownSeqs(h.text));
          expect(new Set(shown).size).toBe(shown.length);
          for (const hit of hits) {
            expect(hit.seq).toBeGreaterThanOrEqual(0);
            expect(hit.seq).toBeLessThan(entries.length);
            expect(hit.role).toBe(entries[hit.seq]?.message.role);
            expect(hit.timestamp).toBe(entries[hit.seq]?.metadata.timestamp);
            expect(hit.text.trim()).not.toBe('');
          }
          for (let i = 1; i < hits.length; i++)
            expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
          expect(await index.recall(query, { limit, maxTokens })).toEqual(hits);
          expect(JSON.stringify(entries)).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('finds a fact written in one message only', async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb({ maxTurns: 6, images: false }), fc.nat(), async (conv, pick) => {
        const texts = conv.messages.map((m) => JSON.stringify(m));
        const unique = conv.facts.filter(
          (f) => /[a-z]\d|\d[a-z]|@/i.test(f) && texts.filter((t) => t.includes(f)).length === 1,
        );
        fc.pre(unique.length > 0);
        const fact = unique[pick % unique.length] as string;
        const hits = await indexOver(entriesOf(conv.messages), conv.format).recall(fact, {
          maxTokens: 4_000,
        });
        expect(hits.map((h) => h.text).join('\n')).toContain(fact);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('RecallIndex', () => {
  const chat = entriesOf(
    [
      'Hi Mel! How was your week?',
      'Busy with the kids. What about you?',
      'I have been researching adoption agencies, it is a dream of mine.',
      'That is wonderful, you would be a great mom.',
      'Thanks! I also started a pottery class on Tuesday.',
      'Pottery is so relaxing. I painted a sunset last week.',
    ].map((content, i): Message => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })),
  );

  it('finds a turn by another form of its words, with its neighbours', async () => {
    const [hit] = await indexOver(chat).recall('What did she research?');
    expect(hit?.seq).toBe(2);
    expect(hit?.text).toContain('adoption agencies');
    expect(hit?.text).toContain('#1 assistant: Busy with the kids');
  });

  it('gives [] for an empty query, one of stopwords only, or one matching nothing', async () => {
    const index = indexOver(chat);
    expect(await index.recall('')).toEqual([]);
    expect(await index.recall('   ')).toEqual([]);
    expect(await index.recall('what was it that you did')).toEqual([]);
    expect(await index.recall('xylophone')).toEqual([]);
    expect(await indexOver([]).recall('pottery')).toEqual([]);
  });

  it('reads a 100k-character query only up to a bound, and answers it', async () => {
    const query = `pottery ${'word '.repeat(20_000)}`;
    expect(query.length).toBeGreaterThan(100_000);
    expect(readQuery(query).words.length).toBeLessThanOrEqual(MAX_QUERY_WORDS);
    const distinct = Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(' ');
    expect(readQuery(distinct).words).toHaveLength(MAX_QUERY_WORDS);
    const hits = await indexOver(chat).recall(query);
    expect(hits[0]?.text).toContain('pottery');
  });

  it('refuses a query that is not a string and bad options with InvalidArgumentError', async () => {
    const index = indexOver(chat);
    await expect(index.recall(42 as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(index.recall(null as unknown as string)).rejects.toThrow(
      /query: expected a string, got null/,
    );
    for (const options of [
      { limit: 0 },
      { limit: 1.5 },
      { limit: 1_000 },
      { maxTokens: 0 },
      { maxTokens: Number.NaN },
    ]) {
      await expect(index.recall('pottery', options), JSON.stringify(options)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
  });

  it('takes in messages added after it was built, and forgets them on reset', async () => {
    const entries = chat.slice(0, 2);
    const index = indexOver(entries, 'openai', { eager: true });
    index.update();
    expect(await index.recall('pottery')).toEqual([]);
    entries.push(...chat.slice(2));
    index.update();
    expect((await index.recall('pottery'))[0]?.seq).toBe(4);
    entries.length = 0;
    index.reset();
    expect(await index.recall('pottery')).toEqual([]);
  });

  it('forgets what it read when the generation of the entries changes', async () => {
    const entries = chat.slice();
    let generation = 0;
    const index = indexOver(entries, 'openai', { generation: () => generation });
    expect((await index.recall('pottery'))[0]?.seq).toBe(4);
    entries.splice(0, entries.length, ...entriesOf([{ role: 'user', content: 'a new pottery wheel' }]));
    generation++;
    expect((await index.recall('pottery')).map((h) => [h.seq, h.text])).toEqual([
      [0, '#0 user: a new pottery wheel'],
    ]);
  });

  it('rebuilds a broken in-process index from the entries, with a warning, and answers', async () => {
    let broken = true;
    const warnings: string[] = [];
    const index = indexOver(chat, 'openai', {
      createIndex: (): TextIndex => {
        const inner = new PostingsIndex();
        const failing = broken;
        broken = false;
        return {
          get size() {
            return inner.size;
          },
          add: (seq, text) => inner.add(seq, text),
          search: (terms, limit) => {
            if (failing) throw new Error('index damaged');
            return inner.search(terms, limit);
          },
        };
      },
      onWarn: (code) => warnings.push(code),
    });
    const [hit] = await index.recall('pottery class');
    expect(hit?.seq).toBe(4);
    expect(warnings).toEqual(['recall_index_rebuilt']);
  });

  it('favours the turns of the person a question names, and of the date it names', async () => {
    const stamped = entriesOf(
      [
        '[1:00 pm on 1 May, 2023] Caroline: I love painting landscapes.',
        '[1:01 pm on 1 May, 2023] Melanie: I love painting too, mostly portraits.',
        '[2:00 pm on 20 June, 2023] Caroline: Went to a concert yesterday.',
        '[2:01 pm on 20 June, 2023] Melanie: Which one?',
        '[3:00 pm on 9 September, 2023] Melanie: Went to a concert with the kids.',
      ].map((content, i): Message => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })),
    );
    const index = indexOver(stamped);
    expect((await index.recall('What does Melanie like painting?', { limit: 1 }))[0]?.seq).toBe(1);
    expect((await index.recall('What does Caroline like painting?', { limit: 1 }))[0]?.seq).toBe(0);
    expect((await index.recall('Which concert on 19 June 2023?', { limit: 1 }))[0]?.seq).toBe(2);
    expect((await index.recall('concert in September 2023', { limit: 1 }))[0]?.seq).toBe(4);
  });
});
