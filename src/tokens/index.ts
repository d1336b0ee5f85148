/** Token accounting: exact and estimated counters, media costs, and the model catalog. */
export {
  BUILTIN_MODELS,
  createModelCatalog,
  getModelInfo,
  type ModelCatalog,
  type ModelInfoInput,
} from './catalog.js';
export { type CounterTarget, createTokenCounter, type Framing } from './counter.js';
export { countTextTokens, type TextTokenCounter } from './encodings.js';
export {
  type ImageDetail,
  type ImageDimensions,
  type ImageFormat,
  type ImageInfo,
  imageTokens,
  type ParsedDataUrl,
} from './images.js';
export { BUILTIN_PRICING, type CachingRules, type ModelPricing, type ModelPricingInput } from './pricing.js';
export type { EncodingName, ModelInfo, ProviderFamily, TokenCounter, TokenizerSpec } from './types.js';
