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

/** Options of `recall`. */
export interface RecallOptions {
  /** Most hits returned (default 5). */
  limit?: number;
  /** The hits' texts together stay within this many tokens, counted with the conversation's counter (default 1,000). */
  maxTokens?: number;
}
