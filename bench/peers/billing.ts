/**
 * What the views a peer sends are billed for their input at gpt-4o and claude-sonnet-4-5 prices,
 * by each provider's documented caching rules (the library's cost meter, fed here with the
 * benchmark's own o200k counts and fingerprints of the views' JSON, so no peer grades itself).
 * The workloads carry no times: the agent is taken to call the model every `TURN_SECONDS`.
 */
import { CostMeter, hashString, type MeterBlock } from '../../src/meter/cost-meter.js';
import { BUILTIN_PRICING } from '../../src/tokens/pricing.js';

/** Seconds between two model calls of the simulated agent. */
export const TURN_SECONDS = 30;

/** The models priced, by catalog id. */
export const PRICED_MODELS = ['gpt-4o', 'claude-sonnet-4-5'] as const;
export type PricedModel = (typeof PRICED_MODELS)[number];

/** Billed input summed over every view sent, per priced model. */
export class BillTally {
  requests = 0;
  inputTokens = 0;
  readonly price: Record<PricedModel, number> = { 'gpt-4o': 0, 'claude-sonnet-4-5': 0 };
  readonly uncachedPrice: Record<PricedModel, number> = { 'gpt-4o': 0, 'claude-sonnet-4-5': 0 };
  readonly cachedTokens: Record<PricedModel, number> = { 'gpt-4o': 0, 'claude-sonnet-4-5': 0 };
}

/** One conversation's bills: a meter per priced model and the simulated clock. */
export class SessionBilling {
  private readonly meters = PRICED_MODELS.map((m) => [m, new CostMeter(BUILTIN_PRICING[m])] as const);
  private at = Date.UTC(2026, 0, 1);

  constructor(private readonly tally: BillTally) {}

  /** Bills one view sent: its messages' JSON (for fingerprints) and their o200k counts. */
  bill(serialized: readonly string[], tokens: readonly number[]): void {
    this.at += TURN_SECONDS * 1000;
    const blocks: MeterBlock[] = serialized.map((s, i) => ({ key: hashString(s), tokens: tokens[i]! }));
    this.tally.requests++;
    for (const [model, meter] of this.meters) {
      const cost = meter.bill(this.at, blocks);
      if (model === 'gpt-4o') this.tally.inputTokens += cost.inputTokens;
      this.tally.price[model] += cost.price ?? 0;
      this.tally.uncachedPrice[model] += cost.uncachedPrice ?? 0;
      this.tally.cachedTokens[model] += cost.cachedTokens;
    }
  }
}
