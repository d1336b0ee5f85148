/**
 * What every contender in the peers benchmark is driven through: a session that is given each
 * message of a conversation as an agent would add it, and asked for the view it would send.
 */
import type { Message, MessageFormat } from '../../src/messages/types.js';

/**
 * A view as the peer produced it. `messages` converts it back to the workload's format and is
 * called outside the timed part, so a peer is timed on its own work, not on our conversions.
 */
export type View = { ok: true; messages: () => Message[] } | { ok: false; error: string };

/** One conversation in progress under one peer, at one budget (o200k tokens). */
export interface PeerSession {
  add(message: Message): Promise<void>;
  view(): Promise<View>;
  /** What the peer's own search over the whole history returns for `query` (contextkit's `recall`). */
  recall?(query: string): Promise<string>;
}

/** A contender: its column name, and how it is set up for a conversation. */
export interface Peer {
  readonly name: string;
  start(format: MessageFormat, budget: number): PeerSession;
}
