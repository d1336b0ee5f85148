/**
 * Who the agent is fed by: the full history (the reference), contextkit as it ships and with the
 * options a user would set for an agent, and the trimmers users pick (LangChain `trimMessages`,
 * Mastra `TokenLimiter`, driven as the peers benchmark drives them).
 */

import { type BaseMessage, trimMessages } from '@langchain/core/messages';
import { ContextManager } from '../../src/manager.js';
import type { Message, MessageFormat, OpenAIMessage } from '../../src/messages/types.js';
import type { ContextManagerOptions } from '../../src/options.js';
import { fromLangChain, toLangChain } from '../peers/langchain.js';
import { messageTokens } from '../peers/o200k-count.js';
import { inFormat, openaiFromMessage } from '../peers/openai-form.js';
import type { Peer, View } from '../peers/peer.js';

/** Every message, untrimmed: what the agent does with everything (views may exceed the budget). */
export const fullHistory: Peer = {
  name: 'full history',
  start() {
    const history: Message[] = [];
    return {
      async add(message) {
        history.push(message);
      },
      async view(): Promise<View> {
        return { ok: true, messages: () => history.slice() };
      },
    };
  },
};

function contextkit(name: string, options: ContextManagerOptions): Peer {
  return {
    name,
    start(format: MessageFormat, budget: number) {
      const manager = new ContextManager({ model: 'gpt-4o', ...options });
      return {
        async add(message) {
          await manager.addMessage(message);
        },
        async view(): Promise<View> {
          try {
            const view = await manager.getMessagesForRequest({ tokenBudget: budget, provider: format });
            return { ok: true, messages: () => view };
          } catch (err) {
            return { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
          }
        },
      };
    },
  };
}

/** contextkit with its defaults (the offline `summarize` strategy). */
export const contextkitDefault: Peer = contextkit('contextkit', {});

/**
 * contextkit as it shipped before issue 30 made the task part of every default view
 * (`protectTask: false`: the first user message, which holds the session's rule, may be
 * summarized or dropped like any older turn): the baseline the default is measured against.
 */
export const contextkitAgent: Peer = contextkit('contextkit, protectTask off (the old default)', {
  protectTask: false,
});

/**
 * contextkit with `compactAfterRequest`: the view that passes the trigger goes as it is (within the
 * budget) and the compaction runs after the request, so the agent acts on a fuller view once per
 * compaction.
 */
export const contextkitAfterRequest: Peer = contextkit('contextkit, compactAfterRequest', {
  compactAfterRequest: true,
});

/**
 * LangChain.js `trimMessages` as the peers benchmark drives it (bench/peers/langchain.ts: strategy
 * last, includeSystem, startOn human, gpt-tokenizer's o200k count with OpenAI's framing). It is
 * given the system message and the newest messages whose count passes the budget, not the whole
 * history: `last` keeps a newest run that fits, so what it returns is the same, but its search
 * (a count of every shorter list, on fresh copies of the messages) no longer grows with a
 * 600-message session, which made one session take most of a minute.
 */
export const langchainTrim: Peer = {
  name: 'LangChain trimMessages',
  start(format: MessageFormat, budget: number) {
    const history: BaseMessage[] = [];
    const tokens: number[] = [];
    const memo = new WeakMap<BaseMessage, number>();
    const count = (m: BaseMessage): number => {
      let t = memo.get(m);
      if (t === undefined) {
        t = messageTokens(fromLangChain(m));
        memo.set(m, t);
      }
      return t;
    };
    const tokenCounter = (messages: BaseMessage[]): number => messages.reduce((n, m) => n + count(m), 3);
    return {
      async add(message) {
        for (const m of openaiFromMessage(message, format)) {
          const lc = toLangChain(m);
          history.push(lc);
          tokens.push(count(lc));
        }
      },
      async view(): Promise<View> {
        const system = history[0]?.type === 'system' ? 1 : 0;
        let total = 3 + (system ? tokens[0]! : 0);
        let start = history.length;
        while (start > system && total <= budget) total += tokens[--start]!;
        const given = [...history.slice(0, system), ...history.slice(Math.max(system, start - 1))];
        const trimmed = await trimMessages(given, {
          maxTokens: budget,
          strategy: 'last',
          tokenCounter,
          includeSystem: true,
          startOn: 'human',
        });
        // As in bench/peers/langchain.ts: when nothing after the system prompt fits, trimMessages
        // returns `[undefined]`, kept as a null entry so the view is judged as what would be sent.
        const back = trimmed.map((m) =>
          m === undefined ? (null as unknown as OpenAIMessage) : fromLangChain(m),
        );
        return { ok: true, messages: () => inFormat(back, format) };
      },
    };
  },
};

/**
 * Mastra's `TokenLimiter` (each message's count remembered: the same views, faster), loaded by a
 * computed path from the peers benchmark's own package (its dependencies are installed there), or
 * the reason it could not be.
 */
export async function loadMastra(): Promise<Peer | string> {
  try {
    const entry = '../peers/mastra.js';
    const module = (await import(entry)) as { mastraTokenLimiterRemembering: Peer };
    return module.mastraTokenLimiterRemembering;
  } catch (err) {
    return err instanceof Error ? err.message.split('\n')[0]! : String(err);
  }
}
