/**
 * What Gemini bills for media given inline (`inlineData`) or by URI (`fileData`), following its
 * token documentation (ai.google.dev/gemini-api/docs/tokens): images by their tiles (258 tokens
 * per 768×768 tile, from the dimensions read off the image header), PDF pages at 258 each, audio
 * at 32 tokens a second and video at 263 tokens a second. A duration is read from a WAV header or
 * from the part's `videoMetadata` offsets; where nothing gives it, one minute is assumed. The
 * size of the base64 data is never taken for a count.
 */

import { imageInfoFromBase64, imageTokens, pdfTokens } from '../../tokens/images.js';
import type { ProviderFamily } from '../../tokens/types.js';

/** Gemini's audio rate. */
export const GEMINI_AUDIO_TOKENS_PER_SECOND = 32;
/** Gemini's video rate (frames at 1 fps plus the audio track, default resolution). */
export const GEMINI_VIDEO_TOKENS_PER_SECOND = 263;
/** The duration assumed for audio or video whose length nothing tells. */
export const GEMINI_DEFAULT_MEDIA_SECONDS = 60;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Seconds of a protobuf Duration string (`"12.5s"`) or a number; undefined otherwise. */
function seconds(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Number(match[1]) : undefined;
}

/** Seconds a video clip covers, from `videoMetadata.startOffset` / `endOffset` when both are given. */
function clipSeconds(videoMetadata: unknown): number | undefined {
  if (!isRecord(videoMetadata)) return undefined;
  const start = seconds(videoMetadata.startOffset) ?? 0;
  const end = seconds(videoMetadata.endOffset);
  return end === undefined || end < start ? undefined : end - start;
}

/** Seconds of WAV audio from its header (data size over byte rate); undefined for other audio. */
function wavSeconds(base64: string): number | undefined {
  const header = Buffer.from(base64.slice(0, 64), 'base64');
  if (header.length < 44 || header.toString('latin1', 0, 4) !== 'RIFF') return undefined;
  if (header.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  const byteRate = header.readUInt32LE(28);
  const dataBytes = header.readUInt32LE(40);
  return byteRate > 0 ? dataBytes / byteRate : undefined;
}

/**
 * Tokens of one media part: `mimeType`, the base64 `data` when inline (undefined for a URI), and
 * the part's `videoMetadata`. Images and PDFs are billed as `provider` bills them.
 */
export function geminiMediaTokens(
  provider: ProviderFamily,
  mimeType: string,
  data: string | undefined,
  videoMetadata?: unknown,
): number {
  const type = mimeType.toLowerCase();
  if (type.startsWith('image/'))
    return imageTokens(provider, data === undefined ? undefined : imageInfoFromBase64(data, type));
  if (type === 'application/pdf') return pdfTokens(provider, data);
  if (type.startsWith('audio/')) {
    const known =
      data !== undefined && (type === 'audio/wav' || type === 'audio/x-wav') ? wavSeconds(data) : undefined;
    return Math.ceil((known ?? GEMINI_DEFAULT_MEDIA_SECONDS) * GEMINI_AUDIO_TOKENS_PER_SECOND);
  }
  if (type.startsWith('video/'))
    return Math.ceil(
      (clipSeconds(videoMetadata) ?? GEMINI_DEFAULT_MEDIA_SECONDS) * GEMINI_VIDEO_TOKENS_PER_SECOND,
    );
  // Text-like files (text/plain, code, CSV) are read as text: one page's worth when out of sight.
  return pdfTokens(provider, undefined);
}
