/**
 * The view: the current plan applied to the history, as the messages a request sends and their
 * counts. It grows by appending atoms while the plan holds, so a turn between compactions costs
 * the new messages only, and each view starts with the previous one byte for byte.
 */

import { renderAtom } from '../compaction/edit-atom.js';
import { type CompactionPlan, dropsAny, type PlanEdits } from '../compaction/plan.js';
import type { CompactionReceipt } from '../events.js';
import { wireFormat } from '../formats/registry.js';
import type { HistoryEntry, Message, MessageFormat } from '../messages/types.js';
import { Slices } from '../slices.js';
import type { TokenCounter } from '../tokens/types.js';
import { AtomIndex, holdsServerCompaction } from '../wire/atoms.js';
import { messageText } from '../wire/content.js';
import { convertMessages } from '../wire/convert.js';
import { wireMessage } from '../wire/wire-fields.js';
import { type BudgetNoticeState, budgetNoticeText, nextBudgetNotice } from './budget-notice.js';
import { stablePrefixEnds, unchangedPrefix } from './cache-breakpoints.js';
import { budgetNote, compactionNote, startNotice, turnBreaks } from './notices.js';
import type { PlanBlocks } from './plan-blocks.js';

/** Tokens kept aside for the Anthropic start notice, which a view may need. */
export const NOTICE_RESERVE = 24;

/** Tokens a summary message takes besides its text (its heading line and framing). */
const SUMMARY_FRAMING = 48;

/** `buildAhead` leaves this many new entries or atoms to `build` (a steady turn adds one or two). */
const AHEAD_AT_ONCE = 64;
/** `buildAhead` groups the entries into atoms this many at a time. */
const AHEAD_ENTRIES = 512;
/** `buildAhead` renders and counts this many atoms at a time. */
const AHEAD_ATOMS = 256;

/** Memoized counting, as the measurer offers it. */
export interface ViewCounting {
  /** Tokens of a stored or plan-made message, memoized per message object and counter. */
  count(counter: TokenCounter, message: Message, format: MessageFormat): number;
  /** Tokens of messages made for one request only, without filling the memo with them. */
  countFresh(counter: TokenCounter, messages: readonly Message[], format: MessageFormat): number;
}

/** The view as last built. */
export interface BuiltView {
  messages: Message[];
  tokens: number;
}

interface ViewCache extends BuiltView {
  key: string;
  /**
   * For each message, the stored seq it shows as that message stored (the message the atom
   * builder read for that seq, not edited by the plan), which of the plan's own messages it is, or
   * null (edited or repaired): what a stored view record refers to (src/view/stored-view.ts).
   */
  sources: Array<number | PrefixSource | null>;
  plan: CompactionPlan | null;
  edits: PlanEdits;
  /** The summary message, or the window a provider's compaction returned in its place. */
  summary?: readonly Message[];
  facts?: Message;
  /** The block the compaction hooks added. */
  pinned?: Message;
  atomsCovered: number;
  closedAtoms: number;
  closedMessages: number;
  closedTokens: number;
}

/** One of the plan's own messages in a view: the facts block, the hooks' block, a summary message. */
export type PrefixSource =
  | { facts: true; pinned?: never; summary?: never }
  | { pinned: true; facts?: never; summary?: never }
  | { summary: number; facts?: never; pinned?: never };

const FACTS: PrefixSource = Object.freeze({ facts: true });
const PINNED: PrefixSource = Object.freeze({ pinned: true });

/** A prefix item naming one of the plan's messages: one key, `facts`/`pinned` true or a `summary` index. */
function isPrefixSource(item: Message | PrefixSource): item is PrefixSource {
  const named = item as { facts?: unknown; pinned?: unknown; summary?: unknown };
  return (
    (named.facts === true || named.pinned === true || typeof named.summary === 'number') &&
    Object.keys(item).length === 1
  );
}

/** The closed part of a view (see `View.closedPrefix`). */
export interface ClosedPrefix {
  plan: CompactionPlan | null;
  messages: Message[];
  /** For each message: the stored seq it shows, the plan's message it is, or null (edited, repaired). */
  sources: Array<number | PrefixSource | null>;
  tokens: number;
  /** How many of the entries the view was last built from its closed atoms cover. */
  entries: number;
  toolIds: ReadonlySet<string>;
}

/** What a request sends: the messages, their tokens with the fixed ones, and the notice's share. */
export interface SentView {
  messages: Message[];
  /** The same messages before Anthropic cache marks were set (what the cost meter compares). */
  unmarked: Message[];
  total: number;
  noticeTokens: number;
  /**
   * What contextkit put into this view that the previous one did not carry (for
   * `context:include`): the facts block, the summary, the compaction note, the start notice.
   */
  included: Array<{ source: IncludeSource; content: string }>;
  /** The budget notice's state after this view (see `nextBudgetNotice`), when notices are on. */
  budgetNoticed?: BudgetNoticeState;
}

/** What contextkit itself may put into a view. */
export type IncludeSource =
  | 'facts'
  | 'summary'
  | 'pinned'
  | 'compaction_notice'
  | 'start_notice'
  | 'budget_notice';

/** One conversation's view: its atoms, its current plan, and the messages they make. */
export class View {
  private atomIndex: AtomIndex | null = null;
  private currentPlan: CompactionPlan | null = null;
  private planVersion = 0;
  private cache: ViewCache | null = null;
  /** What the last Anthropic request sent (before its cache marks), to find the unchanged prefix. */
  private lastSent: readonly Message[] = [];
  /** The text of each of contextkit's own messages in the last view sent, by source. */
  private lastIncluded = new Map<IncludeSource, string>();

  constructor(
    readonly blocks: PlanBlocks,
    private readonly counting: ViewCounting,
    /** Keep the task before a provider's compaction item too (`protectTask`). */
    private readonly protectTask = false,
  ) {}

  /** The plan the view applies (null before the first compaction). */
  get plan(): CompactionPlan | null {
    return this.currentPlan;
  }

  /** Applies `plan` from the next build on. */
  setPlan(plan: CompactionPlan | null): void {
    this.currentPlan = plan;
    this.planVersion++;
  }

  /**
   * The last build (compared by identity) with how many of its leading messages are closed: while
   * later builds return the same build object, those messages stay the same objects (the cost
   * meter skips comparing them).
   */
  closedMark(): { readonly closedMessages: number } | null {
    return this.cache;
  }

  /** Forgets everything derived from the entries (after they were replaced or cleared). */
  reset(): void {
    this.atomIndex = null;
    this.cache = null;
    this.lastSent = [];
    this.lastIncluded = new Map();
    this.setPlan(null);
  }

  /** The atoms of `entries`, grouped incrementally: only the open tail is regrouped. */
  atoms(entries: readonly HistoryEntry[], format: MessageFormat): AtomIndex {
    if (!this.atomIndex || this.atomIndex.format !== format) {
      this.atomIndex = new AtomIndex(format, this.protectTask);
      this.cache = null;
    }
    this.atomIndex.update(entries);
    return this.atomIndex;
  }

  /** The repairs the atoms needed so far (missing results, orphans, moved messages). */
  repairs(): ReturnType<AtomIndex['repairs']> {
    return this.atomIndex?.repairs() ?? [];
  }

  /**
   * What `build` will do next, done ahead in slices that yield, when there is much of it (a cold
   * start, a history set or read whole, a new plan over a long history): the atoms grouped a part
   * of the entries at a time, as appends would bring them, then the messages rendered and counted
   * a part at a time. The `build` that follows finds it done, and builds the same view it would
   * have built in place. Undefined (nothing to await) when there is little to do.
   */
  buildAhead(
    entries: readonly HistoryEntry[],
    format: MessageFormat,
    counter: TokenCounter,
  ): Promise<void> | undefined {
    if (!this.atomIndex || this.atomIndex.format !== format) {
      this.atomIndex = new AtomIndex(format, this.protectTask);
      this.cache = null;
    }
    const index = this.atomIndex;
    const behind = (this.cache?.atomsCovered ?? 0) + AHEAD_AT_ONCE;
    if (entries.length - index.covered <= AHEAD_AT_ONCE && index.length <= behind) return undefined;
    return (async () => {
      const slices = new Slices();
      while (index.covered < entries.length) {
        // An exchange open across many entries is grouped again by every part: the rest at once.
        if (index.covered - index.openFrom > AHEAD_ENTRIES) break;
        index.update(entries, Math.min(entries.length, index.covered + AHEAD_ENTRIES));
        const pause = slices.step();
        if (pause) await pause;
      }
      for (;;) {
        const view = this.extend(entries, format, counter, AHEAD_ATOMS);
        if (view.atomsCovered >= this.atomIndex!.length) return;
        const pause = slices.step();
        if (pause) await pause;
      }
    })();
  }

  /**
   * The closed part of the last build, as a stored view record keeps it (src/view/stored-view.ts):
   * its messages, the seq each shows or how contextkit made it, their tokens, how many of the
   * entries last given its atoms cover, and the tool ids they show. Null before a build, and for a
   * view a record cannot stand for (one a provider's compaction item restarted).
   */
  closedPrefix(): ClosedPrefix | null {
    const view = this.cache;
    const atoms = this.atomIndex;
    if (!view || !atoms || view.closedAtoms !== atoms.closedCount) return null;
    if (atoms.compactedBefore > 0) return null;
    const n = view.closedMessages;
    return {
      plan: view.plan,
      messages: view.messages.slice(0, n),
      sources: view.sources.slice(0, n),
      tokens: view.closedTokens,
      entries: atoms.openFrom,
      toolIds: atoms.closedToolIds,
    };
  }

  /**
   * Starts the view from a stored view record (src/view/stored-view.ts): `prefix` stands for every
   * atom before the entries the builds that follow are given, which are only those after it (an
   * item naming one of the plan's own messages is that message, made here from the plan); `count`
   * gives each prefix message's tokens; `earlierIds` says whether the prefix's atoms showed a tool id.
   */
  seed(
    plan: CompactionPlan | null,
    format: MessageFormat,
    counterId: string,
    prefix: ReadonlyArray<Message | PrefixSource>,
    /** How many stored entries the prefix covers: the first entry a build will be given is this one. */
    covered: number,
    count: (message: Message, index: number) => number,
    earlierIds?: (id: string) => boolean,
    /** The stored seq each prefix message shows as stored (else null), as a whole build finds it. */
    seqs?: ReadonlyArray<number | null>,
  ): void {
    this.reset();
    this.setPlan(plan);
    this.atomIndex = new AtomIndex(format, this.protectTask, earlierIds);
    const blocks = this.blocks.planMessages(plan, format);
    let tokens = 0;
    const messages = prefix.map((item, i) => {
      const made = isPrefixSource(item) ? item : undefined;
      const own = made?.facts
        ? blocks.facts
        : made?.pinned
          ? blocks.pinned
          : blocks.summary?.[made?.summary ?? -1];
      if (made && own === undefined) throw new Error('View.seed: the plan makes no such message');
      const m = own ?? (item as Message);
      tokens += count(m, i);
      return m;
    });
    this.cache = {
      key: `${counterId}|${format}|${this.planVersion}|0`,
      plan,
      // Only atoms the plan was made over are edited or dropped: none of them after the prefix when
      // it covers them all (the usual case), so the plan's sets are not built.
      edits: plan && plan.historyLength > covered ? this.blocks.edits(plan) : this.blocks.edits(null),
      ...blocks,
      messages,
      sources: prefix.map((item, i) => (isPrefixSource(item) ? item : (seqs?.[i] ?? null))),
      tokens,
      atomsCovered: 0,
      closedAtoms: 0,
      closedMessages: messages.length,
      closedTokens: tokens,
    };
  }

  /**
   * The messages at the end of the view last built that are new since the model last spoke: the
   * latest assistant message and what follows it, stored after the plan was made (none of the
   * plan's own messages, none it edited). What one request of an agent loop adds to the one
   * before, read from the view alone, so that every worker finds the same (issue 32).
   */
  newestStep(): Message[] {
    const view = this.cache;
    if (!view) return [];
    const planned = view.plan ? view.plan.historyLength : 0;
    const step: Message[] = [];
    for (let i = view.messages.length - 1; i >= 0; i--) {
      const source = view.sources[i];
      if (source !== null && (typeof source !== 'number' || source < planned)) break;
      const message = view.messages[i]!;
      step.push(message);
      if (message.role === 'assistant') break;
    }
    return step;
  }

  /** Brings the view up to date with the entries: re-renders only atoms that are new or still open. */
  build(entries: readonly HistoryEntry[], format: MessageFormat, counter: TokenCounter): BuiltView {
    return this.extend(entries, format, counter, Number.POSITIVE_INFINITY);
  }

  /** `build`, rendering at most `maxAtoms` more atoms (the view returned covers only those). */
  private extend(
    entries: readonly HistoryEntry[],
    format: MessageFormat,
    counter: TokenCounter,
    maxAtoms: number,
  ): ViewCache {
    const atoms = this.atoms(entries, format);
    // A server compaction item carries what came before it: the view restarts from the latest one.
    const compactedBefore = atoms.compactedBefore;
    const keptBefore = compactedBefore > 0 ? atoms.keptBeforeCompaction() : undefined;
    const key = `${counter.id}|${atoms.format}|${this.planVersion}|${compactedBefore}`;
    let view = this.cache;
    if (!view || view.key !== key) {
      const plan = this.currentPlan;
      view = {
        key,
        plan,
        edits: this.blocks.edits(plan),
        ...this.blocks.planMessages(plan, atoms.format),
        messages: [],
        sources: [],
        tokens: 0,
        atomsCovered: 0,
        closedAtoms: 0,
        closedMessages: 0,
        closedTokens: 0,
      };
      this.cache = view;
    } else if (view.atomsCovered > view.closedAtoms) {
      view.messages.length = view.closedMessages;
      view.sources.length = view.closedMessages;
      view.tokens = view.closedTokens;
      view.atomsCovered = view.closedAtoms;
    }
    if (view.atomsCovered === atoms.length) return view;
    const { edits, plan } = view;
    const planned = plan ? plan.historyLength : 0;
    const f = atoms.format;
    const end = Math.min(atoms.length, view.atomsCovered + maxAtoms);
    const put = (m: Message, source: number | PrefixSource | null) => {
      view.messages.push(m);
      view.sources.push(source);
      view.tokens += this.counting.count(counter, m, f);
    };
    for (let k = view.atomsCovered; k < end; k++) {
      const atom = atoms.at(k);
      // A facts block in a user message goes after a server compaction block its atom opens with
      // (the provider drops what precedes the block), unless that reply ends the view (a facts
      // turn after it would turn a prefill into a new turn).
      const factsHere = view.facts !== undefined && atom.id === plan?.factsAt;
      const factsAfter =
        factsHere &&
        view.facts!.role !== 'system' &&
        k < atoms.length - 1 &&
        atoms.wire.isCompactionStart?.(atom.messages[0]!) === true;
      // The hooks' pinned block is a system message: it goes before a facts block in a user
      // message, so no system message follows the conversation's start.
      if (view.pinned && atom.id === plan?.pinnedAt) put(view.pinned, PINNED);
      if (factsHere && !factsAfter) put(view.facts!, FACTS);
      const superseded = k < compactedBefore && !keptBefore?.has(k);
      if (view.summary && atom.id === plan?.summary?.at && !superseded) {
        view.summary.forEach((m, i) => {
          put(m, { summary: i });
        });
      }
      if (!edits.dropped.has(atom.id) && !superseded) {
        const rendered = atom.id < planned ? renderAtom(atom, edits, atoms.wire) : atom.messages;
        const bySeq = atom.messages.length === atom.seqs.length;
        rendered.forEach((stored, j) => {
          // Fields the format does not document stay in storage (see wire-fields.ts).
          put(wireMessage(stored, f), bySeq && stored === atom.messages[j] ? atom.seqs[j]! : null);
        });
      }
      if (factsAfter) put(view.facts!, FACTS);
      view.atomsCovered = k + 1;
      if (k < atoms.closedCount) {
        view.closedAtoms = k + 1;
        view.closedMessages = view.messages.length;
        view.closedTokens = view.tokens;
      }
    }
    return view;
  }

  /**
   * The notice `send` puts first in `messages` (a view built under this view's plan) in a format
   * whose requests open with a user turn, where they open with the model's; `counted` is false
   * before a server compaction block, which the API drops unread (see `LiveEntries`).
   */
  private openingNotice(
    messages: readonly Message[],
    format: MessageFormat,
  ): { at: number; message: Message; counted: boolean } | undefined {
    const plan = this.currentPlan;
    const notice = startNotice(messages, () => plan !== null && dropsAny(plan), format);
    if (!notice) return undefined;
    const counted = wireFormat(format).isCompactionStart?.(messages[notice.at]!) !== true;
    return { ...notice, counted };
  }

  /**
   * Tokens `send` adds to `built` in its own format once the view is fitted: the opening notice
   * (`openingNotice`) and the model's turns put between user messages one turn cannot hold
   * together (Converse's documents and images per turn: `turnBreaks`). The guard counts them where
   * it decides and plans a compaction, so that a view they take past the budget is compacted.
   */
  addedTokens(built: BuiltView, format: MessageFormat, counter: TokenCounter): number {
    let tokens = 0;
    const notice = this.openingNotice(built.messages, format);
    if (notice?.counted) tokens += this.counting.count(counter, notice.message, format);
    const breaks = turnBreaks(built.messages, format);
    if (breaks) tokens += breaks.at.length * this.counting.count(counter, breaks.message, format);
    return tokens;
  }

  /**
   * The view as a request sends it, in the wire format `format` asks for: converted where the
   * conversation is in another, with the compaction note at the tail when one is due, and, for
   * Anthropic, a user turn first where the view would open with the assistant.
   */
  send(
    built: BuiltView,
    options: {
      format: MessageFormat;
      conversationFormat: MessageFormat;
      counter: TokenCounter;
      fixedTokens: number;
      budget: number;
      notice: CompactionReceipt | null;
      /** `'auto'`: Anthropic cache breakpoints at the end of the stable prefix (on copies). */
      cacheBreakpoints?: 'auto' | 'off';
      /** Usage levels at which the model is told how much room is left, and the levels told so far. */
      budgetNotice?: { levels: readonly number[]; state: BudgetNoticeState };
      /**
       * contextkit's own summary of the stored messages `fromSeq`–`toSeq`, which a provider's
       * opaque compaction item covered: what another provider is sent in the item's place.
       */
      coveredSummary?: (fromSeq: number, toSeq: number, maxTokens: number) => string;
    },
  ): SentView {
    const { format, counter } = options;
    let messages = built.messages.slice();
    let total = built.tokens + options.fixedTokens;
    if (format !== options.conversationFormat) {
      // Earlier turns' thinking cannot go to another provider (and Anthropic ignores it there).
      const convert = (maxTokens: number) => {
        const plain = this.withoutCompactions(messages, options.conversationFormat, (from, to) =>
          maxTokens > 0 && options.coveredSummary ? options.coveredSummary(from, to, maxTokens) : '',
        );
        const converted = convertMessages(plain, format, { dropThinking: true });
        return {
          converted,
          tokens: this.counting.countFresh(counter, converted, format) + options.fixedTokens,
        };
      };
      // A summary standing for an opaque compaction item takes at most the room the view leaves.
      let sent = convert(0);
      const isItem = wireFormat(options.conversationFormat).isCompactionItem;
      if (options.coveredSummary && isItem && messages.some((m) => isItem(m))) {
        const room = options.budget - NOTICE_RESERVE - sent.tokens - SUMMARY_FRAMING;
        if (room > 0) {
          const withSummary = convert(room);
          if (withSummary.tokens <= options.budget - NOTICE_RESERVE) sent = withSummary;
        }
      }
      messages = sent.converted;
      total = sent.tokens;
    }
    // The note goes at the very end, after any tool results (never between a call and its result),
    // and not after an assistant message (that would turn a prefill into a new turn).
    const due = options.notice;
    const lastRole = messages.at(-1)?.role;
    const put = new Map<IncludeSource, Message>();
    if (this.cache?.facts && built.messages.includes(this.cache.facts)) put.set('facts', this.cache.facts);
    if (this.cache?.pinned && built.messages.includes(this.cache.pinned))
      put.set('pinned', this.cache.pinned);
    // A summary is one message, or the window a provider's compaction returned (its last item).
    const summary = this.cache?.summary;
    if (summary?.length && built.messages.includes(summary[0]!)) put.set('summary', summary.at(-1)!);
    if (due && messages.length > 0 && lastRole !== 'assistant' && lastRole !== 'model') {
      const note = compactionNote(due, format);
      const cost = this.counting.countFresh(counter, [note], format);
      if (total + cost <= options.budget - NOTICE_RESERVE) {
        messages.push(note);
        total += cost;
        put.set('compaction_notice', note);
      }
    }
    let noticeTokens = 0;
    let unmarked: Message[] | undefined;
    const wire = wireFormat(format);
    const notice = this.openingNotice(messages, format);
    if (notice) {
      messages.splice(notice.at, 0, notice.message);
      if (notice.counted) {
        noticeTokens = this.counting.count(counter, notice.message, format);
        total += noticeTokens;
      }
      put.set('start_notice', notice.message);
    }
    // Two user messages side by side whose media one turn cannot hold: a model turn between them.
    const breaks = turnBreaks(messages, format);
    if (breaks) {
      const cost = this.counting.count(counter, breaks.message, format);
      for (let k = breaks.at.length - 1; k >= 0; k--) messages.splice(breaks.at[k]!, 0, breaks.message);
      noticeTokens += cost * breaks.at.length;
      total += cost * breaks.at.length;
    }
    if (wire.withCacheBreakpoints && options.cacheBreakpoints === 'auto') {
      // Marks cost no tokens: the total stands.
      const unchanged = unchangedPrefix(messages, this.lastSent);
      this.lastSent = messages;
      const ends = stablePrefixEnds(messages, [this.cache?.facts, this.cache?.summary?.at(-1)], unchanged);
      unmarked = messages;
      messages = wire.withCacheBreakpoints(messages, ends);
    }
    let budgetNoticed: BudgetNoticeState;
    if (options.budgetNotice) {
      const next = nextBudgetNotice(
        options.budgetNotice.state,
        total / options.budget,
        options.budgetNotice.levels,
      );
      budgetNoticed = next.state;
      // After the last cache breakpoint, at the very end: the cached prefix stays as it was, and
      // the next view (without the notice) still starts with everything before it.
      const last = messages.at(-1)?.role;
      if (next.level !== undefined && messages.length > 0 && last !== 'assistant' && last !== 'model') {
        const note = budgetNote(budgetNoticeText(total, options.budget), format);
        const cost = this.counting.countFresh(counter, [note], format);
        if (total + cost <= options.budget) {
          messages = [...messages, note];
          unmarked = [...(unmarked ?? messages.slice(0, -1)), note];
          total += cost;
          put.set('budget_notice', note);
        } else {
          // No room to say it: told once there is.
          budgetNoticed = options.budgetNotice.state;
        }
      } else if (next.level !== undefined) {
        budgetNoticed = options.budgetNotice.state;
      }
    }
    return {
      messages,
      unmarked: unmarked ?? messages,
      noticeTokens,
      total,
      included: this.newlyIncluded(put),
      ...(options.budgetNotice ? { budgetNoticed } : {}),
    };
  }

  /**
   * The view with the provider's compaction artifacts made readable for another provider, which
   * cannot read them (issue 30): a block with a summary of its own gives its text (see
   * `WireFormat.readableCompaction`); an opaque item (OpenAI's `compaction`, encrypted) gives way
   * to contextkit's summary of the stored messages it covered: the range of the plan's summary when
   * it is the window a `/responses/compact` returned, else everything stored before the item. No
   * summarizer at hand: the item goes without one (the covered facts stay in the facts block).
   */
  private withoutCompactions(
    messages: Message[],
    conversationFormat: MessageFormat,
    coveredSummary: (fromSeq: number, toSeq: number) => string,
  ): Message[] {
    const wire = wireFormat(conversationFormat);
    if (wire.holdsCompaction === undefined || !messages.some((m) => wire.holdsCompaction!(m)))
      return messages;
    const planSummary = this.cache?.plan?.summary;
    const planItems = new Set(this.cache?.summary ?? []);
    const out: Message[] = [];
    for (const m of messages) {
      if (!wire.holdsCompaction(m)) {
        out.push(m);
        continue;
      }
      const readable = wire.readableCompaction?.(m);
      if (readable !== undefined) {
        if (readable !== null) out.push(readable);
        continue;
      }
      const range =
        planSummary && planItems.has(m)
          ? { from: planSummary.fromSeq, to: planSummary.toSeq }
          : this.storedItemRange();
      const text = range ? coveredSummary(range.from, range.to) : '';
      if (text.trim() === '') continue;
      out.push(
        this.blocks.summaryMessage(
          { text, at: -1, fromSeq: range!.from, toSeq: range!.to, tools: 'offline' },
          conversationFormat,
        ),
      );
    }
    return out;
  }

  /** The stored seqs the latest stored compaction item covers: everything stored before it. */
  private storedItemRange(): { from: number; to: number } | undefined {
    const atoms = this.atomIndex;
    if (!atoms) return undefined;
    for (let k = atoms.compactedBefore; k < atoms.length; k++) {
      const atom = atoms.at(k);
      if (holdsServerCompaction(atom, atoms.wire))
        return atom.id > 0 ? { from: 0, to: atom.id - 1 } : undefined;
    }
    return undefined;
  }

  /** Those of contextkit's own messages whose text the last view sent did not carry. */
  private newlyIncluded(put: Map<IncludeSource, Message>): SentView['included'] {
    const included: SentView['included'] = [];
    const now = new Map<IncludeSource, string>();
    for (const [source, message] of put) {
      const content = messageText(message);
      now.set(source, content);
      if (this.lastIncluded.get(source) !== content) included.push({ source, content });
    }
    this.lastIncluded = now;
    return included;
  }
}
