import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import {
  conversationArb,
  type GeneratedConversation,
  hugeText,
  longSessionMessages,
  pngBase64,
  pngBytes,
  seededRandom,
} from './arbitraries.js';
import { withCpuTime } from './cpu-time.js';
import { referenceProblems } from './reference-validator.js';

// ---------------------------------------------------------------- helpers that read messages

function blocks(message: Message): Array<Record<string, unknown>> {
  return Array.isArray(message.content) ? (message.content as unknown as Array<Record<string, unknown>>) : [];
}

/** The tool-call ids a message makes, in order (either format). */
function callIds(message: Message): string[] {
  if (message.role !== 'assistant') return [];
  if ('tool_calls' in message && message.tool_calls) return message.tool_calls.map((c) => c.id);
  return blocks(message)
    .filter((b) => b.type === 'tool_use')
    .map((b) => String(b.id));
}

function isToolResultCarrier(message: Message): boolean {
  return message.role === 'tool' || blocks(message).some((b) => b.type === 'tool_result');
}

function readPngSize(base64: string): { width: number; height: number; crcOk: boolean } {
  const bytes = Buffer.from(base64, 'base64');
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.readUInt32BE(8)).toBe(13);
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
  const crcOk = crc32(bytes.subarray(12, 29)) === bytes.readUInt32BE(29);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), crcOk };
}

/** Every inline PNG in a conversation, in either format, including inside tool results. */
function inlinePngs(messages: Message[]): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      if (record.type === 'base64' && typeof record.data === 'string') found.push(record.data);
      if (typeof record.url === 'string' && record.url.startsWith('data:image/png;base64,')) {
        found.push(record.url.slice('data:image/png;base64,'.length));
      }
      Object.values(record).forEach(visit);
    }
  };
  visit(messages);
  return found;
}

const formats: MessageFormat[] = ['openai', 'anthropic'];

// ---------------------------------------------------------------- conversationArb

describe('conversationArb', () => {
  it.each(formats)('makes %s conversations the reference validator accepts', (format) => {
    fc.assert(
      fc.property(conversationArb({ format }), (conversation) => {
        expect(conversation.format).toBe(format);
        expect(referenceProblems(conversation.messages, format)).toEqual([]);
        expect(conversation.breakage).toEqual({
          unfinishedTail: false,
          orphanResult: false,
          interleaved: false,
        });
      }),
      { numRuns: 150 },
    );
  });

  it('keeps default conversations moderate and options parallel to messages', () => {
    fc.assert(
      fc.property(conversationArb(), (conversation) => {
        expect(conversation.options).toHaveLength(conversation.messages.length);
        // At most: system + 5 turns × (mid system + user + 2 rounds × (1 call message + 4 results) + answer).
        expect(conversation.messages.length).toBeLessThanOrEqual(1 + 5 * 13);
        const firstOther = conversation.messages.find((m) => m.role !== 'system' && m.role !== 'developer');
        expect(firstOther?.role).toBe('user');
      }),
      { numRuns: 150 },
    );
  });

  it('respects minTurns and maxTurns', () => {
    fc.assert(
      fc.property(conversationArb({ minTurns: 3, maxTurns: 3 }), (conversation) => {
        const answers = conversation.messages.filter(
          (m) => m.role === 'assistant' && callIds(m).length === 0,
        );
        expect(answers).toHaveLength(3);
      }),
      { numRuns: 50 },
    );
  });

  it('flags only system messages and user or assistant text messages', () => {
    fc.assert(
      fc.property(conversationArb({ broken: true }), (conversation) => {
        conversation.options.forEach((flags, i) => {
          if (!flags.pinned && !flags.critical) return;
          const message = conversation.messages[i] as Message;
          expect(isToolResultCarrier(message)).toBe(false);
          expect(callIds(message)).toEqual([]);
        });
      }),
      { numRuns: 150 },
    );
  });

  it('writes every listed fact into the conversation', () => {
    fc.assert(
      fc.property(conversationArb(), (conversation) => {
        const text = JSON.stringify(conversation.messages);
        for (const fact of conversation.facts) expect(text).toContain(fact);
      }),
      { numRuns: 100 },
    );
  });

  it('reports reused ids exactly when two call messages share an id', () => {
    let reusing = 0;
    fc.assert(
      fc.property(conversationArb(), (conversation: GeneratedConversation) => {
        const seen = new Set<string>();
        let reused = false;
        for (const message of conversation.messages) {
          const ids = callIds(message);
          expect(new Set(ids).size).toBe(ids.length); // never twice within one message
          if (ids.some((id) => seen.has(id))) reused = true;
          for (const id of ids) seen.add(id);
        }
        expect(conversation.reusesIds).toBe(reused);
        if (reused) reusing += 1;
      }),
      { numRuns: 300 },
    );
    expect(reusing).toBeGreaterThan(10);
  });

  it('draws the features property tests rely on', () => {
    const sample = fc.sample(conversationArb({ images: true }), { numRuns: 400, seed: 42 });
    const count = (test: (c: GeneratedConversation) => boolean) => sample.filter(test).length;
    const openai = sample.filter((c) => c.format === 'openai');
    expect(openai.length).toBeGreaterThan(100);
    expect(sample.length - openai.length).toBeGreaterThan(100);
    // parallel calls, and results out of call order
    expect(count((c) => c.messages.some((m) => callIds(m).length >= 2))).toBeGreaterThan(50);
    const shuffled = openai.filter((c) =>
      c.messages.some((m, i) => {
        const ids = callIds(m);
        return ids.some((id, j) => {
          const answer = c.messages[i + 1 + j];
          return answer?.role === 'tool' && answer.tool_call_id !== id;
        });
      }),
    );
    expect(shuffled.length).toBeGreaterThan(5);
    // images: inline PNGs and URLs
    expect(count((c) => inlinePngs(c.messages).length > 0)).toBeGreaterThan(20);
    expect(count((c) => JSON.stringify(c.messages).includes('https://images.example.com/'))).toBeGreaterThan(
      5,
    );
    // thinking blocks with signatures, text after tool results, mid-conversation system messages
    const anthropicText = sample
      .filter((c) => c.format === 'anthropic')
      .map((c) => JSON.stringify(c.messages));
    expect(
      anthropicText.filter((t) => /"type":"thinking","thinking":"[^"]+","signature":"Eq/.test(t)).length,
    ).toBeGreaterThan(10);
    expect(
      count((c) =>
        c.messages.some((m) => {
          const b = blocks(m);
          return b[0]?.type === 'tool_result' && b.at(-1)?.type === 'text';
        }),
      ),
    ).toBeGreaterThan(2);
    expect(
      count((c) => c.format === 'openai' && c.messages.slice(1).some((m) => m.role === 'system')),
    ).toBeGreaterThan(2);
    // pinned and critical flags
    expect(count((c) => c.options.some((o) => o.pinned))).toBeGreaterThan(20);
    expect(count((c) => c.options.some((o) => o.critical))).toBeGreaterThan(20);
  });

  it('puts real PNG headers in inline images', () => {
    const sample = fc.sample(conversationArb({ images: true }), { numRuns: 200, seed: 7 });
    const pngs = sample.flatMap((c) => inlinePngs(c.messages));
    expect(pngs.length).toBeGreaterThan(20);
    const sizes = new Set<string>();
    for (const png of pngs) {
      const { width, height, crcOk } = readPngSize(png);
      expect(crcOk).toBe(true);
      expect(width).toBeGreaterThanOrEqual(1);
      expect(height).toBeLessThanOrEqual(4096);
      sizes.add(`${width}x${height}`);
    }
    expect(sizes.size).toBeGreaterThan(5);
  });

  it('leaves images out when asked', () => {
    fc.assert(
      fc.property(conversationArb({ images: false }), (conversation) => {
        const text = JSON.stringify(conversation.messages);
        expect(text).not.toContain('image');
      }),
      { numRuns: 100 },
    );
  });

  it('adds huge tool results of 10k–200k characters when asked', () => {
    const sample = fc.sample(conversationArb({ huge: true, minTurns: 3 }), { numRuns: 40, seed: 3 });
    const lengths = sample.flatMap((c) =>
      c.messages.flatMap((m) => {
        if (m.role === 'tool' && typeof m.content === 'string') return [m.content.length];
        return blocks(m)
          .filter((b) => b.type === 'tool_result' && typeof b.content === 'string')
          .map((b) => String(b.content).length);
      }),
    );
    const huge = lengths.filter((n) => n >= 10_000);
    expect(huge.length).toBeGreaterThan(3);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(200_000);
    for (const conversation of sample) {
      expect(referenceProblems(conversation.messages, conversation.format)).toEqual([]);
    }
  });

  it('breaks broken conversations in a way the reference validator sees', () => {
    fc.assert(
      fc.property(conversationArb({ broken: true }), (conversation) => {
        const { breakage, messages, format } = conversation;
        expect(breakage.unfinishedTail || breakage.orphanResult || breakage.interleaved).toBe(true);
        const problems = referenceProblems(messages, format);
        expect(problems.length).toBeGreaterThan(0);
        if (breakage.unfinishedTail) {
          const last = messages.at(-1) as Message;
          expect(last.role).toBe('assistant');
          expect(callIds(last)).toHaveLength(1);
        }
      }),
      { numRuns: 200 },
    );
    const kinds = fc
      .sample(conversationArb({ broken: true }), { numRuns: 200, seed: 11 })
      .map((c) => c.breakage);
    expect(kinds.filter((k) => k.unfinishedTail).length).toBeGreaterThan(20);
    expect(kinds.filter((k) => k.orphanResult).length).toBeGreaterThan(20);
    expect(kinds.filter((k) => k.interleaved).length).toBeGreaterThan(20);
  });
});

// ---------------------------------------------------------------- building blocks

describe('pngBytes', () => {
  it('declares the chosen dimensions with valid CRCs whatever the padding', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.nat(500),
        (w, h, pad) => {
          const base64 = pngBase64(w, h, pad);
          expect(readPngSize(base64)).toEqual({ width: w, height: h, crcOk: true });
          const bytes = pngBytes(w, h, pad);
          expect(bytes.length).toBe(8 + 25 + (12 + pad) + 12);
          expect(bytes.subarray(-8, -4).toString('latin1')).toBe('IEND');
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('hugeText', () => {
  it('is exactly as long as asked and the same for the same seed', () => {
    for (const length of [0, 1, 999, 10_000, 123_457]) {
      expect(hugeText(length, 5)).toHaveLength(length);
    }
    expect(hugeText(20_000, 9)).toBe(hugeText(20_000, 9));
    expect(hugeText(20_000, 9)).not.toBe(hugeText(20_000, 10));
  });

  it('does not collapse into few tokens', () => {
    const text = hugeText(50_000, 1);
    // Real logs cost about one token per 3–4 characters; a repeated phrase would cost far less.
    expect(countTokens(text)).toBeGreaterThan(text.length / 5);
  });
});

describe('seededRandom', () => {
  it('replays the same sequence for a seed and stays in range', () => {
    const a = seededRandom(123);
    const b = seededRandom(123);
    for (let i = 0; i < 1000; i += 1) {
      const x = a.int(-3, 3);
      expect(x).toBe(b.int(-3, 3));
      expect(x).toBeGreaterThanOrEqual(-3);
      expect(x).toBeLessThanOrEqual(3);
    }
  });
});

// ---------------------------------------------------------------- longSessionMessages

describe('longSessionMessages', () => {
  it.each(formats)('gives exactly n valid %s messages for every small n', (format) => {
    for (let n = 0; n <= 120; n += 1) {
      const messages = longSessionMessages(n, format, n * 17 + 1);
      expect(messages).toHaveLength(n);
      expect(referenceProblems(messages, format)).toEqual([]);
    }
  });

  it.each(formats)('is deterministic and has the features of real %s sessions', (format) => {
    const messages = longSessionMessages(5000, format, 99);
    expect(messages).toEqual(longSessionMessages(5000, format, 99));
    expect(messages).not.toEqual(longSessionMessages(5000, format, 100));
    expect(referenceProblems(messages, format)).toEqual([]);
    const seen = new Set<string>();
    let reused = 0;
    let parallel = 0;
    for (const message of messages) {
      const ids = callIds(message);
      if (ids.length > 1) parallel += 1;
      if (ids.some((id) => seen.has(id))) reused += 1;
      for (const id of ids) seen.add(id);
    }
    expect(parallel).toBeGreaterThan(50);
    expect(reused).toBeGreaterThan(20);
    expect(inlinePngs(messages).length).toBeGreaterThan(3);
    const largest = Math.max(...messages.map((m) => JSON.stringify(m).length));
    expect(largest).toBeGreaterThan(10_000);
    if (format === 'anthropic') expect(JSON.stringify(messages)).toContain('"type":"thinking"');
  });

  it('makes 100k messages quickly', () => {
    // CPU time, not wall time: CI saw 6.1 s wall at load 20 (see cpu-time.ts).
    const { result: messages, cpuMs } = withCpuTime(() => longSessionMessages(100_000, 'openai', 1));
    expect(messages).toHaveLength(100_000);
    console.log(`longSessionMessages(100000): ${cpuMs.toFixed(0)} ms of CPU`);
    expect(cpuMs).toBeLessThan(4000); // about 1 s alone
  });
});
