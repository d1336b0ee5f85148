import type { ContextOverflowError } from './errors.js';
import type { AppliedEdit } from './guard/applied-edits.js';
import type { RequestCost } from './meter/cost-meter.js';
import type { UsageIteration } from './meter/usage.js';
import type { Repair } from './wire/atoms.js';

/** What one compaction did, by sequence number, with the tokens before and after. */
export interface CompactionReceipt {
  /**
   * Why it ran: the trigger was crossed, `compact({ force: true })`, the budget shrank under the
   * view, tool results were cleared, or (`cache_expired`) the prompt cache had expired while the
   * view was near the trigger, so the compaction due soon ran while there was no warm prefix to lose;
   * `requested`: the model called the `compact` tool.
   */
  reason: 'threshold' | 'forced' | 'over_budget' | 'clearing' | 'cache_expired' | 'requested';
  budget: number;
  trigger: number;
  target: number;
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  /** Seqs of stored messages this compaction left out of the view with no summary (facts kept). */
  dropped: number[];
  /** Seqs of stored messages this compaction replaced by the summary. */
  summarized: number[];
  /** The summary now in the view: the seqs it covers, who wrote it, its length. */
  summary?: { fromSeq: number; toSeq: number; tools: string; chars: number };
  /**
   * Why messages were dropped with no summary written for them, when the strategy summarizes:
   * no room for a useful one, the facts block needed its room, or it would not fit the budget.
   */
  noSummary?: string;
  /** The facts block: facts kept in all, new with this compaction, left out for room, and their values. */
  facts: { kept: number; added: number; omitted: number; values: string[] };
  /** Tool results replaced by a placeholder: the seq holding the result, the call's tool, its tokens. */
  cleared: Array<{ seq: number; callSeq: number; tool: string; tokens: number }>;
  /** Texts whose middle was cut: the seq of the message and the characters removed. */
  truncated: Array<{ seq: number; removedChars: number }>;
  /** What the view had to repair to stay valid (missing results, orphans, moved messages). */
  repairs: Repair[];
  /**
   * The view ends above the target (beyond the quarter of the gap to the trigger that the facts
   * block may use): what must be kept (system, pinned and critical messages, the task, the current
   * turn: everything since the latest user message) does not fit in the target, so the view stops
   * at that floor. The next compaction then waits until the view grows by the gap between target
   * and trigger (or past the budget), not for the trigger.
   */
  atFloor: boolean;
  /**
   * Set when the request before this one compacted too: compaction never fires on two consecutive
   * requests while the view fits the budget, so this one does only because the messages added
   * since (`addedTokens`) alone exceed the room the last compaction left under the budget
   * (`room`).
   */
  consecutive?: { addedTokens: number; room: number };
  /**
   * With summaries prepared ahead (the `summaryAhead` option): whether this compaction's summary
   * is the model's, prepared before the trigger for exactly this range (`used`); the model's for
   * the start of the range with the rest summarized by the offline tools on top of it, the range
   * having grown past what was prepared (`partial`, its `summary.tools` then names both, as
   * `openai+offline`); or the offline tools' because the model's was not back yet (`pending`), had
   * failed (`failed`), covered other messages or did not fit the room (`stale`), or the model was
   * not asked for this range (`none`). Absent when the compaction wrote no summary or nothing is
   * prepared ahead.
   */
  prepared?: 'used' | 'partial' | 'pending' | 'failed' | 'stale' | 'none';
  /**
   * What the compaction hooks pinned into the view (`onBeforeCompaction`, `onAfterCompaction`):
   * texts kept, their tokens (within `tokensAfter`), and texts trimmed or refused for room.
   */
  pinned?: { texts: number; tokens: number; trimmed: number; refused: number };
  /**
   * Counter id and whether counts are exact or estimates. `exact` is also false when
   * `tokensBefore` holds upper bounds of older messages a cold start of a long history had not
   * counted yet (they are counted right after that request); `tokensAfter` is counted exactly.
   */
  counter: string;
  exact: boolean;
  durationMs: number;
}

/** Every event a manager emits, with its payload. */
export interface ContextEvents {
  'context:message_added': { seq: number; role: string; ephemeral: boolean; tokens: number };
  'context:pre_compact': { messageCount: number; tokens: number };
  'context:post_compact': { messageCount: number; tokens: number; receipt: CompactionReceipt };
  'context:budget': { budget: number; source: string };
  'context:include': { source: string; content: string };
  'context:warn': { message: string; code: string };
  'context:overflow': { error: ContextOverflowError };
  /** A request measured; `cost` is what its input was billed when it is about to be sent. */
  'context:measure': {
    tokens: number;
    budget: number;
    pct: number;
    exact: boolean;
    messages: number;
    cost?: RequestCost;
  };
  /**
   * The provider managed the context on its server: a reply with a compaction block was stored
   * (`compactionSeq`: the view now starts there), or a response reported its compaction steps
   * (`iterations`, billed by the cost meter) or the context edits it applied (`appliedEdits`,
   * Anthropic `context_management.applied_edits`).
   */
  'context:provider_context': {
    provider: 'anthropic';
    compactionSeq?: number;
    iterations?: UsageIteration[];
    appliedEdits?: AppliedEdit[];
  };
  /** A listener threw; the manager carried on. */
  error: { event: string; error: unknown };
}

/** The name of any event a manager emits. */
export type ContextEventName = keyof ContextEvents;
/** A listener for one event. */
export type Listener<E extends ContextEventName> = (payload: ContextEvents[E]) => void;

/**
 * A small typed emitter. A listener that throws never breaks the manager: the error is reported on
 * the `error` event (and swallowed if an `error` listener throws too).
 */
export class ContextEmitter {
  private readonly listeners = new Map<ContextEventName, Set<Listener<ContextEventName>>>();
  /** Events raised before anyone could listen (at construction), for the first listener. */
  private held: Array<{ event: ContextEventName; payload: unknown }> = [];

  /** Subscribes; returns a function that unsubscribes. */
  on<E extends ContextEventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<ContextEventName>);
    if (this.held.some((h) => h.event === event)) {
      const due = this.held.filter((h) => h.event === event);
      this.held = this.held.filter((h) => h.event !== event);
      for (const h of due) this.emit(event, h.payload as ContextEvents[E]);
    }
    return () => this.off(event, listener);
  }

  /** Subscribes for one call. */
  once<E extends ContextEventName>(event: E, listener: Listener<E>): () => void {
    const off = this.on(event, (payload) => {
      off();
      listener(payload);
    });
    return off;
  }

  off<E extends ContextEventName>(event: E, listener: Listener<E>): void {
    this.listeners.get(event)?.delete(listener as Listener<ContextEventName>);
  }

  /** True when someone listens: lets callers skip building a payload nobody reads. */
  has(event: ContextEventName): boolean {
    return (this.listeners.get(event)?.size ?? 0) > 0;
  }

  /**
   * Emits now when someone listens, else keeps the event for the first listener of its name: for
   * what is found while a manager is built (a mount config's key), before its caller can subscribe.
   */
  hold<E extends ContextEventName>(event: E, payload: ContextEvents[E]): void {
    if (this.has(event)) this.emit(event, payload);
    else this.held.push({ event, payload });
  }

  emit<E extends ContextEventName>(event: E, payload: ContextEvents[E]): void {
    const set = this.listeners.get(event);
    if (!set || set.size === 0) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        if (event === 'error') continue;
        this.emit('error', { event, error });
      }
    }
  }
}
