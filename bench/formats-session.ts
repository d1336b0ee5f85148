/** The session `bench formats` runs in each wire format, made the same way in every process. */
import type { Message } from '../src/messages/types.js';
import { longSessionMessages } from '../test/support/arbitraries.js';

export const SEED = 20_240_601;
/** Messages added before the turns are timed. */
export const SIZE = 10_000;
/** Turns timed, by every process of either side. */
export const TURNS = 1_000;
export const BUDGET = 100_000;

/** From the parent to a side process: run its next `turns` turns. */
export interface SideRequest {
  turns: number;
}

/** From a side process: set up and waiting, or one block's turn times (ms). */
export type SideReply = { ready: true } | { times: number[] };

/** What the benchmark needs of a build's public API. */
export interface FormatsBuild {
  ContextManager: new (options: {
    model: string;
  }) => {
    addMessage(message: Message): Promise<unknown>;
    getMessagesForRequest(options: { tokenBudget: number }): Promise<unknown>;
    on(event: 'context:post_compact', listener: () => void): unknown;
  };
  convertMessages(messages: readonly Message[], to: string): Message[];
}

/** The formats an earlier build knows too. */
export const FORMATS = ['openai', 'anthropic', 'openai-responses', 'gemini'] as const;

/** The session in `format` and the model counted for, from this tree's generators. */
export function formatSession(
  convert: FormatsBuild['convertMessages'],
  format: string,
): { session: Message[]; model: string } {
  const n = SIZE + TURNS;
  if (format === 'anthropic')
    return { session: longSessionMessages(n, 'anthropic', SEED), model: 'claude-sonnet-4-5' };
  const openai = longSessionMessages(format === 'gemini' ? n * 2 : n, 'openai', SEED);
  if (format === 'openai') return { session: openai, model: 'gpt-4o' };
  if (format === 'openai-responses') return { session: convert(openai, 'openai-responses'), model: 'gpt-4o' };
  return { session: convert(openai, 'gemini').slice(0, n), model: 'gemini-2.5-flash' };
}
