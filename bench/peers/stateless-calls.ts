/**
 * The peers' stateless calls for `npm run bench -- stateless`: what a route handler using Mastra's
 * `TokenLimiter` or LangChain's `trimMessages` does on each request, given the conversation's
 * messages (already read): convert them to the library's messages, then limit them to the budget.
 * Loaded by a computed path from bench/stateless.ts (this package holds Mastra).
 */
import type { Message } from '../../src/messages/types.js';
import { langchainTrimExact } from './langchain.js';
import { mastraTokenLimiter } from './mastra.js';

export interface StatelessCall {
  readonly name: string;
  /**
   * One stateless request: a new session given every message, then its view; resolves with a
   * thunk that converts the view back (called outside the timed part).
   */
  call(messages: readonly Message[], budget: number): Promise<() => Message[]>;
}

export const statelessCalls: readonly StatelessCall[] = [mastraTokenLimiter, langchainTrimExact].map(
  (peer) => ({
    name: peer.name,
    async call(messages: readonly Message[], budget: number): Promise<() => Message[]> {
      const session = peer.start('openai', budget);
      for (const m of messages) await session.add(m);
      const view = await session.view();
      if (!view.ok) throw new Error(`${peer.name}: ${view.error}`);
      return view.messages;
    },
  }),
);
