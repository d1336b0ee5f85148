import type { Role } from '../messages/types.js';

/** One result of `recall`: a relevant turn with the turns around it. */
export interface RecallHit {
  /** Seq of the most relevant turn of the hit. */
  seq: number;
  /** Role of that turn. */
  role: Role;
  /**
   * The hit as a short transcript: the relevant turns and their neighbours, one line each
   * (`#25 Caroline: Researching adoption agencies …`), a long tool result cut to the part that
   * matches.
   */
  text: string;
  /** Relevance, comparable between hits of one call only. */
  score: number;
  /** When the relevant turn was stored (its `metadata.timestamp`). */
  timestamp: string;
}

/**
 * Who a turn is from, as the role filter reads it, the same in every format: a message made only
 * of tool results is `tool` (an Anthropic or Gemini user turn carrying results too), Gemini's
 * `model` is `assistant` and a `developer` message is `system`.
 */
export type RecallRole = 'system' | 'user' | 'assistant' | 'tool';

/**
 * What a recall looks in: only the turns every given filter accepts become hits (their
 * neighbours may still be shown around them as context). Calls of `recall` and their results are
 * never hits, whatever the filters.
 */
export interface RecallFilters {
  /** Only turns from this role, or from one of these (see {@link RecallRole}). */
  role?: RecallRole | readonly RecallRole[];
  /** Only calls of this tool, and the results answering them. */
  toolName?: string;
  /**
   * Only turns stored at or after this moment (their `metadata.timestamp`): an ISO 8601 date
   * (`2023-05-01`, from the start of that day, UTC) or date and time.
   */
  startDate?: string;
  /**
   * Only turns stored at or before this moment: an ISO 8601 date (`2023-05-31`, to the end of that
   * day, UTC) or date and time.
   */
  endDate?: string;
  /** Only turns from this seq on (inclusive). */
  fromSeq?: number;
  /** Only turns up to this seq (inclusive). */
  toSeq?: number;
}

/** Options of `recall`. */
export interface RecallOptions extends RecallFilters {
  /** Most hits returned (default 5). */
  limit?: number;
  /** The hits' texts together stay within this many tokens, counted with the conversation's counter (default 1,000). */
  maxTokens?: number;
  /**
   * Hits to skip, for the next page: the first call gives hits 1–5, `{ offset: 5 }` the next five
   * (default 0). Pages are of the same ranking, so they never repeat a hit while the history is
   * unchanged.
   */
  offset?: number;
}
