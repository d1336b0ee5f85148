import fc from 'fast-check';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { encodeChat } from 'gpt-tokenizer/model/gpt-4o';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../errors.js';
import type { AnthropicMessage, Message, OpenAIMessage, ToolDefinition } from '../messages/types.js';
import { getModelInfo } from './catalog.js';
import { createTokenCounter, digitShape, PROVIDER_FRAMING } from './counter.js';
import {
  ANTHROPIC_DEFAULT_IMAGE_TOKENS,
  ANTHROPIC_PDF_PAGE_TOKENS,
  OPENAI_DEFAULT_IMAGE_TOKENS,
} from './images.js';
import type { ModelInfo } from './types.js';

function model(id: string): ModelInfo {
  const info = getModelInfo(id);
  if (info === undefined) throw new Error(`test setup: ${id} missing from the catalog`);
  return info;
}

const gpt4o = createTokenCounter(model('gpt-4o'));
const gpt4 = createTokenCounter(model('gpt-4'));
const claude = createTokenCounter(model('claude-sonnet-4-5'));
const gemini = createTokenCounter(model('gemini-2.5-pro'));

/** Claude's estimate: BPE tokens in cl100k × 1.2, rounded up. */
const claudeText = (n: number): number => Math.ceil(n * 1.2 - 1e-9);

function pngBase64(width: number, height: number, padding = 0): string {
  const header = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0);
  header.writeUInt32BE(13, 8);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(width, 16);
  header.writeUInt32BE(height, 20);
  return Buffer.concat([header, Buffer.alloc(padding, 9)]).toString('base64');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

describe('createTokenCounter: identity', () => {
  it('labels exact and estimated counters and gives them distinct ids', () => {
    expect(gpt4o.id).toBe('openai:o200k_base');
    expect(gpt4.id).toBe('openai:cl100k_base');
    expect(claude.id).toBe('anthropic:cl100k_base*1.2');
    expect(gemini.id).toBe('google:o200k_base*1.1');
    expect(gpt4o.exact).toBe(true);
    expect(claude.exact).toBe(false);
    expect(gemini.exact).toBe(false);
    expect(claude.provider).toBe('anthropic');
    // Same provider and tokenizer, same counts, same id.
    expect(createTokenCounter(model('gpt-4o-mini')).id).toBe(gpt4o.id);
    expect(
      createTokenCounter({
        provider: 'anthropic',
        tokenizer: { kind: 'estimate', encoding: 'cl100k_base', factor: 1.3 },
      }).id,
    ).toBe('anthropic:cl100k_base*1.3');
  });

  it('refuses a tokenizer it cannot use', () => {
    expect(() =>
      createTokenCounter({
        provider: 'openai',
        tokenizer: { kind: 'estimate', encoding: 'o200k_base', factor: 0 },
      }),
    ).toThrow(ConfigurationError);
    expect(() =>
      // @ts-expect-error: not an encoding
      createTokenCounter({ provider: 'openai', tokenizer: { kind: 'exact', encoding: 'r50k_base' } }),
    ).toThrow(/tokenizer.encoding/);
  });
});

describe('createTokenCounter: OpenAI framing', () => {
  it('matches the cookbook (and gpt-tokenizer’s chat encoding) for plain chats', () => {
    const chat = [
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'user', content: 'Fix the failing test in src/date.ts' },
      { role: 'assistant', content: 'Looking at src/date.ts now. The bug is an off-by-one in the month.' },
      { role: 'user', content: 'Thanks! <|endoftext|> is in the log, by the way.' },
    ] as const;
    const ours =
      chat.reduce((sum, m) => sum + gpt4o.countMessage({ ...m }, 'openai'), 0) + gpt4o.requestOverhead;
    // gpt-tokenizer refuses special-token text in chat; the first three messages are clean.
    const clean = chat.slice(0, 3);
    const cleanOurs =
      clean.reduce((sum, m) => sum + gpt4o.countMessage({ ...m }, 'openai'), 0) + gpt4o.requestOverhead;
    expect(cleanOurs).toBe(encodeChat(clean.map((m) => ({ ...m }))).length);
    expect(ours).toBe(cleanOurs + 3 + 1 + o200k(chat[3].content, { disallowedSpecial: new Set() }));
  });

  it('costs 3 + role + content per message, +1 and the name for a name, 3 per request', () => {
    expect(gpt4o.countMessage({ role: 'user', content: 'hello world' }, 'openai')).toBe(3 + 1 + 2);
    expect(gpt4o.countMessage({ role: 'user', content: 'hello world', name: 'alice' }, 'openai')).toBe(
      3 + 1 + 2 + 1 + o200k('alice'),
    );
    expect(gpt4o.requestOverhead).toBe(3);
    expect(gpt4.countMessage({ role: 'user', content: 'hello world' }, 'openai')).toBe(
      3 + 1 + cl100k('hello world'),
    );
  });

  it('counts tool call names and arguments, and tool results', () => {
    const args = '{"path":"src/date.ts","line":42}';
    const call: OpenAIMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: args } },
        { id: 'call_2', type: 'function', function: { name: 'run_tests', arguments: '{}' } },
      ],
    };
    const expected = 3 + 1 + (3 + o200k('read_file') + o200k(args)) + (3 + o200k('run_tests') + o200k('{}'));
    expect(gpt4o.countMessage(call, 'openai')).toBe(expected);
    const result: OpenAIMessage = {
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'export function parse() {}',
    };
    expect(gpt4o.countMessage(result, 'openai')).toBe(
      3 + o200k('tool') + o200k('export function parse() {}'),
    );
  });

  it('counts text parts, refusals and image parts by dimensions', () => {
    const big = pngBase64(1024, 1024);
    const message: OpenAIMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this screenshot?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${big}`, detail: 'high' } },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${big}`, detail: 'low' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      ],
    };
    expect(gpt4o.countMessage(message, 'openai')).toBe(
      3 + 1 + o200k('What is in this screenshot?') + 765 + 85 + OPENAI_DEFAULT_IMAGE_TOKENS,
    );
    const refusal: OpenAIMessage = { role: 'assistant', content: null, refusal: 'I cannot help with that.' };
    expect(gpt4o.countMessage(refusal, 'openai')).toBe(3 + 1 + o200k('I cannot help with that.'));
  });

  it('counts files by pages and audio by duration', () => {
    const pdf = Buffer.from('%PDF-1.4 <</Type /Page>> <</Type /Page>> <</Type /Pages /Count 2>>').toString(
      'base64',
    );
    const withFile: OpenAIMessage = {
      role: 'user',
      content: [
        { type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}`, filename: 'a.pdf' } },
      ],
    };
    expect(gpt4o.countMessage(withFile, 'openai')).toBe(3 + 1 + 2 * 3000 + o200k('a.pdf'));
    // 2 s of 16 kHz mono 16-bit PCM: byte rate 32,000.
    const wav = Buffer.alloc(44 + 64_000);
    wav.write('RIFF', 0, 'latin1');
    wav.write('WAVE', 8, 'latin1');
    wav.writeUInt32LE(32_000, 28);
    const withAudio: OpenAIMessage = {
      role: 'user',
      content: [{ type: 'input_audio', input_audio: { data: wav.toString('base64'), format: 'wav' } }],
    };
    expect(gpt4o.countMessage(withAudio, 'openai')).toBe(3 + 1 + 20);
  });
});

describe('createTokenCounter: Anthropic', () => {
  it('estimates text as cl100k × 1.2, plus turn framing', () => {
    const text = 'Fix the failing test in src/date.ts and explain the root cause briefly.';
    expect(claude.countMessage({ role: 'user', content: text }, 'anthropic')).toBe(
      3 + claudeText(cl100k(text)),
    );
    expect(claude.countText(text)).toBe(claudeText(cl100k(text)));
    // The system prompt is a top-level parameter: no turn markers.
    expect(claude.countMessage({ role: 'system', content: text }, 'anthropic')).toBe(
      claudeText(cl100k(text)),
    );
    expect(claude.requestOverhead).toBe(PROVIDER_FRAMING.anthropic.perRequest);
  });

  it('counts tool_use names and JSON input, and tool results with nested images', () => {
    const input = { command: 'npm test -- src/date.test.ts', timeout: 120 };
    const use: AnthropicMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running the tests.' },
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input },
      ],
    };
    const useText = cl100k('Running the tests.') + cl100k('bash') + cl100k(JSON.stringify(input));
    expect(claude.countMessage(use, 'anthropic')).toBe(3 + 3 + claudeText(useText));

    const result: AnthropicMessage = {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: [
            { type: 'text', text: '1 failing: expected 2024-01-31' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: pngBase64(1000, 1000) },
            },
          ],
        },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok', is_error: false },
      ],
    };
    const resultText = cl100k('1 failing: expected 2024-01-31') + cl100k('ok');
    expect(claude.countMessage(result, 'anthropic')).toBe(3 + 3 + 3 + 1334 + claudeText(resultText));
  });

  it('counts thinking, redacted thinking, image sources and documents', () => {
    const thought = 'The month index is zero-based, so January is 0.';
    const thinking: AnthropicMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: thought, signature: 'c2lnbmF0dXJl' },
        { type: 'redacted_thinking', data: 'A'.repeat(400) },
      ],
    };
    expect(claude.countMessage(thinking, 'anthropic')).toBe(3 + 75 + claudeText(cl100k(thought)));

    const images: AnthropicMessage = {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        { type: 'image', source: { type: 'file', file_id: 'file_123' } },
      ],
    };
    expect(claude.countMessage(images, 'anthropic')).toBe(3 + 2 * ANTHROPIC_DEFAULT_IMAGE_TOKENS);

    const pdf = Buffer.from('%PDF-1.7 <</Type /Page>> <</Type/Page>> <</Type /Page>>').toString('base64');
    const docs: AnthropicMessage = {
      role: 'user',
      content: [
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: pdf },
          title: 'Spec',
        },
        {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: 'Plain text document body.' },
        },
        { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Chunk one.' }] } },
        { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
      ],
    };
    const docText = cl100k('Spec') + cl100k('Plain text document body.') + cl100k('Chunk one.');
    expect(claude.countMessage(docs, 'anthropic')).toBe(
      3 + 4 * ANTHROPIC_PDF_PAGE_TOKENS + claudeText(docText),
    );
  });
});

describe('createTokenCounter: tools', () => {
  const schema = {
    type: 'object',
    properties: { path: { type: 'string', description: 'File to read' } },
    required: ['path'],
  };
  const openaiTool: ToolDefinition = {
    type: 'function',
    function: { name: 'read_file', description: 'Read a file from the workspace', parameters: schema },
  };
  const anthropicTool: ToolDefinition = {
    name: 'read_file',
    description: 'Read a file from the workspace',
    input_schema: schema,
    cache_control: { type: 'ephemeral' },
  };

  it('counts tool definitions as their JSON, plus the provider’s preamble', () => {
    expect(gpt4o.countTools(undefined)).toBe(0);
    expect(gpt4o.countTools([])).toBe(0);
    expect(gpt4o.countTools([openaiTool])).toBe(9 + o200k(JSON.stringify(openaiTool.function)));
    const anthropicJson = JSON.stringify({
      name: 'read_file',
      description: 'Read a file from the workspace',
      input_schema: schema,
    });
    expect(claude.countTools([anthropicTool])).toBe(346 + claudeText(cl100k(anthropicJson)));
    expect(claude.countTools([anthropicTool, anthropicTool])).toBe(
      346 + claudeText(2 * cl100k(anthropicJson)),
    );
  });

  it('measures a request as messages + tools + overhead', async () => {
    const messages: Message[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'List the files.' },
    ];
    const expected =
      gpt4o.countMessage(messages[0] as Message, 'openai') +
      gpt4o.countMessage(messages[1] as Message, 'openai') +
      gpt4o.countTools([openaiTool]) +
      gpt4o.requestOverhead;
    expect(await gpt4o.measure(messages, { tools: [openaiTool] })).toBe(expected);
    expect(await gpt4o.measure([])).toBe(3);
  });
});

describe('createTokenCounter: properties', () => {
  it('is deterministic and never mutates (stored messages are frozen)', () => {
    const message = deepFreeze<AnthropicMessage>({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Calling the tool.' },
        { type: 'tool_use', id: 't1', name: 'grep', input: { pattern: 'TODO', paths: ['src', 'test'] } },
      ],
    });
    const first = claude.countMessage(message, 'anthropic');
    expect(claude.countMessage(message, 'anthropic')).toBe(first);
    expect(gemini.countMessage(message, 'anthropic')).toBeGreaterThan(0);
  });

  it('costs an image by its dimensions, whatever the length of its base64', () => {
    const counters = [gpt4o, claude, gemini];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (width, height, padding) => {
          const small = pngBase64(width, height);
          const large = pngBase64(width, height, padding);
          for (const counter of counters) {
            const a = counter.countMessage(
              {
                role: 'user',
                content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${small}` } }],
              },
              'openai',
            );
            const b = counter.countMessage(
              {
                role: 'user',
                content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${large}` } }],
              },
              'openai',
            );
            expect(b).toBe(a);
            const c = counter.countMessage(
              {
                role: 'user',
                content: [
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: large } },
                ],
              },
              'anthropic',
            );
            expect(c).toBe(
              counter.countMessage(
                {
                  role: 'user',
                  content: [
                    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: small } },
                  ],
                },
                'anthropic',
              ),
            );
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('scales estimates up, never down, and sums consistently', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const bpe = cl100k(text, { disallowedSpecial: new Set() });
        expect(claude.countText(text)).toBe(claudeText(bpe));
        expect(claude.countText(text)).toBeGreaterThanOrEqual(bpe);
        expect(gpt4o.countText(text)).toBe(o200k(text, { disallowedSpecial: new Set() }));
      }),
      { numRuns: 100 },
    );
  });
});

describe('createTokenCounter: short texts by shape', () => {
  const encoders = { o200k_base: o200k, cl100k_base: cl100k } as const;
  const ordinary = { disallowedSpecial: new Set<string>() };

  it('rests on every 1–3 digit piece being one token in both encodings', () => {
    for (const [name, count] of Object.entries(encoders)) {
      const notOne: string[] = [];
      for (let digits = 1; digits <= 3; digits++) {
        for (let n = 0; n < 10 ** digits; n++) {
          const piece = String(n).padStart(digits, '0');
          if (count(piece, ordinary) !== 1) notOne.push(piece);
        }
      }
      expect(notOne, name).toEqual([]);
    }
  });

  it('gives a text with other digits the count of the text itself', () => {
    const digitText = fc.stringMatching(/^[a-z0-9 .,:$€_\-/\n[\]]{0,60}$/);
    fc.assert(
      fc.property(digitText, (text) => {
        expect(digitShape(text)).toMatch(/^[^1-9]*$/);
        for (const count of Object.values(encoders)) {
          expect(count(digitShape(text), ordinary)).toBe(count(text, ordinary));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('counts exactly when a cached shape comes back with other numbers', () => {
    const fresh = () => createTokenCounter(model('gpt-4o'));
    const counter = fresh();
    const texts = [
      '[contextkit: result of read_file cleared, about 1234 tokens]',
      '[contextkit: result of read_file cleared, about 9 tokens]',
      '[contextkit: result of read_file cleared, about 9876 tokens]',
      '\n- date: 2024-05-20',
      '\n- date: 1999-12-31',
      'Tests: 3 failed, 188 passed (1038ms)',
      'Tests: 0 failed, 999 passed (7ms)',
    ];
    for (const text of texts) {
      expect(counter.countText(text)).toBe(o200k(text, ordinary));
      expect(counter.countText(text)).toBe(fresh().countText(text));
    }
    const claudeCounter = createTokenCounter(model('claude-sonnet-4-5'));
    for (const text of texts) expect(claudeCounter.countText(text)).toBe(claudeText(cl100k(text, ordinary)));
  });
});
