/**
 * Context windows, output limits and tokenizers of the current OpenAI, Anthropic and Google
 * models, looked up by any of the names those models go by (snapshots, aliases, gateway and
 * cloud prefixes), overridable and extendable by the user.
 *
 * Prices and caching rules (read 2026-11-24) are in `pricing.ts`; a user entry's `pricing`
 * overrides any subset of them. Figures checked 2026-11-22 against: the model specs shipped in gpt-tokenizer 4.0 (OpenAI's
 * published context_window / max_output_tokens); Anthropic's models overview, "What's new in
 * Claude 4.6" and tool-use pages; Google's Gemini model pages. Context windows are the default
 * ones, without opt-in betas (Claude's 1M-token beta is an override away).
 */
import { ConfigurationError } from '../errors.js';
import { nearestName } from '../nearest-name.js';
import { BUILTIN_PRICING, bedrockPricing, checkPricing, type ModelPricingInput } from './pricing.js';
import type { EncodingName, ModelInfo, ProviderFamily, TokenizerSpec } from './types.js';

/**
 * Claude: no offline tokenizer is published for Claude 3 and later, so we estimate from
 * cl100k_base × 1.2. Claude's vocabulary (~65k) is smaller than o200k's and, like cl100k, it
 * is far less efficient than o200k on non-English text; cl100k tracks that, so one factor holds
 * across languages better than it would on o200k, where a factor tuned on English undercounts
 * Chinese or Russian. Measured Claude counts run ~1.1–1.2× cl100k on English prose and code; we
 * take the top of that range because an undercount is what makes a request fail. Calibration
 * from reported usage (the guard's job) corrects the rest per conversation.
 */
export const CLAUDE_TOKENIZER: TokenizerSpec = Object.freeze({
  kind: 'estimate',
  encoding: 'cl100k_base',
  factor: 1.2,
});

/**
 * Gemini: its SentencePiece vocabulary (~256k entries) is close to o200k in efficiency across
 * languages, so o200k_base × 1.1 (a 10% margin on the ~1.0–1.05 we see for English) keeps the
 * estimate on the safe side without wasting much of a million-token window.
 */
export const GEMINI_TOKENIZER: TokenizerSpec = Object.freeze({
  kind: 'estimate',
  encoding: 'o200k_base',
  factor: 1.1,
});

/**
 * Claude Sonnet 5's new tokenizer: Anthropic's migration guide (platform.claude.com/docs/en/models/
 * sonnet-5/migration-guide, read 2026-11-28) says the same text gives about 30% more tokens than on
 * Sonnet 4.6, the exact increase depending on the content; so Claude's estimate × 1.3 (cl100k_base
 * × 1.56). Calibration from reported usage corrects the rest within a few replies.
 */
export const CLAUDE_5_TOKENIZER: TokenizerSpec = Object.freeze({
  kind: 'estimate',
  encoding: 'cl100k_base',
  factor: 1.56,
});

const O200K: TokenizerSpec = Object.freeze({ kind: 'exact', encoding: 'o200k_base' });
const CL100K: TokenizerSpec = Object.freeze({ kind: 'exact', encoding: 'cl100k_base' });

/** The tokenizer a model of a provider gets when its catalog entry does not name one. */
export const DEFAULT_TOKENIZERS: Readonly<Record<ProviderFamily, TokenizerSpec>> = Object.freeze({
  openai: O200K,
  anthropic: CLAUDE_TOKENIZER,
  google: GEMINI_TOKENIZER,
});

type Entry = [id: string, contextWindow: number, maxOutputTokens: number, tokenizer?: TokenizerSpec];

const OPENAI: Entry[] = [
  ['gpt-5.5', 1_050_000, 128_000],
  ['gpt-5.4', 1_050_000, 128_000],
  ['gpt-5.2', 400_000, 128_000],
  ['gpt-5.1', 400_000, 128_000],
  ['gpt-5', 400_000, 128_000],
  ['gpt-5-mini', 400_000, 128_000],
  ['gpt-5-nano', 400_000, 128_000],
  ['gpt-5-pro', 400_000, 272_000],
  ['gpt-5-chat-latest', 128_000, 16_384],
  ['gpt-4.1', 1_047_576, 32_768],
  ['gpt-4.1-mini', 1_047_576, 32_768],
  ['gpt-4.1-nano', 1_047_576, 32_768],
  ['gpt-4.5-preview', 128_000, 16_384],
  ['gpt-4o', 128_000, 16_384],
  ['gpt-4o-mini', 128_000, 16_384],
  ['chatgpt-4o-latest', 128_000, 16_384],
  ['o1', 200_000, 100_000],
  ['o1-pro', 200_000, 100_000],
  ['o1-mini', 128_000, 65_536],
  ['o1-preview', 128_000, 32_768],
  ['o3', 200_000, 100_000],
  ['o3-pro', 200_000, 100_000],
  ['o3-mini', 200_000, 100_000],
  ['o4-mini', 200_000, 100_000],
  ['gpt-4-turbo', 128_000, 4_096, CL100K],
  ['gpt-4-turbo-preview', 128_000, 4_096, CL100K],
  ['gpt-4-1106-preview', 128_000, 4_096, CL100K],
  ['gpt-4-0125-preview', 128_000, 4_096, CL100K],
  ['gpt-4', 8_192, 8_192, CL100K],
  ['gpt-4-32k', 32_768, 8_192, CL100K],
  ['gpt-3.5-turbo', 16_385, 4_096, CL100K],
];

const ANTHROPIC: Entry[] = [
  // Read 2026-11-28: the Claude Sonnet 5 model page (platform.claude.com/docs/en/models/sonnet-5/overview:
  // 1M context, 128K output, $2 / $10) and its migration guide (the new tokenizer, ~30% more tokens).
  ['claude-sonnet-5', 1_000_000, 128_000, CLAUDE_5_TOKENIZER],
  // Read 2026-11-26: the Opus 4.7 and 4.8 model pages (platform.claude.com/docs/en/models/opus-4-8/overview,
  // Google Cloud's Opus 4.7 model card: 1M input, 128K output, GA) and, for the Mythos Preview
  // (Project Glasswing only; deprecated 2026-06-09, retired 2026-06-30), its model card's figures.
  // All three have server-side compaction (see guard/provider-compaction.ts).
  ['claude-opus-4-8', 1_000_000, 128_000],
  ['claude-opus-4-7', 1_000_000, 128_000],
  ['claude-mythos-preview', 1_000_000, 128_000],
  ['claude-opus-4-6', 200_000, 128_000],
  ['claude-sonnet-4-6', 200_000, 64_000],
  ['claude-opus-4-5', 200_000, 64_000],
  ['claude-sonnet-4-5', 200_000, 64_000],
  ['claude-haiku-4-5', 200_000, 64_000],
  ['claude-opus-4-1', 200_000, 32_000],
  ['claude-opus-4', 200_000, 32_000],
  ['claude-sonnet-4', 200_000, 64_000],
  ['claude-3-7-sonnet', 200_000, 64_000],
  ['claude-3-5-sonnet', 200_000, 8_192],
  ['claude-3-5-haiku', 200_000, 8_192],
  ['claude-3-opus', 200_000, 4_096],
  ['claude-3-haiku', 200_000, 4_096],
];

const GOOGLE: Entry[] = [
  // Read 2026-11-28: ai.google.dev/gemini-api/docs/models (Gemini 3 Pro: 1,048,576 input tokens,
  // 65,536 output tokens; Gemini 3.1 Pro Preview the same limits).
  ['gemini-3-pro', 1_048_576, 65_536],
  ['gemini-3.1-pro-preview', 1_048_576, 65_536],
  ['gemini-3-pro-preview', 1_048_576, 65_536],
  ['gemini-2.5-pro', 1_048_576, 65_536],
  ['gemini-2.5-flash', 1_048_576, 65_536],
  ['gemini-2.5-flash-lite', 1_048_576, 65_536],
  ['gemini-2.0-flash', 1_048_576, 8_192],
  ['gemini-2.0-flash-lite', 1_048_576, 8_192],
  ['gemini-1.5-pro', 2_097_152, 8_192],
  ['gemini-1.5-flash', 1_048_576, 8_192],
];

function build(provider: ProviderFamily, entries: Entry[]): ModelInfo[] {
  return entries.map(([id, contextWindow, maxOutputTokens, tokenizer]) => {
    const pricing = BUILTIN_PRICING[id];
    return Object.freeze({
      id,
      provider,
      contextWindow,
      maxOutputTokens,
      tokenizer: tokenizer ?? DEFAULT_TOKENIZERS[provider],
      ...(pricing ? { pricing } : {}),
    });
  });
}

/** Every model contextkit knows out of the box, by canonical id. */
export const BUILTIN_MODELS: readonly ModelInfo[] = Object.freeze([
  ...build('openai', OPENAI),
  ...build('anthropic', ANTHROPIC),
  ...build('google', GOOGLE),
]);

/**
 * A user's catalog entry. For an id the catalog already resolves (exactly, or as a snapshot of a
 * known model) any subset of fields overrides the known ones; a new id needs `contextWindow` and
 * `maxOutputTokens`, and `provider` unless the name says it (`gpt-`/`o1`…, `claude-`, `gemini-`).
 * `id` is ignored: the key is the id.
 */
export type ModelInfoInput = Partial<Omit<ModelInfo, 'pricing'>> & { pricing?: ModelPricingInput };

/** A set of models with the lookup rules of {@link getModelInfo}. */
export interface ModelCatalog {
  /** The model `model` names, or undefined when nothing matches. */
  get(model: string): ModelInfo | undefined;
  /**
   * For a name `get` does not know, the catalog id it was most likely meant as: one or two edits
   * away (`claude-sonet-4-5`), or the id it extends (`gpt-4-o` → `gpt-4`); undefined when none.
   */
  suggest(model: string): string | undefined;
  /** Every model in the catalog, built-in and user-defined, by canonical id. */
  list(): ModelInfo[];
}

/**
 * The names one model goes by, reduced to the catalog's spelling: lower case; without a
 * fine-tune marker (`ft:gpt-4o-mini-…:org::id`), a gateway prefix (`openai/`, `anthropic/`,
 * `models/`), a Bedrock wrapper (`us.anthropic.claude-…-v1:0`, `global.anthropic.…`) or Vertex's `@` before the date;
 * Claude versions written with dots (`claude-3.5-sonnet`, as OpenRouter does) use dashes.
 */
function canonicalName(model: string): string {
  let name = model.trim().toLowerCase();
  if (name.startsWith('ft:')) name = name.slice(3);
  const slash = name.lastIndexOf('/');
  if (slash >= 0) name = name.slice(slash + 1);
  const bedrock = /^(?:[a-z]{2,4}\.|global\.|us-gov\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$/.exec(name);
  if (bedrock?.[1] !== undefined) name = bedrock[1];
  name = name.replace('@', '-');
  if (name.startsWith('claude-')) name = name.replace(/(\d)\.(\d)/g, '$1-$2');
  return name;
}

/** Which provider a model name belongs to, from its family prefix. */
function providerFromName(name: string): ProviderFamily | undefined {
  if (/^(?:gpt-|chatgpt-|o\d(?:-|$)|davinci|babbage)/.test(name)) return 'openai';
  if (name.startsWith('claude')) return 'anthropic';
  if (name.startsWith('gemini') || name.startsWith('gemma')) return 'google';
  return undefined;
}

/**
 * What may follow a catalog id in a name for the same model, as the providers document their
 * snapshots and aliases: OpenAI's dated snapshots (`gpt-4o-2024-08-06`, and the older
 * `gpt-4-0613`; https://platform.openai.com/docs/models), Anthropic's dated ids and `-latest`
 * aliases (`claude-sonnet-4-5-20250929`, `claude-3-7-sonnet-latest`;
 * https://docs.anthropic.com/en/docs/about-claude/models/overview), Gemini's stable versions,
 * previews and experiments (`gemini-1.5-pro-002`, `gemini-2.5-flash-preview-05-20`;
 * https://ai.google.dev/gemini-api/docs/models#model-versions), then an OpenAI fine-tune's
 * `:org::id`.
 */
const SNAPSHOT_SUFFIX =
  /^(?:-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3}|latest|preview|exp)(?:-\d{2}-\d{2})?)*(?::.+)?$/;

class Catalog implements ModelCatalog {
  private readonly byId = new Map<string, ModelInfo>();
  /** Ids longest first, so `gpt-4o-mini-2024-07-18` finds `gpt-4o-mini` before `gpt-4o`. */
  private readonly byLength: string[];

  constructor(models: readonly ModelInfo[]) {
    for (const info of models) this.byId.set(info.id, info);
    this.byLength = [...this.byId.keys()].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  }

  get(model: string): ModelInfo | undefined {
    const raw = model.trim().toLowerCase();
    const exact = this.byId.get(raw);
    if (exact !== undefined) return exact;
    const info = this.resolve(model);
    // Only a Claude id in a Bedrock regional profile's spelling prices differently (`bedrockPricing`).
    return info?.pricing ? this.onBedrock(raw, info) : info;
  }

  /** Claude through a regional Bedrock inference profile bills more (see `bedrockPricing`). */
  private readonly bedrock = new Map<string, ModelInfo>();

  private onBedrock(raw: string, info: ModelInfo): ModelInfo {
    const pricing = bedrockPricing(raw, info.pricing!);
    if (pricing === info.pricing) return info;
    let out = this.bedrock.get(raw);
    if (!out) {
      out = Object.freeze({ ...info, pricing });
      this.bedrock.set(raw, out);
    }
    return out;
  }

  private resolve(model: string): ModelInfo | undefined {
    const name = canonicalName(model);
    const canonical = this.byId.get(name);
    if (canonical !== undefined) return canonical;
    // A dated snapshot or documented alias of a catalog id; any other extension (`gpt-4-o`,
    // `gpt-4-vision-preview`) is another model, not this one.
    const id = this.extended(name);
    return id === undefined || !SNAPSHOT_SUFFIX.test(name.slice(id.length)) ? undefined : this.byId.get(id);
  }

  suggest(model: string): string | undefined {
    const name = canonicalName(model);
    return nearestName(name, this.byId.keys()) ?? this.extended(name);
  }

  /** The longest catalog id `name` extends at a `-` or `:` boundary. */
  private extended(name: string): string | undefined {
    return this.byLength.find((id) => {
      const next = name.charAt(id.length);
      return name.length > id.length && name.startsWith(id) && (next === '-' || next === ':');
    });
  }

  list(): ModelInfo[] {
    return [...this.byId.values()];
  }
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

const ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base'];

function checkTokenizer(where: string, tokenizer: unknown): TokenizerSpec {
  if (typeof tokenizer !== 'object' || tokenizer === null) {
    throw new ConfigurationError(where, 'expected { kind: "exact" | "estimate", encoding, factor? }');
  }
  const kind: unknown = Reflect.get(tokenizer, 'kind');
  const encoding: unknown = Reflect.get(tokenizer, 'encoding');
  if (typeof encoding !== 'string' || !ENCODINGS.includes(encoding as EncodingName)) {
    throw new ConfigurationError(`${where}.encoding`, `expected one of ${ENCODINGS.join(', ')}`);
  }
  const name = encoding as EncodingName;
  if (kind === 'exact') return Object.freeze({ kind, encoding: name });
  if (kind === 'estimate') {
    const factor: unknown = Reflect.get(tokenizer, 'factor');
    if (typeof factor !== 'number' || !Number.isFinite(factor) || factor <= 0) {
      throw new ConfigurationError(
        `${where}.factor`,
        'expected a positive number (BPE tokens are multiplied by it)',
      );
    }
    return Object.freeze({ kind, encoding: name, factor });
  }
  throw new ConfigurationError(`${where}.kind`, 'expected "exact" or "estimate"');
}

function userEntry(key: string, input: ModelInfoInput, base: ModelInfo | undefined): ModelInfo {
  const id = key.trim().toLowerCase();
  const where = `models[${JSON.stringify(key)}]`;
  const provider = input.provider ?? base?.provider ?? providerFromName(canonicalName(id));
  if (provider !== 'openai' && provider !== 'anthropic' && provider !== 'google') {
    throw new ConfigurationError(
      `${where}.provider`,
      provider === undefined
        ? 'unknown model: give its provider ("openai", "anthropic" or "google")'
        : `expected "openai", "anthropic" or "google", got ${JSON.stringify(provider)}`,
    );
  }
  const contextWindow = input.contextWindow ?? base?.contextWindow;
  if (!isPositiveInteger(contextWindow)) {
    throw new ConfigurationError(`${where}.contextWindow`, 'expected a positive integer (tokens)');
  }
  const maxOutputTokens = input.maxOutputTokens ?? base?.maxOutputTokens;
  if (!isPositiveInteger(maxOutputTokens) || maxOutputTokens > contextWindow) {
    throw new ConfigurationError(
      `${where}.maxOutputTokens`,
      `expected a positive integer no larger than ${contextWindow}`,
    );
  }
  const tokenizer =
    input.tokenizer !== undefined
      ? checkTokenizer(`${where}.tokenizer`, input.tokenizer)
      : // A provider change without a tokenizer means the old model's tokenizer no longer applies.
        base !== undefined && base.provider === provider
        ? base.tokenizer
        : DEFAULT_TOKENIZERS[provider];
  const basePricing = base !== undefined && base.provider === provider ? base.pricing : undefined;
  const pricing =
    input.pricing !== undefined ? checkPricing(`${where}.pricing`, input.pricing, basePricing) : basePricing;
  return Object.freeze({
    id,
    provider,
    contextWindow,
    maxOutputTokens,
    tokenizer,
    ...(pricing ? { pricing } : {}),
  });
}

/**
 * A catalog of the built-in models plus the user's: an entry for a known id (or a snapshot of
 * one) overrides the fields it gives, a new id adds a model. Invalid entries throw
 * `ConfigurationError` naming the field, at construction rather than at the first request.
 */
export function createModelCatalog(extra?: Readonly<Record<string, ModelInfoInput>>): ModelCatalog {
  if (extra === undefined || Object.keys(extra).length === 0) return defaultCatalog();
  const builtin = defaultCatalog();
  const models = new Map<string, ModelInfo>(BUILTIN_MODELS.map((m) => [m.id, m]));
  for (const [key, input] of Object.entries(extra)) {
    const base = builtin.get(key);
    const entry = userEntry(key, input, base);
    models.set(entry.id, entry);
  }
  return new Catalog([...models.values()]);
}

let builtinCatalog: Catalog | undefined;
function defaultCatalog(): Catalog {
  builtinCatalog ??= new Catalog(BUILTIN_MODELS);
  return builtinCatalog;
}

/**
 * Limits and tokenizer of a model by any name it goes by: the exact id first, then the
 * canonical spelling (gateway prefixes such as `openai/gpt-4o`, Bedrock and Vertex ids), then
 * the longest catalog id the name extends (`gpt-4o-2024-08-06` → `gpt-4o`,
 * `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). Undefined for an unknown model: the
 * caller decides the fallback (the manager uses `maxTokens` and warns). The returned object is
 * the catalog's frozen entry, with the catalog's canonical id.
 */
export function getModelInfo(
  model: string,
  overrides?: Readonly<Record<string, ModelInfoInput>>,
): ModelInfo | undefined {
  return createModelCatalog(overrides).get(model);
}

/** How an unknown model of a known family is counted (see {@link familyCounter}). */
export interface FamilyCounter {
  provider: ProviderFamily;
  tokenizer: TokenizerSpec;
  /** `Claude 5` — for the warning. */
  family: string;
  /** The catalog model of that family a command counts and budgets as when it needs one. */
  representative: string;
}

/**
 * The counter a model the catalog does not know gets from its name's family, or undefined when the
 * name names none: `gpt-`, `chatgpt-` and `o<digit>` (OpenAI, o200k_base, exact), `claude-` (Claude's
 * estimate; from Claude 5 on the new tokenizer's, since Sonnet 5 introduced it), `gemini-` / `gemma-`
 * (Gemini's estimate), through any gateway prefix or Bedrock / Vertex id the catalog reads. Budgets
 * still come from `maxTokens`: the family says how to count, not how large the window is.
 */
export function familyCounter(model: string): FamilyCounter | undefined {
  const name = canonicalName(model);
  const provider = providerFromName(name);
  if (provider === undefined) return undefined;
  if (provider === 'openai') {
    return { provider, tokenizer: DEFAULT_TOKENIZERS.openai, family: 'OpenAI', representative: 'gpt-4o' };
  }
  if (provider === 'google') {
    return {
      provider,
      tokenizer: DEFAULT_TOKENIZERS.google,
      family: 'Gemini',
      representative: 'gemini-2.5-pro',
    };
  }
  // `claude-sonnet-5-5`, `claude-opus-5`, `claude-5-haiku`: the first version number in the name.
  const major = Number(/(?:^|-)(\d+)(?:-|$)/.exec(name.slice('claude'.length))?.[1] ?? '0');
  return major >= 5
    ? { provider, tokenizer: CLAUDE_5_TOKENIZER, family: 'Claude 5', representative: 'claude-sonnet-5' }
    : { provider, tokenizer: CLAUDE_TOKENIZER, family: 'Claude', representative: 'claude-sonnet-4-5' };
}

/** `; did you mean X?` for a model name the catalog does not know, when it can tell which was meant. */
export function didYouMeanModel(model: string, catalog: ModelCatalog = defaultCatalog()): string {
  const meant = catalog.suggest(model);
  return meant === undefined ? '' : `; did you mean ${meant}?`;
}
