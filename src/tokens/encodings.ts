import { createRequire } from 'node:module';
import type { countTokens as GptCountTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { boundedCounter } from './bounded-count.js';
import type { EncodingName } from './types.js';

/** Counts the BPE tokens of a string in one encoding, with special-token text treated as plain text. */
export type TextTokenCounter = (text: string) => number;

/**
 * Each encoding's rank table costs real start-up time (measured on Node 20: o200k_base ~170 ms,
 * cl100k_base ~85 ms), and most processes need only one of them (or none: `validate` and
 * `inspect --json` never count). A static import would pay for both on every start, so each one
 * is loaded on first use through the CommonJS build, which `require` can load synchronously;
 * counting must stay synchronous for `TokenCounter.countMessage`.
 */
const ENCODING_MODULES: Readonly<Record<EncodingName, string>> = {
  o200k_base: 'gpt-tokenizer/encoding/o200k_base',
  cl100k_base: 'gpt-tokenizer/encoding/cl100k_base',
};

/**
 * An empty `disallowedSpecial` set makes gpt-tokenizer neither throw on `<|endoftext|>` and its
 * kin nor encode them as control tokens: the text is split like any other, which is what the
 * providers do with user-supplied text (tiktoken's `encode_ordinary`). It also skips the
 * special-token regex scan the default options run over every input, so counting this way is no
 * slower than calling gpt-tokenizer with its defaults.
 */
const ORDINARY_TEXT = { disallowedSpecial: new Set<string>() };

const loaded = new Map<EncodingName, TextTokenCounter>();
const requireFromHere = createRequire(import.meta.url);

interface EncodingModule {
  countTokens: typeof GptCountTokens;
  setMergeCacheSize(size: number): void;
  clearMergeCache(): void;
}

function isEncodingModule(value: unknown): value is EncodingModule {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'countTokens') === 'function' &&
    typeof Reflect.get(value, 'setMergeCacheSize') === 'function' &&
    typeof Reflect.get(value, 'clearMergeCache') === 'function'
  );
}

/**
 * Entries of gpt-tokenizer's merge cache (its default, set here so the bound below holds). The
 * cache is a `Map` evicting its oldest key once full, and a `Map` that keeps deleting its first
 * key walks the holes left by earlier deletes: once a process has counted that many distinct
 * pre-tokens, every new one costs a walk of up to this many entries (measured on Node 20: 200k
 * ordinary characters, 0.25 s fresh, took 8.3 s; 1.6 M characters of random base64, 6.7 s with
 * the cache, 2.3 s without; smaller caches only shorten the walk). So the cache is never let
 * fill: it is cleared before a call could fill it (a call adds at most one entry per
 * character). Texts over `ONE_CALL_CHARS` are counted in chunks (bounded-count.ts), so a call
 * adds at most about `CHUNK_CHARS` entries, and ordinary text, whose words hit the cache, clears
 * it rarely.
 */
const MERGE_CACHE_ENTRIES = 100_000;

/**
 * How many entries the encoder's merge cache holds. gpt-tokenizer does not say, so this reads
 * its (private) map; if a version hides it, every character counted since the last clear is
 * taken for an entry, which clears more often but keeps the bound.
 */
function mergeCacheSize(mod: EncodingModule): () => number | undefined {
  const core: unknown = Reflect.get(Reflect.get(mod, 'default') ?? {}, 'bytePairEncodingCoreProcessor');
  const cache: unknown =
    typeof core === 'object' && core !== null ? Reflect.get(core, 'mergeCache') : undefined;
  return cache instanceof Map ? () => cache.size : () => undefined;
}

function loadEncoding(encoding: EncodingName): TextTokenCounter {
  const specifier = ENCODING_MODULES[encoding];
  if (specifier === undefined) throw new TypeError(`unknown encoding ${JSON.stringify(encoding)}`);
  const mod: unknown = requireFromHere(specifier);
  if (!isEncodingModule(mod))
    throw new Error(`${specifier} does not export countTokens (is gpt-tokenizer v4 installed?)`);
  const { countTokens, clearMergeCache } = mod;
  mod.setMergeCacheSize(MERGE_CACHE_ENTRIES);
  const cached = mergeCacheSize(mod);
  let sinceClear = 0;
  return boundedCounter(encoding, (text: string): number => {
    if (text.length === 0) return 0;
    if ((cached() ?? sinceClear) + text.length > MERGE_CACHE_ENTRIES) {
      clearMergeCache();
      sinceClear = 0;
    }
    sinceClear += text.length;
    return countTokens(text, ORDINARY_TEXT);
  });
}

/**
 * The counting function for one encoding, loaded on first request and shared afterwards. Hot
 * loops (the token counter) hold on to it so each count is one call, not a map lookup.
 */
export function getTextTokenCounter(encoding: EncodingName): TextTokenCounter {
  let counter = loaded.get(encoding);
  if (counter === undefined) {
    counter = loadEncoding(encoding);
    loaded.set(encoding, counter);
  }
  return counter;
}

/**
 * BPE tokens of `text` in `encoding`, exactly as gpt-tokenizer (and tiktoken) count ordinary
 * text, in time linear in its length; a pre-token over 512 characters (a run of one character,
 * a zero-filled base64 blob) is counted in pieces, within one token per cut (see
 * bounded-count.ts). Never throws on special-token strings such as `<|endoftext|>`: a transcript may well
 * contain them, and the API bills them as plain text.
 */
export function countTextTokens(text: string, encoding: EncodingName): number {
  return getTextTokenCounter(encoding)(text);
}

/** Whether an encoding's tables are already in memory (for start-up diagnostics and tests). */
export function isEncodingLoaded(encoding: EncodingName): boolean {
  return loaded.has(encoding);
}
