/** The request view of a manager at a budget below (or above) what its history costs. */
import { expect } from 'vitest';
import { ContextOverflowError } from '../../src/errors.js';
import type { ContextManager } from '../../src/manager.js';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import { getModelInfo } from '../../src/tokens/catalog.js';
import { createTokenCounter } from '../../src/tokens/counter.js';

/** The smallest budget asked for, whatever the share. */
const MIN_BUDGET = 64;

/**
 * The view `ctx` (holding `messages`) gives for a budget of `share` times what `messages` cost
 * on `model` (at least {@link MIN_BUDGET}), checked to fit that budget, with the budget;
 * undefined when the manager says nothing fits (a `ContextOverflowError`, any other error fails
 * the test).
 */
export async function viewAtShare(
  ctx: ContextManager,
  messages: readonly Message[],
  model: string,
  format: MessageFormat,
  share: number,
): Promise<{ view: Message[]; budget: number } | undefined> {
  const counter = createTokenCounter(getModelInfo(model)!);
  const full = await counter.measure(messages, { format });
  const budget = Math.max(MIN_BUDGET, Math.floor(full * share));
  let view: Message[];
  try {
    view = await ctx.getMessagesForRequest({ tokenBudget: budget });
  } catch (err) {
    expect(err).toBeInstanceOf(ContextOverflowError);
    return undefined;
  }
  expect(await counter.measure(view, { format })).toBeLessThanOrEqual(budget);
  return { view, budget };
}
