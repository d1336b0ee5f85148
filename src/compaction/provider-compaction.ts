/**
 * The provider's own compaction in place of contextkit's summarizer (`providerCompaction`). For
 * the OpenAI Responses API this is the `/responses/compact` endpoint
 * (developers.openai.com/api/reference/resources/responses/methods/compact; the guide:
 * developers.openai.com/api/docs/guides/compaction): given a window of input items, it returns
 * the window compacted, "a list of all user messages, followed by a single compaction item", to
 * send in place of the window. The plan keeps that list as the summary of the range it replaces;
 * stored history is not touched.
 */

import { WIRE_FORMATS } from '../formats/registry.js';
import type { WireFormat } from '../formats/wire-format.js';
import type { ResponsesItem } from '../messages/responses-types.js';
import type { Message } from '../messages/types.js';
import { type LLMToolsOptions, postJson } from '../tools/llm.js';
import { messageText, roleOf } from '../wire/content.js';

/** What a Responses compaction is asked for: the model that will read the result, and the window. */
export interface ResponsesCompactInput {
  model: string;
  input: ResponsesItem[];
}

/**
 * Compacts a window of Responses items: returns the items to send in its place (the user
 * messages and one `compaction` item), or the whole `/responses/compact` reply, whose `usage`
 * then gives the compaction item's token cost.
 */
export type ResponsesCompact = (
  input: ResponsesCompactInput,
) => Promise<ResponsesItem[] | { output: ResponsesItem[]; usage?: unknown }>;

/** A window of the conversation's messages compacted by the provider; throws when it cannot. */
export type ProviderCompactor = (window: readonly Message[]) => Promise<Message[]>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `/responses/compact` over plain `fetch`, with the `llm` option's endpoint and key. */
export function createResponsesCompact(
  settings: Pick<LLMToolsOptions, 'baseURL' | 'apiKey' | 'fetch' | 'timeoutMs' | 'maxReplyBytes'>,
): ResponsesCompact {
  const url = `${settings.baseURL.replace(/\/+$/, '')}/responses/compact`;
  const headers = { authorization: `Bearer ${settings.apiKey}`, 'content-type': 'application/json' };
  return async (input) => {
    const reply = await postJson(url, headers, input, {
      ...settings,
      // A compaction item may be large (up to 10 MiB of ciphertext) beside the user messages.
      maxReplyBytes: settings.maxReplyBytes ?? 64 * 1024 * 1024,
    });
    if (!isRecord(reply) || !Array.isArray(reply.output))
      throw new Error('the reply is not a compacted response (no output list)');
    return reply as { output: ResponsesItem[]; usage?: unknown };
  };
}

/** The format whose provider compacts by an endpoint of its own (`serverCompaction: 'endpoint'`). */
function endpointFormat(): WireFormat<Message> {
  const wire = WIRE_FORMATS.find((f) => f.serverCompaction === 'endpoint');
  if (wire === undefined) throw new Error('no registered format compacts by an endpoint');
  return wire;
}

/**
 * What is wrong with a `/responses/compact` reply taken as a whole, for the window it compacted
 * (empty when nothing). The compaction guide says the endpoint returns the window compacted as "a
 * list of all user messages, followed by a single compaction item"
 * (developers.openai.com/api/docs/guides/compaction; the reference's `output`, "the compacted list
 * of output items", of a `response.compaction`): so every item before the last is a user message
 * the window held (the same text), the last is the one compaction item, and nothing else is there.
 * Anything more (a call without its output, an assistant, system or developer message, a second
 * compaction item, a user message the window never held: issue 31 item 8) is what the provider
 * would not return, and none of it reaches a view.
 */
export function compactReplyProblems(
  output: readonly unknown[],
  window: readonly Message[],
  wire: WireFormat<Message> = endpointFormat(),
): string[] {
  const problems: string[] = [];
  const isItem = (item: unknown) => wire.isCompactionItem?.(item as Message) === true;
  output.forEach((item, i) => {
    for (const issue of wire.messageIssues(item, `output[${i}]`))
      problems.push(`${issue.path}: ${issue.message}`);
  });
  if (problems.length > 0) return problems;
  if (output.length === 0 || !isItem(output[output.length - 1]))
    problems.push(`output: expected the user messages followed by one compaction item, last`);
  const held = new Set(window.filter((m) => roleOf(m) === 'user').map((m) => messageText(m)));
  output.forEach((item, i) => {
    if (i === output.length - 1 && isItem(item)) return;
    const message = item as Message;
    if (isItem(item)) {
      problems.push(`output[${i}]: a second compaction item (the reply holds one, last)`);
      return;
    }
    const role = roleOf(message);
    if (role !== 'user') {
      problems.push(
        `output[${i}]: a ${role} item (the reply holds only user messages and the compaction item)`,
      );
      return;
    }
    if (!held.has(messageText(message)))
      problems.push(`output[${i}]: a user message the compacted window did not hold`);
  });
  return problems;
}

/**
 * The compactor the planner calls: the window goes to `compact` for `model`; what comes back must
 * be a reply the endpoint would give for it (`compactReplyProblems`: valid items of the format that
 * compacts by an endpoint, `serverCompaction: 'endpoint'`, the window's user messages then one
 * compaction item), else it throws saying what is wrong and nothing of it is used (contextkit
 * compacts on its own). The compaction item's cost is noted from the reply's
 * `usage.output_tokens` when it has one.
 */
/**
 * Where a compactor notes what the compaction item it returns costs (the manager's
 * `measurer.noteCompaction`): `tokens` as the reply's `field` gave it.
 */
export type NoteCompaction = (encryptedContent: string, tokens: number, field: string) => void;

export function responsesCompactor(
  compact: ResponsesCompact,
  model: string,
  note: NoteCompaction,
): ProviderCompactor {
  const wire = endpointFormat();
  const isItem = (item: unknown) => wire.isCompactionItem?.(item as Message) === true;
  return async (window) => {
    const reply = await compact({ model, input: window as ResponsesItem[] });
    const output: unknown = Array.isArray(reply) ? reply : isRecord(reply) ? reply.output : undefined;
    if (!Array.isArray(output)) throw new Error('the reply is not a compacted response (no output list)');
    const problems = compactReplyProblems(output, window, wire);
    if (problems.length > 0) {
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
      throw new Error(`the compacted reply was refused: ${problems[0]}${more}`);
    }
    const compaction = output.find(isItem) as ResponsesItem;
    const usage = Array.isArray(reply) ? undefined : reply.usage;
    if (isRecord(usage) && typeof usage.output_tokens === 'number')
      note(String(Reflect.get(compaction, 'encrypted_content')), usage.output_tokens, 'usage.output_tokens');
    return structuredClone(output) as Message[];
  };
}
