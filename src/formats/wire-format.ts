/**
 * What a wire format is: everything that differs between the providers' message shapes, behind
 * one interface, so the core (history, measurer, guard, planner, view, recall, eval, cli) asks
 * the conversation's format and never names one. A format is one folder under `src/formats/` and
 * one line in `registry.ts`; see the README's "What every view holds" for the invariants every format keeps (a view is valid
 * for the provider, the stored history is never changed) and `testFormat()` for the suite that
 * checks them.
 *
 * Members take the stored messages as the format stores them (`M`) and any message as `Message`
 * where a caller may hold another format's (conversion, detection).
 */

import type { MessageIssue } from '../errors.js';
import type { BuildResult, SeenIds } from '../messages/atom-kit.js';
import type { ConvertOptions } from '../messages/convert-options.js';
import type { RequestProblem } from '../messages/request-kit.js';
import type { AnthropicTextBlock, HistoryEntry, Message, ToolDefinition } from '../messages/types.js';
import type { UsageSample } from '../meter/usage.js';
import type { ProviderFamily } from '../tokens/types.js';

/** The field of a message that only one format has, found by that format's detection. */
export interface Evidence {
  /** Path inside the message, e.g. `role`, `tool_calls`, `content[2].type`. */
  field: string;
  /** What was found there, for error messages: `role "tool"`, `a "tool_use" block`. */
  found: string;
}

/** What a format's request builder returns: the body fields of the provider's request. */
export type RequestBody = Record<string, unknown>;

/** What to count: the request as it would be sent, in any message format. */
export interface CountRequest {
  model: string;
  /** The view; `role: "system"` messages become the system prompt. */
  messages: readonly Message[];
  /** A system prompt given apart; it comes before the view's own system messages. */
  system?: string | readonly AnthropicTextBlock[];
  tools?: readonly ToolDefinition[];
}

/** A view read in a format: the core detects and converts (a format folder cannot). */
export interface ViewReader {
  /** The format the view is in (undefined: plain text, which fits every format). */
  readonly format: string | undefined;
  /** The view in format `to` (`convertMessages`). */
  as(to: string): Message[];
}

/** A provider's token-counting endpoint, which counts a view in any format. */
export interface CountEndpoint {
  /** The name `createCountClient({ provider })` takes for it ('anthropic', 'google'). */
  readonly provider: string;
  /** The API's base URL when none is given. */
  readonly baseURL: string;
  /** The field of the JSON reply holding the input token count. */
  readonly field: string;
  /** The URL counting for `model` and its headers (`version`: the Anthropic API version asked). */
  target(
    baseURL: string,
    model: string,
    apiKey: string,
    version: string,
  ): { url: string; headers: Record<string, string> };
  /** The JSON body counting `request`, its messages read through `view`. */
  body(request: CountRequest, view: ViewReader): RequestBody;
}

/**
 * What the shared token counter lends a format to count what only its messages hold (a block
 * keyed by its member, Gemini's parts): the counter's own tokenizer, media costs and framing.
 */
export interface BlockCounting {
  /** The provider family whose image, document and framing costs apply. */
  readonly provider: ProviderFamily;
  /** Tokens of a text (exact or estimated, as the counter does). */
  bpe(text: string): number;
  /** Adds tokens that are not text (framing, media), which an estimate factor does not scale. */
  fixed(n: number): void;
  /** Tokens of an image from its base64 bytes (undefined: dimensions unknown). */
  image(base64: string | undefined): number;
  /** Tokens of a PDF from its base64 bytes (undefined: pages unknown). */
  pdf(base64: string | undefined): number;
  /** Tokens of encrypted content given as base64 (scaled by its size). */
  encrypted(base64: string): number;
  /** Tokens of every string a value holds, as the counter estimates a block it does not know. */
  fields(value: unknown): number;
  readonly perToolCall: number;
  readonly perToolResult: number;
}

/**
 * A text of a message that truncation may cut: block `block` (and `inner` inside it, -1 for none)
 * of the message; `slotBlock` is the block index of the tool result it belongs to (-1: the whole
 * message is the result, or it is no result's text).
 */
export interface EditableText {
  block: number;
  inner: number;
  slotBlock: number;
  text: string;
}

/**
 * How a plan edits a message of a shape only this format has (Gemini parts, Converse blocks keyed
 * by their member), which the shared editing (string content, typed content blocks) cannot read.
 * Every function returns a new frozen message, or the message itself where nothing applies.
 */
export interface MessageEdits {
  /** Whether `message` has this format's own shape (then the members below edit it). */
  owns(message: Message): boolean;
  /** The texts of `message` truncation may cut (never reasoning, signed parts or tool inputs). */
  textParts(message: Message): EditableText[];
  /** The message with the text at (`block`, `inner`) replaced by `cut(text)`; undefined when there is none. */
  truncated(
    message: Message,
    block: number,
    inner: number,
    cut: (text: string) => string,
  ): Message | undefined;
  /** The model's message with the inputs of its `indices`-th tool calls emptied. */
  inputsCleared(message: Message, indices: ReadonlySet<number>): Message;
}

/** A tool call as a reader lists it: id (or name when it has none), name, JSON arguments, its block. */
export interface CallRef {
  id: string;
  name: string;
  args: string;
  /** The call's own block, part or entry (what `callAlone` takes). */
  block: unknown;
}

/** One labelled piece of what a message says, for the context tools (see `entrySegments`). */
export interface MessagePiece {
  role: 'user' | 'assistant';
  kind: 'text' | 'call' | 'result';
  text: string;
  /** The tool's name, for calls and results. */
  name?: string;
  /** For calls and results: the call's id, where the format gives one (pairs a result with its call). */
  id?: string;
  isError?: boolean;
}

/**
 * Reading a message of a shape only this format has, where the shared readers
 * (`wire/content.ts`, for messages of any format: their callers hold none) do not know it:
 * Gemini's `parts`, a Responses item without a role. A member left out is read the shared way.
 */
export interface MessageReader {
  /** Whether `message` has this format's own shape (then the members below read it). */
  owns(message: Message): boolean;
  /** What a message without a role is, for listings (a Responses item's type). */
  kind?(message: Message): string | undefined;
  /** All the readable text, joined by newlines (see `messageText`). */
  text?(message: Message): string;
  /** Whether the message asks for tool calls. */
  hasCalls?(message: Message): boolean;
  /** Ids of the calls it makes, in order. */
  callIds?(message: Message): string[];
  /** The calls it makes, in order. */
  calls?(message: Message): CallRef[];
  /** Ids of the calls it answers, in order. */
  resultIds?(message: Message): string[];
  /** Whether it carries tool results. */
  isResult?(message: Message): boolean;
  /** Each result it carries: the call id (or name) it answers and a message holding it alone. */
  results?(message: Message): Array<{ id: string; alone: Message }>;
  /** For a user message: whether it says something of its own besides tool results. */
  hasUserContent?(message: Message): boolean;
  /** What it says, piece by piece, in order (not asked for system messages). */
  pieces?(message: Message): MessagePiece[];
}

/**
 * One provider wire format. `M` is the message (or item, or content) type the format stores.
 * Every member is a pure function of its arguments (no state), so one object serves every
 * conversation; the core resolves it once per conversation, never per message in a hot loop.
 */
export interface WireFormat<M extends object = Message> {
  /** The stored name (`MessageFormat`): 'openai', 'anthropic', 'openai-responses', 'gemini', …. */
  readonly name: string;
  /** The name a person reads in errors and reports: 'OpenAI', 'Anthropic', 'Gemini', …. */
  readonly label: string;
  /**
   * The provider family whose tokenizer, message framing, image pricing and catalog entries
   * count this format's messages when the model is unknown ('openai' | 'anthropic' | 'google').
   */
  readonly provider: ProviderFamily;
  /** The model counted for when a caller names none (a catalog key). */
  readonly defaultModel: string;
  /**
   * True for the format a conversation of plain text is made valid for when the request's model
   * is of this format's provider, or when no model is named (the format with the strictest rules:
   * Anthropic). Absent: such a conversation is sent as plain Chat Completions messages.
   */
  readonly readsPlain?: boolean;

  // ------------------------------------------------------------------------- detection

  /**
   * Order in which formats are asked for message-level evidence (lower first). Shapes that
   * another format's test could mistake come first: Gemini's `parts`, then Responses items.
   */
  readonly detectRank: number;
  /**
   * Message-level evidence that `message` is in this format (a field, role or item type only it
   * has), or undefined. Content block types are asked separately, through `blockEvidence`.
   */
  messageEvidence(message: Readonly<Record<string, unknown>>): Evidence | undefined;
  /**
   * For a `content[i].type` only this format has, the `found` text (`a "tool_use" content block`);
   * undefined for types it shares or does not know. Blocks are scanned in order across formats,
   * so the first block any format claims decides.
   */
  blockEvidence?(type: string): string | undefined;
  /**
   * True for the one format that claims a content block type no format knows (a block a future
   * API adds), as weak evidence: it makes a new conversation this format, never contradicts one.
   */
  readonly claimsUnknownBlocks?: boolean;
  /**
   * Whether a conversation in this format takes a message showing `evidence` of another format
   * without a mismatch (`earlier` false: the message joins; true: a message stored before this
   * format was known, which then makes the conversation this format).
   */
  accepts?(evidence: Evidence & { format: string }, earlier: boolean): boolean;

  // ------------------------------------------------------------------------ validation

  /**
   * Every problem of one message (or item) in this format, paths under `path` (`messages[3]`).
   * `message` is an object whose nesting depth the core already checked (`validateMessage`).
   */
  messageIssues(message: unknown, path: string): MessageIssue[];
  /**
   * Pushes onto `problems` what the provider would refuse in a whole request beyond each message's
   * own issues (roles out of order, a call left unanswered, no user turn), at `messages[index]`.
   */
  requestProblems(messages: readonly unknown[], problems: RequestProblem[]): void;
  /**
   * Where a view must put a turn of the model's between two user messages so that the provider
   * takes the request (Converse joins messages side by side into one turn, whose media are
   * limited): `at` gives the indexes of the messages to put one before, ascending. Absent: never.
   */
  turnBreaks?: {
    at(messages: readonly unknown[]): number[];
    /** The model's turn with `text` (what a view puts at each break). */
    message(text: string): M;
  };
  /**
   * The fields the provider's request takes for `message` (a view sends only these), or
   * undefined to send the message as stored.
   */
  wireFields(message: M): ReadonlySet<string> | undefined;
  /**
   * The message a view shows for a stored one that needs changing: a cleaned copy (empty text
   * left out), the message in this format's shape (a plain `{ role, content: string }` message
   * that fits every format, `native` false), or undefined to leave it out; the message itself
   * when it is fine. `native`: the message shows evidence of a format (it is not plain text).
   * Absent: every stored message is shown as it is. Results are memoized per message by the core.
   */
  shownMessage?(message: Message, native: boolean): Message | undefined;

  // --------------------------------------------------------------------------- atoms

  /**
   * Groups `entries` (already through `shownMessage`) from index `from` into atoms: pairs calls
   * with results, repairs what logs get wrong in the view only. `seen` holds the tool ids
   * earlier atoms showed, for formats whose ids must be unique across the request.
   */
  buildAtoms(entries: readonly HistoryEntry[], from: number, seen: SeenIds): BuildResult;
  /** Whether tool ids must be unique across a whole request (so closed atoms' ids are remembered). */
  readonly uniqueToolIds: boolean;

  // ----------------------------------------------------------------- reading and counting

  /** Reading messages of a shape only this format has (absent: the shared readers know them). */
  readonly reader?: MessageReader;
  /**
   * BPE tokens of a content block the shared counter does not know (one keyed by its member, with
   * no `type`), non-text costs through `c.fixed`; undefined: not a block of this format.
   */
  blockTokens?(block: Record<string, unknown>, c: BlockCounting): number | undefined;
  /**
   * BPE tokens of what a message holds beyond the fields the shared counter reads (`role`, `name`,
   * `content`, `tool_calls`): Gemini's `parts`; 0 when it holds nothing more.
   */
  messageTokens?(message: Record<string, unknown>, c: BlockCounting): number;
  /**
   * Every problem of a message that shows no format's evidence (plain text), for the format plain
   * messages are read as (`PLAIN_FORMAT`); absent: its `messageIssues`.
   */
  plainIssues?(message: Record<string, unknown>, path: string): MessageIssue[];
  /**
   * The content block types in `message` that no format documents (a block a future API adds), for
   * a one-time warning; asked of the format that `claimsUnknownBlocks`.
   */
  futureBlockTypes?(message: Message): string[];

  // ------------------------------------------------------------------------- editing

  /** Editing messages of a shape only this format has (absent: the shared editing knows them). */
  readonly edits?: MessageEdits;
  /**
   * The message with the tool result at block `blockIndex` (a block or part of the message, not
   * the whole message) cleared to `text` in this format's own shape: ids, status and error flag
   * kept, so the call is still answered as it was; undefined when there is no result there.
   */
  clearResult?(message: Message, blockIndex: number, text: string): Message | undefined;
  /**
   * For a content block whose result text is not kept in its `text` or `content` (a server tool's
   * result, a Converse `toolResult`): what it carries, text or nested content, for sizing what
   * clearing saves; undefined for any other block.
   */
  resultContent?(block: Record<string, unknown>): unknown;
  /**
   * For a message whose results the shared sizing cannot read (Gemini's parts): the size of the
   * result at `blockIndex` and of the whole message, in the same unit, by which clearing shares out
   * the message's token count; undefined for a message read the shared way.
   */
  resultSize?(message: Message, blockIndex: number): { part: number; whole: number } | undefined;

  // ------------------------------------------------------------------ view and memory

  /**
   * Whether a request must start with a user turn (and alternate user/assistant turns): then a
   * view whose first kept turn is the model's gets a start notice, and a summary, notice or
   * compaction note mid-conversation is a user message rather than a system one.
   */
  readonly userTurnFirst: boolean;
  /**
   * A text message in this format: a `system` message (the view's system prompt or facts block,
   * split out by the request builder) or a `user` one.
   */
  textMessage(role: 'system' | 'user', content: string): M;
  /**
   * The model's message holding only `call` (one `tool_calls` entry, `tool_use` block,
   * `functionCall` part, …), for per-tool token counts (`contextkit breakdown`).
   */
  callAlone?(call: unknown): Message;
  /** The result answering the call `id` of the tool `name` (the recall and memory tools). */
  toolResultMessage(name: string, id: string, text: string, isError: boolean): M;
  /** The `recall` tool as this provider declares tools. */
  readonly recallTool: ToolDefinition;
  /**
   * A function tool of contextkit's own (the `compact` tool, …) as this provider declares tools,
   * from its name, description and JSON Schema (see `toolShapes`).
   */
  functionTool(name: string, description: string, parameters: object): ToolDefinition;
  /** The memory tool as this provider declares tools (Anthropic's native one where it has one). */
  readonly memoryTool: ToolDefinition;
  /**
   * `messages` with prompt-cache marks on copies of the messages at `wanted` (indexes, in order of
   * preference: the ends of the stable prefix), as many as the API takes beside the caller's own;
   * the same array when nothing was marked. Absent: the format has no marks to put.
   */
  withCacheBreakpoints?(messages: readonly Message[], wanted: readonly number[]): Message[];
  /**
   * How the provider compacts a conversation itself, where it does: `'in-request'`, inside a
   * request that asks for it (Anthropic's `context_management` compaction, driven from the
   * guard's check), or `'endpoint'`, by a call of its own that returns the compacted window
   * (OpenAI's `/responses/compact`, the manager's `providerCompaction`). Absent: it does not.
   */
  readonly serverCompaction?: 'in-request' | 'endpoint';
  /**
   * Whether `message` is a server-side compaction that replaces what came before it for the
   * provider (Anthropic's `compaction` block): the view reads from the latest one on.
   */
  isCompactionStart?(message: M): boolean;
  /**
   * Whether `message` is a compaction item standing in the conversation for the window before it
   * (OpenAI's `compaction` item): a view sends the atoms from the latest one on (and the user
   * messages right before it, which `/responses/compact` returns beside it).
   */
  isCompactionItem?(message: Message): boolean;
  /**
   * Whether `message` carries a compaction the provider made (a block or an item): a plan never
   * edits or leaves it out.
   */
  holdsCompaction?(message: Message): boolean;
  /**
   * `message` with the provider's compaction in it made readable for another provider: the
   * summary the provider wrote, as text of the same role, where the provider gives one (Anthropic's
   * `compaction` block carries it in `content`); null when nothing is left of the message. Undefined
   * where the message holds no readable compaction (OpenAI's item is encrypted: the view puts
   * contextkit's own summary of what it covered in its place).
   */
  readableCompaction?(message: M): M | null | undefined;

  // ------------------------------------------------------------------------ conversion

  /**
   * The format this one converts through (Gemini and Bedrock through Anthropic, Responses
   * through Chat Completions, Chat Completions and Anthropic through each other).
   * `convertMessages` goes from format to format along the pivots.
   */
  readonly pivot: string;
  /**
   * `messages` (in this format) in the pivot format; throws `InvalidMessageError` (code
   * `not_convertible`) for what cannot go. `to` is the format the conversion ends in, for errors.
   */
  toPivot(messages: readonly M[], options: ConvertOptions, to: WireFormat<Message>): Message[];
  /** `messages` (in the pivot format) in this format. */
  fromPivot(messages: readonly Message[], options: ConvertOptions): M[];
  /**
   * `messages` that fit every format (plain text, no format shown) as this format takes them;
   * absent: as they are (a new array of the same objects).
   */
  fromPlain?(messages: readonly Message[], options: ConvertOptions): M[];
  /** The API's name in messages ('Chat Completions', 'Responses API'); absent: `label`. */
  readonly apiName?: string;

  // -------------------------------------------------------------- requests and replies

  /**
   * What a request to the provider sends for a view: the body with the system prompt lifted out
   * where the API wants it (`{ system, messages }`), or the list itself where it is a message.
   */
  toRequest(view: readonly M[]): unknown;
  /**
   * Where a request body of this format keeps its system prompt and its messages (`system` and
   * `messages`, `systemInstruction` and `contents`), or undefined when the system prompt is a message.
   */
  readonly requestFields?: { readonly system: string; readonly messages: string };
  /**
   * The messages (or items) a provider reply adds to the conversation, in order; throws
   * `InvalidMessageError` naming the path of a reply that is not this provider's.
   */
  replyMessages(response: unknown): M[];
  /** The usage a provider reply reports; throws `InvalidUsageError` when it has none readable. */
  usage(response: unknown): UsageSample;
  /** The provider's token-counting endpoint, where it has one. */
  readonly countEndpoint?: CountEndpoint;
}
