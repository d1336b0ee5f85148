/**
 * Typed errors. Each says what is wrong, where, and (where it can) what to do about it, so the
 * CLI can print `err.message` alone and a program can branch on `err.code`.
 */

/** Base class of every error contextkit throws on purpose. */
export class ContextkitError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem found in a message, located by a path such as `messages[3].tool_calls[0].id`. */
export interface MessageIssue {
  path: string;
  message: string;
}

/** A message (or conversation) that does not fit either provider format. Nothing was stored. */
export class InvalidMessageError extends ContextkitError {
  readonly issues: MessageIssue[];
  constructor(issues: MessageIssue[], code = 'invalid_message') {
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(code, first ? `${first.path}: ${first.message}${more}` : 'invalid message');
    this.issues = issues;
  }
}

/** A conversation that mixes OpenAI and Anthropic message shapes. */
export class FormatMismatchError extends InvalidMessageError {
  constructor(path: string, found: string, expected: string) {
    super(
      [
        {
          path,
          message: `this conversation is in ${expected} format but the message is ${found}; convert it first (see toOpenAI/toAnthropic)`,
        },
      ],
      'format_mismatch',
    );
  }
}

/** Options that cannot work together, caught at construction. */
export class ConfigurationError extends ContextkitError {
  readonly option: string;
  constructor(option: string, message: string) {
    super('configuration', `${option}: ${message}`);
    this.option = option;
  }
}

/** What a request that could not go is made of, by kind, in tokens; the parts add up to `required`. */
export interface OverflowBreakdown {
  /** System (and developer) messages. */
  system: number;
  /** `critical` and `pinned` messages. */
  pinned: number;
  /** The conversation's first user message, the task (kept with `protectTask`, the default). */
  task: number;
  /** The latest user message and the tool exchange in progress. */
  latestTurn: number;
  /** Tool definitions passed with the request. */
  tools: number;
  /** Fixed per-request framing, and any notice the provider's rules require (an Anthropic view opens with a user message). */
  overhead: number;
  /** The rest of the view: older messages not protected, the summary, the facts block, notes. */
  rest: number;
}

/** The messages that must be kept cannot fit the budget. No view was returned. */
export class ContextOverflowError extends ContextkitError {
  readonly budget: number;
  readonly required: number;
  readonly breakdown: OverflowBreakdown;
  constructor(budget: number, required: number, breakdown: OverflowBreakdown) {
    const parts = Object.entries(breakdown)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    super(
      'context_overflow',
      `the messages that must be kept need ${required} tokens but the budget is ${budget} (${parts}); ` +
        'raise the budget, shorten the system prompt or pinned messages, or unpin some',
    );
    this.budget = budget;
    this.required = required;
    this.breakdown = breakdown;
  }
}

/**
 * The request was refused by the strategy (a custom strategy's `decline`, the seed's
 * `{ action: 'decline' }`): no view was returned. It is a `ContextOverflowError`, so code that
 * handles a request that cannot go handles this one too; `reason` says why.
 */
export class ContextDeclinedError extends ContextOverflowError {
  readonly reason: string;
  constructor(budget: number, required: number, breakdown: OverflowBreakdown, reason: string) {
    super(budget, required, breakdown);
    this.message = `the strategy declined the request: ${reason} (${required} tokens of a ${budget}-token budget)`;
    (this as { code: string }).code = 'context_declined';
    this.reason = reason;
  }
}

/** A store that cannot be read or written as asked. Nothing already stored was changed. */
export class StoreError extends ContextkitError {
  readonly conversationId: string | undefined;
  constructor(
    conversationId: string | undefined,
    message: string,
    options?: { cause?: unknown; code?: string },
  ) {
    super(
      options?.code ?? 'store',
      conversationId === undefined ? message : `conversation ${JSON.stringify(conversationId)}: ${message}`,
      options,
    );
    this.conversationId = conversationId;
  }
}

/**
 * Another writer got there first: re-read (the head for `sequence`, the metadata for `version`)
 * and retry.
 */
export class ConflictError extends StoreError {
  readonly expected: number;
  readonly actual: number;
  /** What was compared: the log's next sequence number, or the metadata's CAS version. */
  readonly subject: 'sequence' | 'version';
  constructor(
    conversationId: string,
    expected: number,
    actual: number,
    subject: 'sequence' | 'version' = 'sequence',
  ) {
    super(
      conversationId,
      subject === 'sequence'
        ? `expected the next sequence number to be ${expected} but it is ${actual}`
        : `expected metadata version ${expected} but it is ${actual}; read it again with getMeta and retry`,
      { code: 'conflict' },
    );
    this.expected = expected;
    this.actual = actual;
    this.subject = subject;
  }
}

/**
 * The conversation was replaced or cleared since this writer last read it: its generation (the
 * epoch `replace` and `delete` renew) is not the one the append named. Nothing was appended;
 * read the conversation again (`epoch`, then `read`) before appending.
 */
export class EpochConflictError extends StoreError {
  /** The generation the writer held. */
  readonly expected: string;
  /** The conversation's generation now; `null` when it has none (deleted, never written). */
  readonly actual: string | null;
  constructor(conversationId: string, expected: string, actual: string | null) {
    super(
      conversationId,
      `the conversation was replaced or cleared by another writer (generation ${JSON.stringify(expected)} is now ${JSON.stringify(actual)}); read it again before appending`,
      { code: 'stale_epoch' },
    );
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * An append carried message ids (`NewEntry.id`) the conversation already holds: nothing of the
 * batch was appended. `held` says where each is stored. `History` turns this into "already there"
 * (same message) or a {@link MessageIdConflictError} (another message).
 */
export class DuplicateMessageIdError extends StoreError {
  readonly held: ReadonlyArray<{ id: string; seq: number }>;
  constructor(conversationId: string, held: ReadonlyArray<{ id: string; seq: number }>) {
    const first = held[0];
    super(
      conversationId,
      `message id ${first ? JSON.stringify(first.id) : '?'} is already stored (entry ${first?.seq ?? '?'})${held.length > 1 ? ` with ${held.length - 1} more of the batch` : ''}; nothing of the batch was appended`,
      { code: 'duplicate_id' },
    );
    this.held = held;
  }
}

/**
 * `addMessage(message, { id })` with an id the conversation already holds for another message:
 * nothing was stored. Names the id, the stored entry and the first place the two differ.
 */
export class MessageIdConflictError extends ContextkitError {
  /** The id given. */
  readonly id: string;
  /** Where the message stored under that id is (the history's seq). */
  readonly seq: number;
  /** The first path where the message added differs from the stored one (`''`: the whole message). */
  readonly path: string;
  constructor(id: string, seq: number, path: string, stored: string, added: string) {
    super(
      'message_id_conflict',
      `message id ${JSON.stringify(id)} already names entry ${seq}, a different message: at ${path === '' ? 'the message' : path} it holds ${stored} where the message added has ${added}; nothing was stored (give the new message an id of its own)`,
    );
    this.id = id;
    this.seq = seq;
    this.path = path;
  }
}

/** A message a store returned that is not a valid message: which one (by seq) and why. */
export class InvalidStoredMessageError extends StoreError {
  readonly seq: number;
  readonly issues: MessageIssue[];
  constructor(conversationId: string, seq: number, issues: MessageIssue[]) {
    const first = issues[0];
    super(
      conversationId,
      `stored entry ${seq} is not a valid message (${first ? `${first.path}: ${first.message}` : 'invalid'}); it was left as it is (pass invalidStored: 'skip' to load the rest without it)`,
      { code: 'invalid_stored_message' },
    );
    this.seq = seq;
    this.issues = issues;
  }
}

/** An argument of a call (not a message, not an option) that cannot be used: what and why. */
export class InvalidArgumentError extends ContextkitError {
  readonly argument: string;
  constructor(argument: string, message: string) {
    super('invalid_argument', `${argument}: ${message}`);
    this.argument = argument;
  }
}
