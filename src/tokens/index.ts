/** Token accounting: exact and estimated counters, media costs, and the model catalog. */
export {
  BUILTIN_MODELS,
  CLAUDE_TOKENIZER,
  createModelCatalog,
  DEFAULT_TOKENIZERS,
  GEMINI_TOKENIZER,
  getModelInfo,
  type ModelCatalog,
  type ModelInfoInput,
} from './catalog.js';
export { type CounterTarget, createTokenCounter, type Framing, PROVIDER_FRAMING } from './counter.js';
export {
  countTextTokens,
  getTextTokenCounter,
  isEncodingLoaded,
  type TextTokenCounter,
} from './encodings.js';
export {
  ANTHROPIC_DEFAULT_IMAGE_TOKENS,
  ANTHROPIC_PDF_PAGE_TOKENS,
  anthropicImageTokens,
  countPdfPages,
  GEMINI_DEFAULT_IMAGE_TOKENS,
  GEMINI_PDF_PAGE_TOKENS,
  geminiImageTokens,
  type ImageDetail,
  type ImageDimensions,
  type ImageFormat,
  type ImageInfo,
  imageInfoFromBase64,
  imageInfoFromBytes,
  imageInfoFromUrl,
  imageTokens,
  OPENAI_DEFAULT_IMAGE_TOKENS,
  OPENAI_PDF_PAGE_TOKENS,
  openaiImageTokens,
  type ParsedDataUrl,
  parseDataUrl,
  pdfPageTokens,
  pdfTokens,
} from './images.js';
export {
  BUILTIN_PRICING,
  type CachingRules,
  checkPricing,
  type ModelPricing,
  type ModelPricingInput,
} from './pricing.js';
export type { EncodingName, ModelInfo, ProviderFamily, TokenCounter, TokenizerSpec } from './types.js';
