/**
 * Issue 32 item 1, a turn costs its view, not its history: the manager's side of the stored view
 * record (src/view/stored-view.ts). A manager that built a view from the whole history keeps the
 * record beside the conversation when what is stored is stale (`keepStoredView`); a manager that
 * has not loaded the conversation serves a request from the record and the rows the view holds
 * (`serveStoredView`), or says it cannot (the caller then loads the whole history and fits the
 * request as always). Both build the view with the same `View` and guard, so it is the same view.
 */

import { decodePlan, planSum, storedPlanSum } from './compaction/plan.js';
import { InvalidMessageError } from './errors.js';
import { wireFormat } from './formats/registry.js';
import type { GuardConversation } from './guard/guard.js';
import { WholeHistoryNeeded } from './guard/guard-types.js';
import {
  decodeBudgetNoticed,
  decodeGuardState,
  decodeUsageWarning,
  encodeBudgetNoticed,
  encodeUsageWarning,
} from './guard/stored-guard-state.js';
import { frozenEntry, storedMessageKeeping } from './history/history.js';
import type { AfterAdded } from './manager-added.js';
import type { ManagerParts } from './manager-parts.js';
import { restoreAhead, restoreGuardState } from './manager-parts.js';
import { runDeferredCompaction } from './manager-requests.js';
import type { ResolvedRequest } from './measure/measurer.js';
import { freezeDeep } from './messages/freeze.js';
import { jsonValueIssues } from './messages/json-limits.js';
import type { HistoryEntry, Message, MessageFormat } from './messages/types.js';
import { resetUsageWarning } from './meter/usage-warning.js';
import type { AddedMessage, AddMessageOptions, RequestOptions } from './options.js';
import type { StoredEntry } from './stores/types.js';
import { countKey } from './tokens/count-key.js';
import {
  decodeStoredView,
  encodeStoredView,
  filterMayHold,
  idFilter,
  prefixItems,
  STORED_VIEW_VERSION,
  type StoredView,
} from './view/stored-view.js';
import type { PrefixSource } from './view/view.js';
import { shownMessage } from './wire/shown-entries.js';
import { validateJsonCheckedMessage } from './wire/validate-message.js';
import { wireMessage } from './wire/wire-fields.js';

/** Entries past a record's prefix after which a manager that built the view whole writes a new one. */
export const REWRITE_AFTER = 256;

/** What a manager knows of the record stored for its conversation (none: null). */
export interface KnownRecord {
  epoch: string | null;
  plan: string | null;
  entries: number;
  counterId: string;
}

/** The record's figures this manager knows of, from the metadata it loaded. */
export function knownRecord(meta: Record<string, unknown> | null): KnownRecord | null {
  const record = decodeStoredView(meta?.storedView);
  if (typeof record === 'string') return null;
  return { epoch: record.epoch, plan: record.plan, entries: record.entries, counterId: record.counterId };
}

/**
 * After a request built from the whole history: writes the record of its view's closed part when
 * the one stored is stale (another generation, plan or counter, or `REWRITE_AFTER` entries behind),
 * unless the view cannot be stood for by one (ephemeral or skipped entries, a provider's compaction,
 * counts still bounds) or the plan stored is no longer the view's (compare-and-set on its digest).
 * Resolves with what is stored then; a failed write only warns.
 */
export async function keepStoredView(
  parts: Pick<ManagerParts, 'history' | 'conversation' | 'measurer' | 'live'>,
  r: ResolvedRequest,
  known: KnownRecord | null,
  warn: (code: string, message: string) => void,
): Promise<KnownRecord | null> {
  const { history, conversation: c, measurer, live } = parts;
  // The format the view was built in: the conversation's, or the request's while it shows none.
  const format = history.format ?? r.format;
  if (!history.storedInOrder || live.compactionSeq !== undefined) return known;
  if (measurer.hasBounds(r.counter)) return known;
  const prefix = c.view.closedPrefix();
  if (!prefix || c.entries !== history.entries) return known;
  const plan = planSum(prefix.plan);
  const epoch = history.storeEpoch;
  if (
    known &&
    known.epoch === epoch &&
    known.plan === plan &&
    known.counterId === r.counter.id &&
    prefix.entries - known.entries < REWRITE_AFTER
  )
    return known;
  const wire = wireFormat(format);
  if (prefix.messages.some((m) => wire.holdsCompaction?.(m))) return known;
  const counts = prefix.messages.map((m) => measurer.count(r.counter, m, format));
  if (counts.reduce((a, b) => a + b, 0) !== prefix.tokens) return known;
  const entries = history.entries;
  const items = prefixItems(prefix.messages, prefix.sources, (seq) => {
    const entry = entries[seq];
    const shown = entry && shownMessage(entry.message, wire);
    return shown && wireMessage(shown, format);
  });
  const record: StoredView = {
    v: STORED_VIEW_VERSION,
    epoch,
    plan,
    counterId: r.counter.id,
    format,
    entries: prefix.entries,
    items,
    counts,
  };
  if (history.format === undefined) record.formatless = true;
  const ids = wire.uniqueToolIds ? idFilter(prefix.toolIds) : undefined;
  if (ids !== undefined) record.ids = ids;
  try {
    const unwritten = await history.updateMeta((stored) =>
      storedPlanSum(stored?.plan) === plan ? { storedView: encodeStoredView(record) } : null,
    );
    if (unwritten !== undefined) return known;
  } catch (err) {
    warn('stored_view', `could not keep the view's record beside the conversation: ${String(err)}`);
    return known;
  }
  return { epoch, plan, entries: prefix.entries, counterId: r.counter.id };
}

/**
 * A request of a manager that has not loaded its conversation, served from the stored record and
 * the rows the view holds: the record's runs and the rows after its prefix read, checked as a load
 * checks them, counted (with the counts stored beside them), and the guard fits the request on the
 * view the record starts. Resolves to undefined, having emitted nothing, when the record cannot
 * serve it (none, stale, unreadable: with a warning, a row that is not a valid message, a request
 * that needs the whole history): the caller then loads it.
 */
export async function serveStoredView(
  parts: Pick<ManagerParts, 'store' | 'settings' | 'measurer' | 'guard' | 'conversation' | 'heldMeta'>,
  request: RequestOptions,
  warn: (code: string, message: string) => void,
  seqsFor: (epoch: string | null) => WeakMap<object, number>,
): Promise<ServedView | undefined> {
  const { store, measurer, guard } = parts;
  if (!store) return undefined;
  const id = parts.settings.conversationId;
  const [meta, epoch] = await Promise.all([store.getMeta(id), store.epoch(id)]);
  const record = decodeStoredView(meta.value?.storedView);
  if (record === 'absent') return undefined;
  if (record === 'unreadable') {
    warn(
      'stored_view_unreadable',
      `the stored view record of conversation ${JSON.stringify(id)} is corrupt, was changed, or was written by another version: the whole history is loaded instead`,
    );
    return undefined;
  }
  if (record.epoch !== epoch || storedPlanSum(meta.value?.plan) !== record.plan) return undefined;
  // Its sum held: `storedPlanSum` is the sum it holds.
  const plan = decodePlan(meta.value?.plan, { sumChecked: true });
  if (record.plan !== null && plan === null) return undefined;
  // A guard state it cannot use is the load's to warn of (it starts the guard afresh).
  if (decodeGuardState(meta.value?.guard) === 'unreadable') return undefined;
  if (decodeUsageWarning(meta.value?.usageWarning, epoch) === 'unreadable') return undefined;
  if (decodeBudgetNoticed(meta.value?.budgetNoticed, epoch) === 'unreadable') return undefined;
  // The format the view is built in; the conversation's own, unless it showed none yet.
  const format = record.format;
  const conversationFormat = record.formatless ? undefined : format;
  // The calibration's first load reads the metadata just read rather than reading it again.
  parts.heldMeta.record = meta;
  let r: ResolvedRequest;
  try {
    const prepared = measurer.prepare(request, conversationFormat);
    r = prepared instanceof Promise ? await prepared : prepared;
  } finally {
    parts.heldMeta.record = undefined;
  }
  if (r.counter.id !== record.counterId) return undefined;
  // A conversation without a format is built in the request's: another request, another view.
  if (conversationFormat === undefined && r.format !== format) return undefined;
  const spans = readSpans(record.items.filter((item): item is [number, number] => Array.isArray(item)));
  const [spanRows, tailRows] = await Promise.all([
    // The prefix's counts are the record's: its rows are read without theirs.
    Promise.all(
      spans.map(([from, to]) => store.read(id, { fromSeq: from, limit: to - from + 1, counts: false })),
    ),
    store.read(id, { fromSeq: record.entries }),
  ]);
  const rowsBySeq = new Map<number, StoredEntry>();
  for (const rows of spanRows) for (const row of rows) rowsBySeq.set(row.seq, row);
  // A replace between the reads would mix generations: the generation is read again after them.
  if ((await store.epoch(id)) !== epoch) return undefined;
  const seqs = seqsFor(epoch);
  const wire = wireFormat(format);
  // The prefix's messages: rows shown as a view shows them, the plan's own, the edited ones.
  const prefix: Array<Message | PrefixSource> = [];
  const prefixSeqs: Array<number | null> = [];
  for (const item of record.items) {
    if (Array.isArray(item)) {
      for (let seq = item[0]; seq <= item[1]; seq++) {
        const row = rowsBySeq.get(seq);
        const message = row && checkedRow(row, seq, conversationFormat, seqs);
        const shown = message && shownMessage(message, wire);
        if (!shown) return undefined;
        prefix.push(wireMessage(shown, format));
        prefixSeqs.push(seq);
      }
    } else if ('message' in item) {
      const message = checkedMessage(item.message, conversationFormat);
      if (!message) {
        warn(
          'stored_view_unreadable',
          `the stored view record of conversation ${JSON.stringify(id)} holds a message that is not valid: the whole history is loaded instead`,
        );
        return undefined;
      }
      prefix.push(message);
      prefixSeqs.push(null);
    } else {
      prefix.push(item);
      prefixSeqs.push(null);
    }
  }
  // The rows after the prefix, as a load takes them in.
  const entries: HistoryEntry[] = [];
  const storedCounts = new Map<Message, number>();
  const key = countKey(r.counter);
  for (const [k, row] of tailRows.entries()) {
    const message = checkedRow(row, record.entries + k, conversationFormat, seqs);
    if (!message) return undefined;
    const entry = frozenEntry(row.seq, message, row.metadata, row.id);
    entries.push(entry);
    const n = row.counts?.[key];
    if (n !== undefined) storedCounts.set(entry.message, n);
  }
  const c = partialConversation(parts, meta.value, epoch, conversationFormat, entries);
  // The view starts on `plan` (seeded below), whose digest the record was just checked against: a
  // summary prepared for its successor is restored on it.
  // Unwarned here: a record it cannot read makes a preparation due, which loads and warns.
  restoreAhead(c, meta.value, epoch, { plan, digest: record.plan });
  let collided = false;
  const mayHold = filterMayHold(record.ids);
  const memo = measurer.memoFor(r.counter);
  const earlierIds = wire.uniqueToolIds
    ? (toolId: string) => {
        if (mayHold(toolId)) collided = true;
        return false;
      }
    : undefined;
  const seed = (count: (m: Message, i: number) => number) =>
    c.view.seed(plan, format, r.counter.id, prefix, record.entries, count, earlierIds, prefixSeqs);
  const seeded: Array<{ message: Message }> = [];
  try {
    // The prefix's tokens as stored, each checked as a stored count is (a wrong one is counted again).
    seed((m, i) => {
      const n = measurer.checkedStoredCount(r.counter, m, format, record.counts[i]!);
      memo.set(m, n);
      seeded.push({ message: m });
      return n;
    });
  } catch {
    // The plan makes no message the record names: not the plan it was written under.
    return undefined;
  }
  const counting = measurer.countAhead(r.counter, entries, 0, r.format, (m) => {
    const n = storedCounts.get(m);
    return n === undefined
      ? undefined
      : measurer.checkedStoredCount(r.counter, m, conversationFormat ?? 'openai', n);
  });
  if (typeof counting !== 'number') await counting;
  // The stored counts of the whole view checked together, as a load checks them (issue 31): too
  // little in all, and each is counted again; the prefix then starts from the corrected counts.
  const mismatches = measurer.storedMismatches;
  await measurer.recheckStoredCounts(r.counter, [...seeded, ...entries], r.format, r.budget);
  if (measurer.storedMismatches !== mismatches) seed((m) => measurer.count(r.counter, m, format));
  // Grouped first: a tool id the prefix may have shown is renamed in a whole view, not here.
  c.view.build(entries, format, r.counter);
  if (collided) return undefined;
  try {
    const decision = await guard.fit(c, r, request);
    if (decision.action === 'decline') throw decision.error;
    // What `usage()` and `recordUsage` read of the last request, and the cost meter's state, which
    // later requests (served so or not) go on from.
    parts.conversation.lastUsage = c.lastUsage;
    if (c.meters) parts.conversation.meters = c.meters;
    const served: ServedView = {
      messages: decision.messages!,
      target: epoch === null ? undefined : { format: conversationFormat, epoch },
    };
    if (c.aheadDue) served.ahead = { request: c.aheadDue, usage: c.state.usage ?? 0 };
    if (c.compactDue) served.compact = c.compactDue;
    return served;
  } catch (err) {
    if (err instanceof WholeHistoryNeeded) return undefined;
    throw err;
  }
}

/** A request served from the stored record (see `serveStoredView`). */
export interface ServedView {
  messages: Message[];
  target: UnloadedTarget | undefined;
  /**
   * The summary to prepare ahead that the request found due (summaryAhead), with the usage the
   * view was at: it needs the whole history, so the manager prepares it after the request.
   */
  ahead?: { request: ResolvedRequest; usage: number };
  /**
   * The compaction the request put off (`compactAfterRequest`): it needs the whole history, so
   * the manager makes it after the request.
   */
  compact?: NonNullable<GuardConversation['compactDue']>;
}

/** Rows between two runs of a record past which they are read apart (fewer reads, few rows more). */
const READ_GAP = 64;

/** The record's runs as the spans read: runs closer than `READ_GAP` rows read together. */
function readSpans(runs: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const [from, to] of runs) {
    const last = spans.at(-1);
    if (last && from - last[1] - 1 <= READ_GAP) last[1] = to;
    else spans.push([from, to]);
  }
  return spans;
}

/** The conversation the guard fits a served request on: the rows after the prefix, the stored guard state. */
function partialConversation(
  parts: Pick<ManagerParts, 'guard' | 'conversation'>,
  meta: Record<string, unknown> | null,
  epoch: string | null,
  format: MessageFormat | undefined,
  entries: readonly HistoryEntry[],
): GuardConversation {
  const c: GuardConversation = {
    entries,
    format,
    view: parts.guard.createView(),
    state: { level: undefined, usage: undefined, usageWarning: resetUsageWarning() },
    noticeDue: null,
    lastUsage: null,
    partial: true,
    // What the request puts off, the manager makes after it (`compactAfterRequest`).
    afterRequest: true,
  };
  if (parts.conversation.meters) c.meters = parts.conversation.meters;
  // The guard's stored state is written as a loaded conversation writes it (the flag of a
  // compaction the request before made is cleared).
  const save = parts.conversation.save;
  if (save) {
    c.save = save;
    // In the generation the record was read in (the history, not loaded, knows none yet).
    c.saveUsageWarning = (state) => save({ usageWarning: encodeUsageWarning(state, epoch) });
    c.saveBudgetNoticed = (level) => save({ budgetNoticed: encodeBudgetNoticed(level, epoch) });
  }
  restoreGuardState(c, meta, epoch);
  return c;
}

/**
 * A stored row's message as a load checks it (`storedMessageKeeping`), frozen; undefined when it is not
 * one, is not the row at `seq`, or would change the conversation's format.
 */
function checkedRow(
  row: StoredEntry,
  seq: number,
  format: MessageFormat | undefined,
  seqs: WeakMap<object, number>,
): Message | undefined {
  if (row.seq !== seq) return undefined;
  try {
    const message = storedMessageKeeping(row, format);
    if (!message) return undefined;
    // A view shows this row as this object: `storedSeqOf` tells it by its seq.
    seqs.set(message, seq);
    return freezeDeep(message);
  } catch (err) {
    if (err instanceof InvalidMessageError) return undefined;
    throw err;
  }
}

/** A message the record keeps whole, checked as a message is; undefined when it is not one. */
function checkedMessage(message: unknown, format: MessageFormat | undefined): Message | undefined {
  if (jsonValueIssues(message, 'message').length > 0) return undefined;
  try {
    return freezeDeep(validateJsonCheckedMessage(message, 'message', format));
  } catch (err) {
    if (err instanceof InvalidMessageError) return undefined;
    throw err;
  }
}

/** What `addMessage` resolves with. */
export function addedMessage(seq: number, duplicate: boolean, options: AddMessageOptions): AddedMessage {
  return options.id === undefined ? { seq, duplicate } : { seq, duplicate, id: options.id };
}

/** What a manager that has not loaded its conversation knows of it: its format (none yet: undefined) and generation. */
export interface UnloadedTarget {
  format: MessageFormat | undefined;
  epoch: string;
}

/**
 * The manager's calls before it loads its conversation (`storedView`): a request served from the
 * stored record, messages appended without reading the history; and, once it has loaded it, the
 * record kept up to date after each request. Each unloaded call resolves to undefined when it
 * cannot answer as the loaded manager would; the manager then loads the conversation.
 */
export class UnloadedCalls {
  /** What this manager knows of the stored record (after a load, or a record it wrote). */
  private known: KnownRecord | null = null;
  /** The conversation's format and generation, learnt from the record before any load. */
  private target: UnloadedTarget | null = null;
  /**
   * The seq of each stored row the views served here held (`storedSeqOf`; only those, never the
   * history), in the one generation they were read in: a view of another one starts anew.
   */
  private served: { epoch: string | null; seqs: WeakMap<object, number> } | null = null;
  private seqsFor = (epoch: string | null): WeakMap<object, number> => {
    if (this.served?.epoch !== epoch) this.served = { epoch, seqs: new WeakMap() };
    return this.served.seqs;
  };
  /** Set when a request could not be served from the record: the next record is written whatever it is. */
  private rewrite = false;

  constructor(
    private readonly parts: ManagerParts,
    private readonly after: AfterAdded,
    /** Queues an operation after the ones already queued; it runs once the history is loaded. */
    private readonly enqueue: (op: () => Promise<void>) => Promise<void>,
    /** What a request of the loaded manager does before its view is built (counts taken and checked). */
    private readonly beforeView: (r: ResolvedRequest) => Promise<void>,
  ) {}

  private get on(): boolean {
    return this.parts.settings.storedView && this.parts.store !== null;
  }

  private warn = (code: string, message: string): void => this.parts.measurer.warn(code, message);

  /** The conversation's format as the record names it, before the history is loaded. */
  get format(): MessageFormat | undefined {
    return this.target?.format;
  }

  /**
   * The seq of a stored row a view served here holds as this very object, else undefined; also
   * undefined once the manager holds another generation than the view was served in (`epoch`,
   * once it loaded: a seq of a replaced conversation names another message, or none).
   */
  storedSeqOf(message: object, epoch?: string | null): number | undefined {
    const served = this.served;
    if (served === null || (epoch !== undefined && served.epoch !== epoch)) return undefined;
    return served.seqs.get(message);
  }

  /** After the manager loaded its conversation: what its metadata says of the record. */
  loaded(meta: Record<string, unknown> | null): void {
    this.known = knownRecord(meta);
    this.target = null;
  }

  /** `getMessagesForRequest` unloaded (see `serveStoredView`). */
  async request(request: RequestOptions): Promise<{ served: Message[] } | undefined> {
    if (!this.on) return undefined;
    const served = await serveStoredView(this.parts, request, this.warn, this.seqsFor);
    this.target = served?.target ?? null;
    // Not served (no record, a tool id the record may have shown, a row it could not take): the
    // request loads the history, and its view's record is written afresh for the next worker.
    if (!served) this.rewrite = true;
    if (served?.ahead) this.prepareAfter(served.ahead);
    if (served?.compact) this.compactAfter(served.compact);
    return served && { served: served.messages };
  }

  /**
   * The compaction a served request put off (`compactAfterRequest`), made after it: the history is
   * loaded then, off the request path, and counted as a request counts it; the compaction runs as
   * after a request fitted from the whole history (`runDeferredCompaction`), and the record of the
   * new plan's view is kept. Queued right behind the request, so the next call and `close()` wait
   * for it.
   */
  private compactAfter(due: NonNullable<ServedView['compact']>): void {
    this.enqueue(async () => {
      await this.beforeView(due.request);
      this.parts.conversation.compactDue = due;
      await runDeferredCompaction(this.parts, () => this.keep(due.request));
      // The queue's own failures (a store that cannot load) are the next operation's to report.
    }).catch(() => undefined);
  }

  /**
   * The summary a served request found due to prepare ahead, prepared after it: the history is
   * loaded then, off the request path (the request before this one loaded it first, and waited
   * for it). Queued right behind the request, so the next call and `close()` wait for it: a
   * stateless worker that closes after its turn still prepares. The loaded conversation takes the
   * usage the served view was at (what is stored of it dates from the last compaction), and the
   * preparation runs as after a request fitted from the whole history; its failures are warnings,
   * as there.
   */
  private prepareAfter(ahead: NonNullable<ServedView['ahead']>): void {
    this.enqueue(async () => {
      const { conversation, guard } = this.parts;
      conversation.state.usage = ahead.usage;
      conversation.aheadDue = ahead.request;
      await guard.preparation(conversation)?.();
      // The queue's own failures (a store that cannot load) are the next operation's to report.
    }).catch(() => undefined);
  }

  /** `addMessage` unloaded (see `add`). */
  async addOne(message: unknown, options: AddMessageOptions): Promise<{ served: AddedMessage } | undefined> {
    const entries = await this.add([message], options);
    return entries && { served: addedMessage(entries[0]!.seq, false, options) };
  }

  /** `addMessages` unloaded (see `add`). */
  async addAll(
    messages: readonly unknown[],
    options: AddMessageOptions,
  ): Promise<{ served: undefined } | undefined> {
    return (await this.add(messages, options)) ? { served: undefined } : undefined;
  }

  /** `op` with the conversation's format, when an unloaded call learnt it (else undefined: load). */
  async whenFormatKnown<T>(
    op: (format: MessageFormat | undefined) => Promise<T>,
  ): Promise<{ served: T } | undefined> {
    return this.target ? { served: await op(this.target.format) } : undefined;
  }

  /** `addMessage`/`addMessages` unloaded: the messages appended unread (see `History.appendUnloaded`). */
  private async add(
    messages: readonly unknown[],
    options: AddMessageOptions,
  ): Promise<HistoryEntry[] | undefined> {
    if (!this.on || options.ephemeral) return undefined;
    const target = this.target ?? (await this.readTarget());
    if (!target) return undefined;
    const starts = target.format === undefined ? undefined : wireFormat(target.format).isCompactionStart;
    const entries = await this.parts.history.appendUnloaded(
      messages,
      options,
      target.format,
      target.epoch,
      // A provider's compaction block resets the stored plan: the loaded path does that.
      (m) => starts?.(m) === true,
    );
    this.target = entries ? target : null;
    if (entries) await this.after.added(entries, options, target.format);
    return entries;
  }

  /** After a request fitted from the whole history: the record kept (see `keepStoredView`). */
  async keep(r: ResolvedRequest): Promise<void> {
    if (!this.on) return;
    this.known = await keepStoredView(this.parts, r, this.rewrite ? null : this.known, this.warn);
    this.rewrite = false;
  }

  /** The format and generation the stored record names, when it is the conversation's current one. */
  private async readTarget(): Promise<UnloadedTarget | null> {
    const { store, settings } = this.parts;
    const [meta, epoch] = await Promise.all([
      store!.getMeta(settings.conversationId),
      store!.epoch(settings.conversationId),
    ]);
    const record = decodeStoredView(meta.value?.storedView);
    if (typeof record === 'string' || epoch === null || record.epoch !== epoch) return null;
    return { format: record.formatless ? undefined : record.format, epoch };
  }
}
