/**
 * Metering of the views the guard sends: each request billed by the conversation's cost meter for
 * its model (cached, written and fresh input, price), at the time of the conversation's newest
 * message. See `cost-meter.ts` for the provider rules.
 */

import type { ContextMeasurer, ResolvedRequest } from '../measure/measurer.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import type { RequestOptions } from '../options.js';
import type { TokenCounter } from '../tokens/types.js';
import { CostMeter, type MeterSource, messageFingerprint, objectKey, type UsageCost } from './cost-meter.js';

/**
 * What metering reads and keeps of a conversation (the guard's `MeteredConversation` has it): its own
 * shape here, so the meter does not depend on the guard that calls it.
 */
export interface MeteredConversation {
  readonly entries: readonly HistoryEntry[];
  readonly format: MessageFormat | undefined;
  readonly view: { closedMark(): { readonly closedMessages: number } | null };
  meters?: Map<string, CostMeter>;
  meterMark?: { model: string; build: object; closed: number; plain: boolean } | undefined;
  meterSource?: MessageSource;
}

/**
 * Bills the view about to be sent with the conversation's meter for the model, at the time of
 * its newest message (now when messages carry no time). `breakpoints`: contextkit marks the view
 * for the prompt cache (`cacheBreakpoints: 'auto'`); without them a provider that caches only at
 * breakpoints caches only where the messages carry marks of their own.
 */
export function billRequest(
  measurer: ContextMeasurer,
  c: MeteredConversation,
  r: ResolvedRequest,
  messages: readonly Message[],
  tools: RequestOptions['tools'],
  noticeTokens: number,
  breakpoints: boolean,
): UsageCost {
  c.meters ??= new Map();
  let meter = c.meters.get(r.modelKey);
  if (!meter) {
    meter = new CostMeter(measurer.catalog.get(r.modelKey)?.pricing);
    c.meters.set(r.modelKey, meter);
  }
  // Closed messages of the same build are the same objects as last time: no need to compare them.
  const mark = c.view.closedMark();
  const plain = r.format === (c.format ?? r.format) && noticeTokens === 0;
  const previous = c.meterMark;
  const known =
    mark && previous && plain && previous.plain && previous.model === r.modelKey && previous.build === mark
      ? previous.closed
      : 0;
  c.meterMark = mark ? { model: r.modelKey, build: mark, closed: mark.closedMessages, plain } : undefined;
  c.meterSource ??= new MessageSource(measurer);
  const source = c.meterSource.reading(r);
  if (meter.pricing?.caching.mode === 'breakpoints') {
    meter.breakpointsSent = breakpoints || meter.breakpointsSeen || carriesMarks(messages);
  }
  const last = meter.billView(
    conversationTime(c),
    tools && tools.length > 0 ? messageFingerprint(tools) : 0,
    r.fixedTokens,
    messages,
    source,
    0,
    known,
  );
  // The totals are the meter's own object: `usage()` copies them when asked.
  const out: UsageCost = { model: r.modelKey, currency: 'USD', last, totals: meter.totals };
  if (meter.pricing) out.pricing = meter.pricing.source;
  return out;
}

const marked = new WeakMap<object, boolean>();

/**
 * Whether a message carries a prompt-cache mark of its own: an Anthropic block with
 * `cache_control`, or a Bedrock Converse `cachePoint` block. Memoized by message object, so a
 * steady turn looks at its new messages only.
 */
function hasMark(message: Message): boolean {
  let known = marked.get(message);
  if (known === undefined) {
    const content: unknown = message.content;
    known =
      Array.isArray(content) &&
      content.some(
        (b) =>
          typeof b === 'object' &&
          b !== null &&
          ((b as Record<string, unknown>).cache_control != null || 'cachePoint' in b),
      );
    marked.set(message, known);
  }
  return known;
}

function carriesMarks(messages: readonly Message[]): boolean {
  for (const m of messages) if (hasMark(m)) return true;
  return false;
}

/** View messages as the meter reads them: keyed by object, counted by the measurer (memoized). */
export class MessageSource implements MeterSource<Message> {
  readonly keysByIdentity = true;
  private counter: TokenCounter | undefined;
  private format: MessageFormat = 'openai';
  private memo: WeakMap<object, number> | undefined;

  constructor(private readonly measurer: ContextMeasurer) {}

  /** This source, set to read with `r`'s counter and format. */
  reading(r: ResolvedRequest): this {
    this.counter = r.counter;
    this.format = r.format;
    this.memo = this.measurer.memoFor(r.counter);
    return this;
  }

  key(message: Message): number {
    return objectKey(message);
  }

  tokens(message: Message): number {
    return this.memo!.get(message) ?? this.measurer.count(this.counter!, message, this.format);
  }

  same(previous: unknown, message: Message): boolean {
    return sameValue(previous, message);
  }
}

/**
 * Two view messages (or values in them) with the same content, asked only where they are not the
 * same object: value by value, stopping at the first difference (a tool result that replaced a
 * placeholder differs early), where values are mostly the same strings or objects.
 */
function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameValue(x[i], y[i])) return false;
    return true;
  }
  if (Array.isArray(y)) return false;
  const a = x as Record<string, unknown>;
  const b = y as Record<string, unknown>;
  // Keys in the same order: a request is compared as the bytes it is sent as.
  const keys = Object.keys(b);
  const before = Object.keys(a);
  if (before.length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (before[i] !== key || !sameValue(a[key], b[key])) return false;
  }
  return true;
}

let lastStamp: string | undefined;
let lastStampAt = Number.NaN;

/** The time of a conversation's newest message (ms), or now when it has none or it cannot be read. */
export function conversationTime(c: { readonly entries: readonly HistoryEntry[] }): number {
  const stamp = c.entries[c.entries.length - 1]?.metadata.timestamp;
  if (stamp === undefined) return Date.now();
  if (lastStamp !== stamp) {
    lastStamp = stamp;
    lastStampAt = Date.parse(stamp);
  }
  return Number.isFinite(lastStampAt) ? lastStampAt : Date.now();
}
