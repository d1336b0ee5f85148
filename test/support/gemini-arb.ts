/**
 * Gemini conversations with every part kind issue 11 lists: text, inlineData (a PNG with real
 * dimensions, a PDF, WAV audio), fileData (a PDF, a video clip), thought parts, a signature alone, thought signatures (sealed by the fake
 * server so an edit is caught), single and parallel function calls with and without ids and their
 * responses, code execution parts; an optional system instruction; now and then a call whose
 * response never came, or responses split over two user contents. Options add huge function
 * responses, call ids reused across turns, or restrict the turn kinds (for conversions).
 */
import fc from 'fast-check';
import type { Message } from '../../src/messages/types.js';
import { hugeWordsArb } from './arbitraries.js';
import { sealPart } from './fake-gemini-server.js';

export const GEMINI_TURNS = [
  'chat',
  'call',
  'parallel',
  'steps',
  'code',
  'media',
  'interrupted',
  'split',
  'narrated',
] as const;

type Part = Record<string, unknown>;
export type GeminiTurn = (typeof GEMINI_TURNS)[number];

/** Options of `geminiConversationArb`. */
export interface GeminiArbOptions {
  /** The turn kinds drawn (default: all of `GEMINI_TURNS`). */
  kinds?: readonly GeminiTurn[];
  /** Now and then a function response of 2,000–20,000 words (default false). */
  huge?: boolean;
  /** Call ids restart in every turn (`fc_0`, `fc_1`…), so later turns reuse earlier ids (default false). */
  reuseIds?: boolean;
}

interface TurnShape {
  size: number;
  /** Words of every function response when above 0. */
  huge: number;
  withIds: boolean;
  reuseIds: boolean;
}

function words(n: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`g${(i * 13 + seed * 7) % 97}w${i % 5}`);
  return out.join(' ');
}

function signed(part: Part): Part {
  return { ...part, thoughtSignature: sealPart(part) };
}

/** A PNG header of the given size (the rest of the file is not needed to read its dimensions). */
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

function wav(seconds: number): string {
  const rate = 8000;
  const b = Buffer.alloc(44);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(36 + rate * seconds, 4);
  b.write('WAVEfmt ', 8, 'latin1');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36, 'latin1');
  b.writeUInt32LE(rate * seconds, 40);
  return b.toString('base64');
}

function call(name: string, t: number, n: number, shape: TurnShape): Part {
  const fn: Part = { name, args: { query: `q${t}.${n}`, limit: n + 1 } };
  if (shape.withIds) fn.id = shape.reuseIds ? `fc_${n}` : `fc_${t}_${n}`;
  return { functionCall: fn };
}

function response(c: Part, text: string): Part {
  const fn = c.functionCall as Part;
  const r: Part = { name: fn.name, response: { content: text } };
  if (fn.id !== undefined) r.id = fn.id;
  return { functionResponse: r };
}

/** A model step: an optional thought, then calls; the first call carries the signature. */
function step(t: number, s: number, count: number, shape: TurnShape, thought: boolean): Part {
  const calls = Array.from({ length: count }, (_, n) =>
    call(n % 2 === 0 ? 'search' : 'lookup', t * 10 + s, n, shape),
  );
  calls[0] = signed(calls[0]!);
  const parts: Part[] = thought ? [{ text: `thinking about ${t}.${s}`, thought: true }, ...calls] : calls;
  return { role: 'model', parts };
}

function answer(t: number, size: number): Part {
  return { role: 'model', parts: [signed({ text: `reply ${t}: ${words(Math.ceil(size / 4), t + 1)}` })] };
}

function turn(kind: GeminiTurn, t: number, shape: TurnShape): Part[] {
  const { size } = shape;
  const user = { role: 'user', parts: [{ text: `ask ${t}: ${words(Math.ceil(size / 4), t)}` }] };
  const long = (k: number) => words(shape.huge > 0 ? shape.huge : size, t + k);
  switch (kind) {
    case 'call': {
      const s = step(t, 0, 1, shape, true);
      const c = (s.parts as Part[]).find((p) => p.functionCall)!;
      return [user, s, { role: 'user', parts: [response(c, long(2))] }, answer(t, size)];
    }
    case 'parallel': {
      const s = step(t, 0, 3, shape, false);
      const calls = (s.parts as Part[]).filter((p) => p.functionCall);
      return [user, s, { role: 'user', parts: calls.map((c, n) => response(c, long(n))) }, answer(t, size)];
    }
    case 'steps': {
      const out: Part[] = [user];
      for (let k = 0; k < 3; k++) {
        const s = step(t, k, 1 + (k % 2), shape, k === 0);
        const calls = (s.parts as Part[]).filter((p) => p.functionCall);
        out.push(s, { role: 'user', parts: calls.map((c, n) => response(c, long(k + n))) });
      }
      out.push(answer(t, size));
      return out;
    }
    case 'code':
      return [
        user,
        {
          role: 'model',
          parts: [
            { text: `running code for ${t}` },
            { executableCode: { language: 'PYTHON', code: `print(${t} * 2)` } },
            { codeExecutionResult: { outcome: 'OUTCOME_OK', output: `${t * 2}\n${long(3)}` } },
            { text: `the answer is ${t * 2}` },
            signed({}),
          ],
        },
      ];
    case 'media':
      return [
        {
          role: 'user',
          parts: [
            { text: `look at these ${t}` },
            { inlineData: { mimeType: 'image/png', data: png(800 + t, 600) } },
            { inlineData: { mimeType: 'audio/wav', data: wav(2) } },
            { fileData: { mimeType: 'application/pdf', fileUri: `https://example.com/doc${t}.pdf` } },
            {
              inlineData: {
                mimeType: 'application/pdf',
                data: Buffer.from(`%PDF-1.4 /Type /Page ${t}`).toString('base64'),
              },
            },
            {
              fileData: { mimeType: 'video/mp4', fileUri: `https://example.com/clip${t}.mp4` },
              videoMetadata: { startOffset: '1s', endOffset: `${2 + (t % 5)}s` },
            },
          ],
        },
        answer(t, size),
      ];
    case 'interrupted': {
      const s = step(t, 0, 2, shape, false);
      const first = (s.parts as Part[]).find((p) => p.functionCall)!;
      // Only the first of two calls was answered before the run stopped; the user went on.
      return [
        user,
        s,
        { role: 'user', parts: [response(first, long(1))] },
        { role: 'user', parts: [{ text: `go on ${t}` }] },
        answer(t, size),
      ];
    }
    case 'split': {
      const s = step(t, 0, 2, shape, false);
      const calls = (s.parts as Part[]).filter((p) => p.functionCall);
      return [
        user,
        s,
        { role: 'user', parts: [response(calls[0]!, long(1))] },
        { role: 'user', parts: [response(calls[1]!, long(2))] },
        answer(t, size),
      ];
    }
    case 'narrated': {
      // Narration stored as its own model content before the call's (issue 31 item 10): the
      // user's text follows the function response in a content of its own.
      const s = step(t, 0, 1, shape, false);
      const c = (s.parts as Part[]).find((p) => p.functionCall)!;
      return [
        user,
        { role: 'model', parts: [{ text: `let me look up ${t}` }] },
        s,
        { role: 'user', parts: [response(c, long(1))] },
        { role: 'user', parts: [{ text: `and then ${t}?` }] },
        answer(t, size),
      ];
    }
    default:
      return [user, answer(t, size)];
  }
}

/** Gemini conversations of 1–7 turns drawn from every turn kind, with sizes that make budgets bite. */
export function geminiConversationArb(options: GeminiArbOptions = {}): fc.Arbitrary<Message[]> {
  const hugeArb = hugeWordsArb(options.huge === true);
  return fc
    .record({
      system: fc.boolean(),
      withIds: fc.boolean(),
      turns: fc.array(
        fc.record({
          kind: fc.constantFrom(...(options.kinds ?? GEMINI_TURNS)),
          size: fc.integer({ min: 4, max: 400 }),
          huge: hugeArb,
        }),
        {
          minLength: 1,
          maxLength: 7,
        },
      ),
    })
    .map(({ system, withIds, turns }) => {
      const out: Part[] = system ? [{ role: 'system', parts: [{ text: 'You are a careful agent.' }] }] : [];
      turns.forEach(({ kind, size, huge }, t) => {
        out.push(...turn(kind, t, { size, huge, withIds, reuseIds: options.reuseIds === true }));
      });
      return out as unknown as Message[];
    });
}
