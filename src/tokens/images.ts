/**
 * What images and documents cost, from what the provider bills them by: pixel dimensions for
 * images, pages for PDFs. The length of the base64 text is never used: a 4 KB PNG and a 4 MB
 * PNG of the same size cost the same, and counting base64 as text overstates an image by
 * orders of magnitude.
 *
 * Formulas as documented by the providers (checked 2026-11-22 against the OpenAI vision guide,
 * Anthropic's vision and PDF-support pages and the Gemini image-understanding and token pages).
 */
import type { ProviderFamily } from './types.js';

/** Pixel size of an image, as read from its header. */
export interface ImageDimensions {
  width: number;
  height: number;
}

/** The image formats all three providers accept, which are the ones whose headers we read. */
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** Dimensions plus the format the bytes turned out to be (the declared media type can be wrong). */
export interface ImageInfo extends ImageDimensions {
  format: ImageFormat;
}

/** OpenAI `detail`: `auto` is billed like `high` for the tile models. */
export type ImageDetail = 'low' | 'high' | 'auto';

// ---------------------------------------------------------------- flat defaults

/**
 * OpenAI images of unknown size (URLs, file ids): a 1024×1024 image at high detail, which is
 * 85 + 4 × 170 = 765 tokens. Most images sent by agents (screenshots, photos) land at or above it.
 */
export const OPENAI_DEFAULT_IMAGE_TOKENS = 765;
/** Anthropic images of unknown size: the ~1,600-token ceiling every image is scaled under. */
export const ANTHROPIC_DEFAULT_IMAGE_TOKENS = 1600;
/** Gemini images of unknown size: one 768×768 tile, 258 tokens (also the cost of any small image). */
export const GEMINI_DEFAULT_IMAGE_TOKENS = 258;

/**
 * One PDF page sent to Claude. Anthropic documents 1,500–3,000 text tokens per page "depending
 * on content density", plus the page rendered as an image, billed like any image (up to ~1,600).
 * We take 3,000: the low end of the text range plus a page image a little under the ceiling. It
 * is deliberately not the minimum, since an undercount is what makes a request fail.
 */
export const ANTHROPIC_PDF_PAGE_TOKENS = 3000;
/**
 * One PDF page sent to OpenAI as a `file` part. OpenAI puts both the extracted text and an image
 * of each page into context but publishes no per-page figure; we use the same 3,000 as for Claude.
 */
export const OPENAI_PDF_PAGE_TOKENS = 3000;
/** One PDF page sent to Gemini: documented as 258 tokens per page. */
export const GEMINI_PDF_PAGE_TOKENS = 258;

// ---------------------------------------------------------------- reading headers from base64

/**
 * Bytes of the image we may read while looking for dimensions. PNG, GIF and WebP keep them in
 * the first 30 bytes; a JPEG's SOF can sit behind EXIF and ICC segments, which we skip by their
 * lengths, reading only each segment's 4-byte header. This bounds how far we walk.
 */
const JPEG_MAX_SCAN_BYTES = 4 * 1024 * 1024;
const JPEG_MAX_SEGMENTS = 512;
/** Bytes decoded up front: enough for PNG/GIF/WebP and for a JPEG with no large APP segments. */
const HEAD_BYTES = 3 * 1024;
/** Base64 characters scanned for whitespace before we decide the string needs cleaning. */
const CLEAN_PREFIX_CHARS = 8 * 1024 * 1024;

/**
 * Random access to the bytes of a base64 string without decoding all of it: byte `i` lives in
 * the 4-character group `floor(i / 3)`, so any byte range maps to a small slice of the text.
 */
class Base64Bytes {
  private readonly text: string;
  /** Where the base64 payload starts in `text` (after a data URL's comma, say). */
  private readonly origin: number;
  /** Decoded bytes cached from the start, grown on demand (most reads fall inside it). */
  private head: Buffer = Buffer.alloc(0);

  constructor(text: string, origin = 0) {
    // Line-wrapped (MIME) base64 breaks the 4-chars-per-3-bytes mapping; strip whitespace from
    // a bounded prefix only, since we never read far into the data.
    const probe = text.slice(origin, origin + 4096);
    if (/\s/.test(probe)) {
      this.text = text.slice(origin, origin + CLEAN_PREFIX_CHARS).replace(/\s+/g, '');
      this.origin = 0;
    } else {
      this.text = text;
      this.origin = origin;
    }
  }

  /** Bytes `[start, start + length)`, shorter if the data ends first. */
  read(start: number, length: number): Buffer {
    const end = start + length;
    if (end <= this.head.length) return this.head.subarray(start, end);
    if (start === 0 || end <= HEAD_BYTES) {
      this.head = this.decode(0, Math.max(end, HEAD_BYTES));
      return this.head.subarray(start, end);
    }
    const firstGroup = Math.floor(start / 3);
    const bytes = this.decode(firstGroup * 3, end - firstGroup * 3);
    const offset = start - firstGroup * 3;
    return bytes.subarray(offset, offset + length);
  }

  /** Decodes from a byte offset that is a multiple of 3, so it starts on a 4-character group. */
  private decode(byteStart: number, byteLength: number): Buffer {
    const charStart = this.origin + (byteStart / 3) * 4;
    const charEnd = this.origin + Math.ceil((byteStart + byteLength) / 3) * 4;
    if (charStart >= this.text.length) return Buffer.alloc(0);
    return Buffer.from(this.text.slice(charStart, charEnd), 'base64');
  }
}

/** A byte source that can be a Buffer (tests, callers with raw bytes) or base64 text. */
interface ByteSource {
  read(start: number, length: number): Uint8Array;
}

function bytesSource(bytes: Uint8Array): ByteSource {
  return { read: (start, length) => bytes.subarray(start, start + length) };
}

function u16be(b: Uint8Array, i: number): number {
  return ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
}
function u16le(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
}
function u24le(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8) | ((b[i + 2] ?? 0) << 16);
}
function u32be(b: Uint8Array, i: number): number {
  return (
    ((b[i] ?? 0) * 0x1000000 + (((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0))) >>> 0
  );
}
function ascii(b: Uint8Array, start: number, length: number): string {
  let s = '';
  for (let i = start; i < start + length && i < b.length; i++) s += String.fromCharCode(b[i] ?? 0);
  return s;
}

function valid(format: ImageFormat, width: number, height: number): ImageInfo | undefined {
  return width > 0 && height > 0 ? { format, width, height } : undefined;
}

function readPng(head: Uint8Array): ImageInfo | undefined {
  // Signature (8 bytes), then the IHDR chunk: length (4), "IHDR" (4), width (4), height (4).
  if (head.length < 24 || ascii(head, 12, 4) !== 'IHDR') return undefined;
  return valid('png', u32be(head, 16), u32be(head, 20));
}

function readGif(head: Uint8Array): ImageInfo | undefined {
  // "GIF87a"/"GIF89a", then the logical screen width and height, little-endian.
  if (head.length < 10) return undefined;
  return valid('gif', u16le(head, 6), u16le(head, 8));
}

function readWebp(head: Uint8Array): ImageInfo | undefined {
  // "RIFF" size "WEBP", then the first chunk's fourcc at byte 12 and its payload at 20.
  if (head.length < 30) return undefined;
  const chunk = ascii(head, 12, 4);
  if (chunk === 'VP8 ') {
    // Lossy: 3-byte frame tag, start code 9d 01 2a, then 14-bit width and height.
    if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return undefined;
    return valid('webp', u16le(head, 26) & 0x3fff, u16le(head, 28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    // Lossless: signature 0x2f, then width-1 and height-1 packed in 14 bits each.
    if (head[20] !== 0x2f) return undefined;
    const b1 = head[21] ?? 0;
    const b2 = head[22] ?? 0;
    const b3 = head[23] ?? 0;
    const b4 = head[24] ?? 0;
    const width = 1 + (((b2 & 0x3f) << 8) | b1);
    const height = 1 + (((b4 & 0x0f) << 10) | (b3 << 2) | ((b2 & 0xc0) >> 6));
    return valid('webp', width, height);
  }
  if (chunk === 'VP8X') {
    // Extended: flags (4 bytes), then canvas width-1 and height-1 as 24-bit little-endian.
    return valid('webp', 1 + u24le(head, 24), 1 + u24le(head, 27));
  }
  return undefined;
}

/** Start-of-frame markers that carry the frame size (all SOFn except DHT, JPG and DAC). */
function isSofMarker(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function readJpeg(source: ByteSource): ImageInfo | undefined {
  let offset = 2; // after SOI (ff d8)
  for (let segments = 0; segments < JPEG_MAX_SEGMENTS && offset < JPEG_MAX_SCAN_BYTES; segments++) {
    const header = source.read(offset, 9);
    if (header.length < 4) return undefined;
    if (header[0] !== 0xff) return undefined;
    const marker = header[1] ?? 0;
    if (marker === 0xff) {
      offset += 1; // fill byte before a marker
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or start of scan: no SOF seen
    if (isSofMarker(marker)) {
      if (header.length < 9) return undefined;
      // length (2), precision (1), height (2), width (2)
      return valid('jpeg', u16be(header, 7), u16be(header, 5));
    }
    const length = u16be(header, 2);
    if (length < 2) return undefined;
    offset += 2 + length;
  }
  return undefined;
}

function readImage(source: ByteSource): ImageInfo | undefined {
  const head = source.read(0, 32);
  if (head.length < 4) return undefined;
  if (head[0] === 0x89 && ascii(head, 1, 3) === 'PNG') return readPng(head);
  if (head[0] === 0xff && head[1] === 0xd8) return readJpeg(source);
  if (ascii(head, 0, 4) === 'GIF8') return readGif(head);
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 4) === 'WEBP') return readWebp(head);
  return undefined;
}

/**
 * Format and dimensions from raw image bytes (PNG, JPEG, GIF, WebP), or undefined for anything
 * else or a truncated header. The format is sniffed from the bytes, not taken on trust.
 */
export function imageInfoFromBytes(bytes: Uint8Array): ImageInfo | undefined {
  return readImage(bytesSource(bytes));
}

/**
 * Format and dimensions from base64 image data, decoding only the header bytes (a few KB at
 * most, plus 4-byte segment headers for a JPEG with large metadata), never the whole image.
 * `mediaType` is accepted for symmetry with the message formats but the bytes decide.
 */
export function imageInfoFromBase64(data: string, _mediaType?: string): ImageInfo | undefined {
  if (data.length < 8) return undefined;
  return readImage(new Base64Bytes(data));
}

/** A data URL split into its media type and payload, without copying the payload. */
export interface ParsedDataUrl {
  mediaType: string;
  base64: boolean;
  /** Offset of the payload in the URL (just after the comma). */
  dataStart: number;
}

/** Parses the `data:[<media type>][;base64],` prefix; undefined for anything that is not a data URL. */
export function parseDataUrl(url: string): ParsedDataUrl | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',', 5);
  if (comma < 0) return undefined;
  const meta = url.slice(5, comma);
  const params = meta.split(';');
  return {
    mediaType: (params[0] ?? '').trim().toLowerCase(),
    base64: params.slice(1).some((p) => p.trim().toLowerCase() === 'base64'),
    dataStart: comma + 1,
  };
}

/**
 * Dimensions of an image given as a URL: read from the header of a base64 data URL; undefined
 * for http(s) URLs (we never fetch) and for non-base64 data URLs.
 */
export function imageInfoFromUrl(url: string): ImageInfo | undefined {
  const parsed = parseDataUrl(url);
  if (parsed === undefined || !parsed.base64 || url.length - parsed.dataStart < 8) return undefined;
  return readImage(new Base64Bytes(url, parsed.dataStart));
}

// ---------------------------------------------------------------- cost formulas

/**
 * OpenAI's tile formula (GPT-4o, GPT-4.1, o-series and GPT-5 tile accounting as documented in
 * the vision guide): `low` is a flat 85; `high`/`auto` scale the image to fit 2048×2048, then
 * down so the shortest side is 768 (images already smaller are not enlarged), then cost 170 per
 * 512-px tile plus 85. 1024×1024 → 765; 2048×4096 → 1105.
 */
export function openaiImageTokens(dims: ImageDimensions | undefined, detail: ImageDetail = 'auto'): number {
  if (detail === 'low') return 85;
  if (dims === undefined || !(dims.width > 0 && dims.height > 0)) return OPENAI_DEFAULT_IMAGE_TOKENS;
  let { width, height } = dims;
  const longest = Math.max(width, height);
  if (longest > 2048) {
    width = Math.floor((width * 2048) / longest);
    height = Math.floor((height * 2048) / longest);
  }
  const shortest = Math.min(width, height);
  if (shortest > 768) {
    width = Math.floor((width * 768) / shortest);
    height = Math.floor((height * 768) / shortest);
  }
  const tiles = Math.ceil(width / 512) * Math.ceil(height / 512);
  return 85 + 170 * Math.max(1, tiles);
}

/** Claude scales an image so its long edge is at most this many pixels. */
const ANTHROPIC_MAX_EDGE = 1568;
/** …and so it costs at most ~1,600 tokens (1,200,000 px at 750 px per token). */
const ANTHROPIC_MAX_TOKENS = 1600;
const ANTHROPIC_PIXELS_PER_TOKEN = 750;

/**
 * Anthropic's formula: tokens ≈ width × height / 750, after Claude scales the image (aspect
 * kept) so the long edge is ≤ 1568 px and the cost ≤ ~1,600 tokens (≈1.2 megapixels; the
 * documented 1092×1092 costs ~1,590). 1000×1000 → 1334.
 */
export function anthropicImageTokens(dims: ImageDimensions | undefined): number {
  if (dims === undefined || !(dims.width > 0 && dims.height > 0)) return ANTHROPIC_DEFAULT_IMAGE_TOKENS;
  let { width, height } = dims;
  const longest = Math.max(width, height);
  if (longest > ANTHROPIC_MAX_EDGE) {
    const scale = ANTHROPIC_MAX_EDGE / longest;
    width *= scale;
    height *= scale;
  }
  const tokens = Math.ceil((width * height) / ANTHROPIC_PIXELS_PER_TOKEN - 1e-9);
  return Math.max(1, Math.min(tokens, ANTHROPIC_MAX_TOKENS));
}

const GEMINI_TILE_TOKENS = 258;
/**
 * Smallest crop unit: an image whose short side is just over 384 px gets floor(384 / 1.5) = 256.
 * Without the floor a 2000×1 strip would be costed as 2000 tiles.
 */
const GEMINI_MIN_CROP_UNIT = 256;

/**
 * Gemini's documented rule (2.0 and later): 258 tokens when both sides are ≤ 384 px; otherwise
 * the image is cut into 768×768 tiles of 258 tokens each, where the crop unit is
 * floor(min(width, height) / 1.5) and the tile count is ceil(width / unit) × ceil(height / unit).
 * The documented example, 960×540, has a unit of 360 and 3 × 2 = 6 tiles → 1548.
 */
export function geminiImageTokens(dims: ImageDimensions | undefined): number {
  if (dims === undefined || !(dims.width > 0 && dims.height > 0)) return GEMINI_DEFAULT_IMAGE_TOKENS;
  const { width, height } = dims;
  if (width <= 384 && height <= 384) return GEMINI_TILE_TOKENS;
  const unit = Math.max(GEMINI_MIN_CROP_UNIT, Math.floor((Math.min(width, height) * 2) / 3));
  return Math.ceil(width / unit) * Math.ceil(height / unit) * GEMINI_TILE_TOKENS;
}

/**
 * Tokens one image costs with a provider, from its dimensions (undefined when unknown, which
 * gives the provider's documented flat default). `detail` matters to OpenAI only.
 */
export function imageTokens(
  provider: ProviderFamily,
  dims: ImageDimensions | undefined,
  detail: ImageDetail = 'auto',
): number {
  switch (provider) {
    case 'openai':
      return openaiImageTokens(dims, detail);
    case 'anthropic':
      return anthropicImageTokens(dims);
    case 'google':
      return geminiImageTokens(dims);
  }
}

// ---------------------------------------------------------------- PDFs

/** `/Type /Page` and `/Type/Page`, but not `/Type /Pages` (the page-tree nodes). */
const PDF_PAGE_OBJECT = /\/Type\s*\/Page(?![A-Za-z])/g;
const PDF_PAGE_COUNT = /\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]*?\/Type\s*\/Pages\b/g;

/**
 * Pages of a base64 PDF. Counts page objects (`/Type /Page`, not `/Pages`); when those sit in
 * compressed object streams (PDF 1.5+) and none are visible, falls back to the largest `/Count`
 * of a visible page-tree node, and to 1 when nothing is readable, since a document is at least
 * one page. The data has to be decoded in full: page objects can be anywhere in the file.
 */
export function countPdfPages(base64: string): number {
  const text = Buffer.from(base64, 'base64').toString('latin1');
  let pages = 0;
  PDF_PAGE_OBJECT.lastIndex = 0;
  while (PDF_PAGE_OBJECT.exec(text) !== null) pages++;
  if (pages > 0) return pages;
  let fromTree = 0;
  PDF_PAGE_COUNT.lastIndex = 0;
  for (let m = PDF_PAGE_COUNT.exec(text); m !== null; m = PDF_PAGE_COUNT.exec(text)) {
    const n = Number(m[1] ?? m[2]);
    if (n > fromTree) fromTree = n;
  }
  return Math.max(1, fromTree);
}

/**
 * Whether an image costs the same whatever its size at `detail` with `provider` (OpenAI's low
 * detail), so its header need not be read.
 */
export function flatImageCost(provider: ProviderFamily, detail: ImageDetail | undefined): boolean {
  return (
    detail === 'low' &&
    imageTokens(provider, { width: 1, height: 1 }, detail) ===
      imageTokens(provider, { width: 4096, height: 4096 }, detail)
  );
}

/** Tokens one PDF page costs with a provider (see the per-provider constants for the sources). */
export function pdfPageTokens(provider: ProviderFamily): number {
  switch (provider) {
    case 'openai':
      return OPENAI_PDF_PAGE_TOKENS;
    case 'anthropic':
      return ANTHROPIC_PDF_PAGE_TOKENS;
    case 'google':
      return GEMINI_PDF_PAGE_TOKENS;
  }
}

/**
 * Tokens a base64 PDF costs: its pages times the provider's per-page figure. A document of
 * unknown length (a URL or file id) is costed as one page; pass `undefined` for that.
 */
export function pdfTokens(provider: ProviderFamily, base64: string | undefined): number {
  const pages = base64 === undefined ? 1 : countPdfPages(base64);
  return pages * pdfPageTokens(provider);
}
