/**
 * Bedrock Converse conversations with every block kind the ContentBlock union documents that
 * Claude takes: text, image (a PNG with real dimensions), document (PDF bytes, a text source),
 * guardContent, cachePoint, reasoningContent (signed by the fake server, so an edit is caught, and
 * redacted), single and parallel toolUse and their toolResult (text, json, an error status,
 * huge); an optional system prompt with a cache point; now and then a call whose result never
 * came, results split over two user turns, or an id used again later.
 */
import fc from 'fast-check';
import type { Message } from '../../src/messages/types.js';
import { signReasoning } from './fake-bedrock-server.js';

export const BEDROCK_TURNS = [
  'chat',
  'call',
  'parallel',
  'media',
  'reasoning',
  'interrupted',
  'split',
  'huge',
] as const;

type Block = Record<string, unknown>;

function words(n: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`b${(i * 11 + seed * 5) % 89}w${i % 7}`);
  return out.join(' ');
}

/** A PNG header of the given size (enough to read its dimensions). */
function png(width: number, height: number): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b[24] = 8;
  b[25] = 2;
  return b.toString('base64');
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF').toString('base64');

function use(id: string, name: string, seed: number): Block {
  return { toolUse: { toolUseId: id, name, input: { query: words(3, seed), n: seed } } };
}

function result(id: string, seed: number, kind: number, huge: boolean): Block {
  const text = huge ? words(4000, seed) : words(12, seed);
  if (kind === 1)
    return { toolResult: { toolUseId: id, content: [{ json: { rows: [seed, text.slice(0, 40)] } }] } };
  if (kind === 2) return { toolResult: { toolUseId: id, content: [{ text }], status: 'error' } };
  return { toolResult: { toolUseId: id, content: [{ text }], status: 'success' } };
}

function reasoning(seed: number): Block {
  const text = `Plan ${words(8, seed)}`;
  return { reasoningContent: { reasoningText: { text, signature: signReasoning(text) } } };
}

type Turn = (typeof BEDROCK_TURNS)[number];

/** Options: which turn kinds to draw from, and whether ids may be used again later. */
export interface BedrockArbOptions {
  kinds?: readonly Turn[];
  reuseIds?: boolean;
  maxTurns?: number;
  /** Results of 4,000 words in every call turn. */
  huge?: boolean;
  /** Cache points after the system prompt and the results (default true). */
  cachePoints?: boolean;
}

/** Generated Bedrock conversations (see the module note). */
export function bedrockConversationArb(options: BedrockArbOptions = {}): fc.Arbitrary<Message[]> {
  const kinds = options.kinds ?? BEDROCK_TURNS;
  const turn = fc.record({
    kind: fc.constantFrom(...kinds),
    seed: fc.nat(1000),
    n: fc.integer({ min: 1, max: 3 }),
  });
  return fc
    .record({
      system: fc.boolean(),
      turns: fc.array(turn, { minLength: 1, maxLength: options.maxTurns ?? 8 }),
    })
    .map(({ system, turns }) => {
      const out: Array<{ role: string; content: Block[] }> = [];
      const point = options.cachePoints === false ? [] : [{ cachePoint: { type: 'default' } }];
      if (system)
        out.push({ role: 'system', content: [{ text: `You are careful. ${words(20, 1)}` }, ...point] });
      out.push({ role: 'user', content: [{ text: `Task: ${words(10, 2)}` }] });
      let next = 0;
      const id = (seed: number) =>
        options.reuseIds && seed % 3 === 0 ? 'tooluse_again' : `tooluse_${next++}`;
      for (const { kind, seed, n } of turns) {
        switch (kind) {
          case 'chat':
            out.push({ role: 'assistant', content: [{ text: words(15, seed) }] });
            out.push({ role: 'user', content: [{ text: `Next: ${words(8, seed + 1)}` }] });
            break;
          case 'media':
            out.push({
              role: 'user',
              content: [
                { text: `Look at these ${seed}` },
                { image: { format: 'png', source: { bytes: png(200 + seed, 100 + (seed % 50)) } } },
                { document: { name: `Report ${seed}`, format: 'pdf', source: { bytes: PDF } } },
                { document: { name: `Notes ${seed}`, format: 'txt', source: { text: words(30, seed) } } },
                { guardContent: { text: { text: words(5, seed), qualifiers: ['query'] } } },
              ],
            });
            out.push({ role: 'assistant', content: [{ text: words(10, seed) }] });
            break;
          case 'call':
          case 'parallel':
          case 'reasoning':
          case 'interrupted':
          case 'split':
          case 'huge': {
            const count = kind === 'parallel' || kind === 'split' ? n + 1 : 1;
            // An id comes back in a later turn, never twice in one message (Converse wants them distinct there).
            const ids = Array.from({ length: count }, (_, k) => (k === 0 ? id(seed) : `tooluse_${next++}`));
            const head: Block[] =
              kind === 'reasoning'
                ? [reasoning(seed), { reasoningContent: { redactedContent: 'ZW5jcnlwdGVk' } }]
                : [];
            out.push({
              role: 'assistant',
              content: [
                ...head,
                { text: `Checking ${seed}` },
                ...ids.map((i, k) => use(i, `tool_${(seed + k) % 4}`, seed + k)),
              ],
            });
            if (kind === 'interrupted') {
              out.push({ role: 'user', content: [{ text: `Stop, ${words(4, seed)}` }] });
              break;
            }
            const results = ids.map((i, k) =>
              result(i, seed + k, (seed + k) % 3, kind === 'huge' || options.huge === true),
            );
            if (kind === 'split' && results.length > 1) {
              out.push({ role: 'user', content: results.slice(0, 1) });
              out.push({ role: 'user', content: results.slice(1) });
            } else out.push({ role: 'user', content: [...results, ...point] });
            out.push({ role: 'assistant', content: [{ text: words(6, seed) }] });
            out.push({ role: 'user', content: [{ text: `Thanks ${seed}` }] });
            break;
          }
        }
      }
      return out as unknown as Message[];
    });
}
