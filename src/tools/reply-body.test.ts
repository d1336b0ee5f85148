import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withCpuTime } from '../../test/support/cpu-time.js';
import { ConfigurationError } from '../errors.js';
import { ContextManager } from '../manager.js';
import { CountFailedError, createCountClient } from '../measure/count-endpoints.js';
import type { HistoryEntry } from '../messages/types.js';
import { createAnthropicTools, createOpenAITools, type LLMWarning } from './llm.js';
import { ReplyTooLargeError, readReplyText, scrubSecrets } from './reply-body.js';

const KEY = 'sk-hostile-test-key-0123456789';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Streams `total` bytes of a JSON-looking body in 64 KiB chunks, with no Content-Length. */
function streamHuge(total: number): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < total) {
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('error', () => undefined);
    pump();
  };
}

/** A 401 that echoes the request's credentials back, as a careless proxy does. */
const echoHeaders: Handler = (req, res) => {
  res.writeHead(401, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        message: `bad key; you sent Authorization: ${req.headers.authorization ?? ''} x-api-key: ${req.headers['x-api-key'] ?? ''} key=${KEY}`,
      },
      headers: req.headers,
    }),
  );
};

let server: Server;
let handler: Handler = streamHuge(0);
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const entries: HistoryEntry[] = [
  {
    seq: 0,
    message: { role: 'user', content: 'My booking is ZFA04Y, flight HAT136.' },
    metadata: { timestamp: '2024-05-15T15:00:00.000Z' },
  },
  {
    seq: 1,
    message: { role: 'assistant', content: 'Found ZFA04Y.' },
    metadata: { timestamp: '2024-05-15T15:00:00.000Z' },
  },
];

describe('reading replies with a cap', () => {
  it('reads a reply under the cap whole and refuses one over it, by Content-Length or as it streams', async () => {
    expect(await readReplyText(new Response('héllo'), 100)).toBe('héllo');
    await expect(readReplyText(new Response('x'.repeat(101)), 100)).rejects.toBeInstanceOf(
      ReplyTooLargeError,
    );
    const declared = new Response('tiny', { headers: { 'content-length': '999999' } });
    await expect(readReplyText(declared, 100)).rejects.toBeInstanceOf(ReplyTooLargeError);
    expect(await readReplyText(new Response(null), 100)).toBe('');
  });

  it.each([
    ['openai', createOpenAITools],
    ['anthropic', createAnthropicTools],
  ] as const)(
    '%s: a 50 MB summary reply falls back with a warning instead of being read whole',
    async (_name, create) => {
      handler = streamHuge(50 * 1024 * 1024);
      const warnings: LLMWarning[] = [];
      const tools = create({
        baseURL: base,
        apiKey: KEY,
        model: 'm',
        // Below what 200 output tokens may take (issue 31: a reply is also capped by its max_tokens).
        maxReplyBytes: 256 * 1024,
        onWarn: (w) => warnings.push(w),
      });
      const summary = await tools.summarize(entries, { maxTokens: 200 });
      expect(summary).toContain('ZFA04Y');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toMatch(/over the 262144-byte cap/);
      const facts = await tools.extractFacts(entries);
      expect(facts.length).toBeGreaterThan(0);
      expect(warnings).toHaveLength(2);
    },
  );

  it("takes the cap as the manager's llm.maxReplyBytes, refusing a bad one at construction", () => {
    expect(
      () =>
        new ContextManager({
          model: 'gpt-4o',
          llm: { provider: 'openai', baseURL: base, apiKey: KEY, model: 'm', maxReplyBytes: 0 },
        }),
    ).toThrow(/maxReplyBytes/);
    expect(
      () =>
        new ContextManager({
          model: 'gpt-4o',
          llm: { provider: 'anthropic', baseURL: base, apiKey: KEY, model: 'm', maxReplyBytes: 4096 },
        }),
    ).not.toThrow();
  });

  it('refuses a cap that is not a positive whole number at construction', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => createOpenAITools({ baseURL: base, apiKey: KEY, model: 'm', maxReplyBytes: bad })).toThrow(
        ConfigurationError,
      );
    }
  });

  it('a count answer over the cap fails the count (the estimate stands), without the key', async () => {
    handler = streamHuge(20 * 1024 * 1024);
    const client = createCountClient({
      provider: 'anthropic',
      apiKey: KEY,
      baseURL: base,
      maxReplyBytes: 4096,
    });
    const error = await client
      .count({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(CountFailedError);
    expect((error as CountFailedError).reason).toBe('response');
    expect((error as Error).message).toMatch(/4096-byte cap/);
  });
});

describe('no secret in warnings', () => {
  it.each([
    ['openai', createOpenAITools],
    ['anthropic', createAnthropicTools],
  ] as const)(
    '%s: a 401 echoing the headers and the key leaves neither in the llm_fallback warning',
    async (_n, create) => {
      handler = echoHeaders;
      const warnings: LLMWarning[] = [];
      const tools = create({ baseURL: base, apiKey: KEY, model: 'm', onWarn: (w) => warnings.push(w) });
      await tools.summarize(entries, { maxTokens: 200 });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toMatch(/HTTP 401/);
      expect(warnings[0]!.message).not.toContain(KEY);
      expect(warnings[0]!.message).not.toContain('0123456789');
    },
  );

  it('a count endpoint 401 echoing the key does not quote it', async () => {
    handler = echoHeaders;
    const client = createCountClient({ provider: 'google', apiKey: KEY, baseURL: base });
    const error = (await client
      .count({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e)) as Error;
    expect(error).toBeInstanceOf(CountFailedError);
    expect(error.message).toMatch(/HTTP 401/);
    expect(error.message).not.toContain(KEY);
  });

  it('an endpoint URL with credentials is redacted in the warning', async () => {
    handler = echoHeaders;
    const warnings: LLMWarning[] = [];
    const withUser = base.replace('http://', 'http://proxyuser:proxy-pass-99@');
    const tools = createOpenAITools({
      baseURL: withUser,
      apiKey: KEY,
      model: 'm',
      onWarn: (w) => warnings.push(w),
    });
    await tools.summarize(entries, { maxTokens: 200 });
    expect(warnings[0]!.message).not.toContain('proxy-pass-99');
  });

  it('scrubs Authorization, Bearer tokens, x-api-key, key shapes and the configured key', () => {
    const text = [
      'Authorization: Bearer abc.def-ghi',
      '"authorization":"Basic dXNlcjpwYXNz"',
      'x-api-key: my-anthropic-key',
      'x-goog-api-key=AIzaSyA-1234567890abcdefghijk',
      'then Bearer tok_123456 again',
      'openai sk-proj-ABCDEFGHIJKLMNOP',
      'custom key plain-configured-secret here',
    ].join('\n');
    const out = scrubSecrets(text, ['plain-configured-secret']);
    for (const secret of [
      'abc.def-ghi',
      'dXNlcjpwYXNz',
      'my-anthropic-key',
      'AIzaSyA-1234567890abcdefghijk',
      'tok_123456',
      'sk-proj-ABCDEFGHIJKLMNOP',
      'plain-configured-secret',
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
    expect(out).toContain('custom key');
  });

  it('scrubs the configured key in base64 and what is left of it after a split', () => {
    const key = 'ck-live-7f3a9c1e2d4b6a8f0e1c3d5b7a9f2e4c';
    const base64 = (text: string) => Buffer.from(text).toString('base64');
    const cases = [
      // A proxy that echoes the credential it was sent, in base64, at each byte alignment.
      `{"echo":"${base64(key)}"}`,
      `token=${base64(`u:${key}`)};`,
      `seen ${base64(`ab:${key}:x`)} here`,
      `url-safe ${Buffer.from(`??${key}`).toString('base64url')}`,
      // The key cut by a line break, a quote or the end of the quoted body.
      `key ${key.slice(0, 20)}\n${key.slice(20)} rejected`,
      `"${key.slice(0, 12)}" + "${key.slice(12)}"`,
      `invalid key: ${key.slice(0, 30)}`,
    ];
    for (const text of cases) {
      const out = scrubSecrets(text, [key]);
      expect(out, text).toContain('[redacted]');
      for (const piece of [key.slice(0, 12), key.slice(12, 24), key.slice(-12)]) {
        expect(out, text).not.toContain(piece);
      }
      expect(out, text).not.toMatch(/[A-Za-z0-9+/]{24,}/);
    }
    // Prose and other tokens stay.
    expect(scrubSecrets('the request was rejected: quota exceeded for project alpha', [key])).toBe(
      'the request was rejected: quota exceeded for project alpha',
    );
  });

  // Issue 31, item 14: the tail of a key split across two strings (21 of its 41 characters)
  // still appeared when a character a token may hold ('.', '-', '=', '/') stood next to it.
  describe('every run of 8 or more of the key, wherever it was split (property over keys and split points)', () => {
    const KEY_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';
    const keyArb = fc
      .array(fc.constantFrom(...KEY_CHARS), { minLength: 16, maxLength: 120 })
      .map((chars) => chars.join(''));
    // What an error body puts around and between the pieces: quotes, JSON, a line break, and
    // characters a token may hold (so the piece is not a token of its own).
    const around = fc.constantFrom(
      '',
      '"',
      '.',
      '-',
      '=',
      '/',
      'x',
      'key=',
      '","b":"',
      '\n',
      '...',
      ' + ',
      'Z9',
    );
    const grams = (key: string) => Array.from({ length: key.length - 7 }, (_, i) => key.slice(i, i + 8));

    it('leaves no 8 characters of the key together, in plain text', () => {
      fc.assert(
        fc.property(keyArb, fc.nat(), around, around, around, (key, at, before, between, after) => {
          const cut = at % (key.length + 1);
          const text = `error: ${before}${key.slice(0, cut)}${between}${key.slice(cut)}${after} rejected`;
          const out = scrubSecrets(text, [key]);
          for (const gram of grams(key)) expect(out).not.toContain(gram);
          expect(out).toContain('error: ');
          expect(out).toContain(' rejected');
        }),
        { numRuns: 1000 },
      );
    });

    it('leaves no base64 of 12 or more of its characters, at any alignment', () => {
      fc.assert(
        fc.property(keyArb, fc.nat(), fc.nat(), fc.constantFrom('', 'u:', 'ab:', 'x'), (key, a, b, lead) => {
          const from = a % (key.length - 11);
          const to = from + 12 + (b % (key.length - from - 11));
          const piece = key.slice(from, to);
          for (const encoding of ['base64', 'base64url'] as const) {
            const echoed = Buffer.from(lead + piece).toString(encoding);
            const out = scrubSecrets(`seen ${echoed} here`, [key]);
            // What encodes the piece's bytes alone, at this alignment (the first group may mix
            // in the lead's bytes, the last the padding).
            const core = echoed.slice(
              Math.ceil(lead.length / 3) * 4,
              Math.floor((lead.length + piece.length) / 3) * 4,
            );
            for (let i = 0; i + 8 <= core.length; i++) expect(out).not.toContain(core.slice(i, i + 8));
          }
        }),
        { numRuns: 500 },
      );
    });

    it('scrubs a 64 KiB body full of key pieces in well under 50 ms of CPU', () => {
      const key = 'ck-live-7f3a9c1e2d4b6a8f0e1c3d5b7a9f2e4c0';
      const body = `"${key.slice(0, 20)}"."${key.slice(20)}". `.repeat(Math.floor(65536 / 50));
      scrubSecrets(body, [key]);
      const { result, cpuMs } = withCpuTime(() => scrubSecrets(body, [key]));
      expect(result).not.toContain(key.slice(20));
      expect(cpuMs).toBeLessThan(50);
    });
  });
});
