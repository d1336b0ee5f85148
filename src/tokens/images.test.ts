import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withCpuTime } from '../../test/support/cpu-time.js';
import {
  ANTHROPIC_DEFAULT_IMAGE_TOKENS,
  ANTHROPIC_PDF_PAGE_TOKENS,
  anthropicImageTokens,
  countPdfPages,
  GEMINI_DEFAULT_IMAGE_TOKENS,
  GEMINI_PDF_PAGE_TOKENS,
  geminiImageTokens,
  imageInfoFromBase64,
  imageInfoFromBytes,
  imageInfoFromUrl,
  imageTokens,
  OPENAI_DEFAULT_IMAGE_TOKENS,
  openaiImageTokens,
  parseDataUrl,
  pdfTokens,
} from './images.js';
import type { ProviderFamily } from './types.js';

// ---------------------------------------------------------------- minimal valid headers

function u32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
function u16be(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
function u16le(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}
function u24le(n: number): Buffer {
  return Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]);
}

function png(width: number, height: number): Buffer {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 6, 0, 0, 0])]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    u32be(13),
    Buffer.from('IHDR', 'latin1'),
    ihdr,
    u32be(0), // CRC, not checked
  ]);
}

function gif(width: number, height: number): Buffer {
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    u16le(width),
    u16le(height),
    Buffer.from([0xf7, 0, 0]),
  ]);
}

function jpegSegment(marker: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xff, marker]), u16be(payload.length + 2), payload]);
}

/** SOI, a JFIF APP0, optional metadata segments (EXIF-like), DQT, then the frame header. */
function jpeg(width: number, height: number, options: { metadata?: number[]; sof?: number } = {}): Buffer {
  const app0 = jpegSegment(0xe0, Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1'));
  const metadata = (options.metadata ?? []).map((size) => jpegSegment(0xe1, Buffer.alloc(size, 0x45)));
  const dqt = jpegSegment(0xdb, Buffer.alloc(65, 1));
  const sof = jpegSegment(
    options.sof ?? 0xc0,
    Buffer.concat([
      Buffer.from([8]),
      u16be(height),
      u16be(width),
      Buffer.from([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]),
    ]),
  );
  const sos = Buffer.from([0xff, 0xda, 0, 8, 1, 1, 0, 0, 0x3f, 0]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    app0,
    ...metadata,
    dqt,
    sof,
    sos,
    Buffer.from([0xff, 0xd9]),
  ]);
}

function riff(chunk: string, payload: Buffer): Buffer {
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    Buffer.from(chunk, 'latin1'),
    u32le(payload.length),
    payload,
  ]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length), body]);
}
function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function webpLossy(width: number, height: number): Buffer {
  return riff(
    'VP8 ',
    Buffer.concat([
      Buffer.from([0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a]),
      u16le(width),
      u16le(height),
      Buffer.alloc(8),
    ]),
  );
}

function webpLossless(width: number, height: number): Buffer {
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14);
  const packed = Buffer.alloc(4);
  packed.writeUInt32LE(bits >>> 0);
  return riff('VP8L', Buffer.concat([Buffer.from([0x2f]), packed, Buffer.alloc(8)]));
}

function webpExtended(width: number, height: number): Buffer {
  return riff('VP8X', Buffer.concat([Buffer.from([0x10, 0, 0, 0]), u24le(width - 1), u24le(height - 1)]));
}

const b64 = (bytes: Buffer): string => bytes.toString('base64');

// ---------------------------------------------------------------- dimension parsing

describe('image dimensions', () => {
  it('reads PNG, GIF, JPEG and the three WebP flavours', () => {
    expect(imageInfoFromBytes(png(1024, 768))).toEqual({ format: 'png', width: 1024, height: 768 });
    expect(imageInfoFromBytes(gif(320, 200))).toEqual({ format: 'gif', width: 320, height: 200 });
    expect(imageInfoFromBytes(jpeg(1920, 1080))).toEqual({ format: 'jpeg', width: 1920, height: 1080 });
    expect(imageInfoFromBytes(webpLossy(800, 600))).toEqual({ format: 'webp', width: 800, height: 600 });
    expect(imageInfoFromBytes(webpLossless(4000, 3000))).toEqual({
      format: 'webp',
      width: 4000,
      height: 3000,
    });
    expect(imageInfoFromBytes(webpExtended(16383, 9000))).toEqual({
      format: 'webp',
      width: 16383,
      height: 9000,
    });
  });

  it('reads progressive and other SOF variants, and skips fill bytes', () => {
    expect(imageInfoFromBytes(jpeg(640, 480, { sof: 0xc2 }))?.width).toBe(640);
    expect(imageInfoFromBytes(jpeg(640, 480, { sof: 0xc1 }))?.height).toBe(480);
    const withFill = jpeg(33, 44);
    const filled = Buffer.concat([withFill.subarray(0, 2), Buffer.from([0xff, 0xff]), withFill.subarray(2)]);
    // Fill bytes are 0xff runs before a marker: ff ff ff e0 …
    expect(imageInfoFromBytes(filled)).toEqual({ format: 'jpeg', width: 33, height: 44 });
  });

  it('finds a JPEG frame behind large EXIF and ICC segments, in base64', () => {
    const big = jpeg(3024, 4032, { metadata: [65_000, 65_000, 30_000] });
    expect(big.length).toBeGreaterThan(160_000);
    expect(imageInfoFromBase64(b64(big), 'image/jpeg')).toEqual({
      format: 'jpeg',
      width: 3024,
      height: 4032,
    });
  });

  it('reads base64, data URLs and line-wrapped base64 alike', () => {
    const bytes = png(500, 250);
    const data = b64(Buffer.concat([bytes, Buffer.alloc(5000, 7)]));
    expect(imageInfoFromBase64(data, 'image/png')).toEqual({ format: 'png', width: 500, height: 250 });
    expect(imageInfoFromUrl(`data:image/png;base64,${data}`)).toEqual({
      format: 'png',
      width: 500,
      height: 250,
    });
    const wrapped = data.replace(/(.{76})/g, '$1\r\n');
    expect(imageInfoFromBase64(wrapped)).toEqual({ format: 'png', width: 500, height: 250 });
    const jpegWrapped = b64(jpeg(1200, 900, { metadata: [20_000] })).replace(/(.{76})/g, '$1\n');
    expect(imageInfoFromUrl(`data:image/jpeg;base64,${jpegWrapped}`)).toEqual({
      format: 'jpeg',
      width: 1200,
      height: 900,
    });
  });

  it('trusts the bytes over a wrong media type', () => {
    expect(imageInfoFromBase64(b64(gif(10, 20)), 'image/png')).toEqual({
      format: 'gif',
      width: 10,
      height: 20,
    });
  });

  it('returns undefined for what it cannot read', () => {
    expect(imageInfoFromUrl('https://example.com/cat.png')).toBeUndefined();
    expect(imageInfoFromUrl('data:image/svg+xml,%3Csvg%3E%3C/svg%3E')).toBeUndefined();
    expect(imageInfoFromBase64('')).toBeUndefined();
    expect(imageInfoFromBase64(b64(Buffer.from('not an image at all, just text')))).toBeUndefined();
    expect(imageInfoFromBase64(b64(png(100, 100).subarray(0, 12)))).toBeUndefined();
    expect(imageInfoFromBase64(b64(jpeg(100, 100).subarray(0, 30)))).toBeUndefined();
    expect(imageInfoFromBytes(png(0, 100))).toBeUndefined();
  });

  it('parses data URL prefixes', () => {
    expect(parseDataUrl('data:image/PNG;base64,AAAA')).toEqual({
      mediaType: 'image/png',
      base64: true,
      dataStart: 22,
    });
    expect(parseDataUrl('data:text/plain,hello')).toEqual({
      mediaType: 'text/plain',
      base64: false,
      dataStart: 16,
    });
    expect(parseDataUrl('https://x')).toBeUndefined();
  });

  it('reads a 20 MB image without decoding it', () => {
    const data = b64(Buffer.concat([png(7000, 5000), Buffer.alloc(15_000_000, 3)]));
    const { cpuMs } = withCpuTime(() => {
      for (let i = 0; i < 50; i++) expect(imageInfoFromBase64(data)?.width).toBe(7000);
    });
    // Decoding 20 MB of base64 fifty times would take seconds; reading headers takes microseconds.
    expect(cpuMs).toBeLessThan(250);
  });
});

// ---------------------------------------------------------------- cost formulas

describe('image costs', () => {
  it('follows OpenAI’s documented tile examples', () => {
    expect(openaiImageTokens({ width: 1024, height: 1024 }, 'high')).toBe(765);
    expect(openaiImageTokens({ width: 2048, height: 4096 }, 'high')).toBe(1105);
    expect(openaiImageTokens({ width: 4096, height: 8192 }, 'low')).toBe(85);
    expect(openaiImageTokens({ width: 1024, height: 1024 }, 'auto')).toBe(765);
    // Small images are not enlarged: 512×512 is one tile.
    expect(openaiImageTokens({ width: 512, height: 512 }, 'high')).toBe(255);
    expect(openaiImageTokens({ width: 513, height: 500 }, 'high')).toBe(425);
    // 1920×1080 → 1365×768 → 3×2 tiles.
    expect(openaiImageTokens({ width: 1920, height: 1080 }, 'high')).toBe(85 + 6 * 170);
    expect(openaiImageTokens(undefined, 'high')).toBe(OPENAI_DEFAULT_IMAGE_TOKENS);
    expect(OPENAI_DEFAULT_IMAGE_TOKENS).toBe(765);
  });

  it('follows Anthropic’s documented examples and caps', () => {
    expect(anthropicImageTokens({ width: 1000, height: 1000 })).toBe(1334);
    expect(anthropicImageTokens({ width: 200, height: 200 })).toBe(54);
    expect(anthropicImageTokens({ width: 1092, height: 1092 })).toBe(1590);
    // Long edge scaled to 1568, then capped at ~1,600 tokens.
    expect(anthropicImageTokens({ width: 4000, height: 3000 })).toBe(1600);
    // A wide strip: 3000×100 → 1568×52.3 → 110 tokens.
    expect(anthropicImageTokens({ width: 3000, height: 100 })).toBe(110);
    expect(anthropicImageTokens(undefined)).toBe(ANTHROPIC_DEFAULT_IMAGE_TOKENS);
    expect(ANTHROPIC_DEFAULT_IMAGE_TOKENS).toBe(1600);
  });

  it('follows Gemini’s documented rule', () => {
    expect(geminiImageTokens({ width: 384, height: 384 })).toBe(258);
    expect(geminiImageTokens({ width: 100, height: 300 })).toBe(258);
    expect(geminiImageTokens({ width: 960, height: 540 })).toBe(6 * 258);
    expect(geminiImageTokens({ width: 768, height: 768 })).toBe(4 * 258);
    // A thin strip does not explode into thousands of tiles.
    expect(geminiImageTokens({ width: 2000, height: 1 })).toBe(8 * 258);
    expect(geminiImageTokens(undefined)).toBe(GEMINI_DEFAULT_IMAGE_TOKENS);
    expect(GEMINI_DEFAULT_IMAGE_TOKENS).toBe(258);
  });

  it('dispatches by provider', () => {
    const dims = { width: 1000, height: 1000 };
    expect(imageTokens('openai', dims, 'low')).toBe(85);
    expect(imageTokens('anthropic', dims, 'low')).toBe(1334);
    expect(imageTokens('google', dims)).toBe(geminiImageTokens(dims));
  });

  it('never lets base64 length change the cost (same dimensions, any amount of data)', () => {
    const makers = [png, gif, webpLossy, webpLossless, webpExtended, (w: number, h: number) => jpeg(w, h)];
    const providers: ProviderFamily[] = ['openai', 'anthropic', 'google'];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6000 }),
        fc.integer({ min: 1, max: 6000 }),
        fc.integer({ min: 0, max: makers.length - 1 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 255 }),
        (width, height, which, padding, fill) => {
          const make = makers[which];
          if (make === undefined) return;
          const header = make(width, height);
          const small = b64(header);
          const large = b64(Buffer.concat([header, Buffer.alloc(padding, fill)]));
          const a = imageInfoFromBase64(small);
          const b = imageInfoFromBase64(large);
          expect(a).toEqual(b);
          expect(a?.width).toBe(width);
          expect(a?.height).toBe(height);
          for (const provider of providers) {
            expect(imageTokens(provider, b, 'high')).toBe(imageTokens(provider, { width, height }, 'high'));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

// ---------------------------------------------------------------- PDFs

function pdf(body: string): string {
  return Buffer.from(`%PDF-1.4\n${body}\n%%EOF\n`, 'latin1').toString('base64');
}

describe('PDF pages', () => {
  it('counts page objects, not page-tree nodes', () => {
    const doc = pdf(
      [
        '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
        '2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >> endobj',
        '3 0 obj << /Type /Page /Parent 2 0 R >> endobj',
        '4 0 obj << /Type/Page /Parent 2 0 R >> endobj',
        '5 0 obj <</Type /Page/Parent 2 0 R>> endobj',
      ].join('\n'),
    );
    expect(countPdfPages(doc)).toBe(3);
    expect(pdfTokens('anthropic', doc)).toBe(3 * ANTHROPIC_PDF_PAGE_TOKENS);
    expect(pdfTokens('google', doc)).toBe(3 * GEMINI_PDF_PAGE_TOKENS);
  });

  it('falls back to the page tree’s /Count, then to one page', () => {
    expect(countPdfPages(pdf('2 0 obj << /Type /Pages /Kids [9 0 R] /Count 12 >> endobj'))).toBe(12);
    expect(countPdfPages(pdf('2 0 obj << /Count 7 /Type /Pages >> endobj'))).toBe(7);
    expect(countPdfPages(pdf('stream of compressed objects only'))).toBe(1);
    expect(pdfTokens('openai', undefined)).toBe(pdfTokens('openai', pdf('x')));
  });
});
