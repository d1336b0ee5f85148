/**
 * OpenAI Responses API conversations with every item kind issue 11 lists: input and output
 * messages (input_text, input_image, input_file, output_text with annotations, refusal),
 * reasoning (sealed so an edit is caught) before function calls, parallel calls, custom tool,
 * computer and local shell calls with their outputs, hosted tool calls, MCP listing, calls and
 * approvals, and item references. `responsesItemsArb` adds huge outputs, call ids reused
 * across turns, or restricts the turn kinds (for conversions).
 */
import fc from 'fast-check';
import type { Message } from '../../src/messages/types.js';
import { hugeWordsArb } from './arbitraries.js';
import { sealReasoning } from './fake-responses-server.js';

export const ITEM_TURNS = [
  'chat',
  'reasoning-call',
  'parallel',
  'custom',
  'computer',
  'shell',
  'hosted',
  'mcp',
  'approval',
  'reference',
  'refusal',
  'media',
] as const;

export type ItemTurn = (typeof ITEM_TURNS)[number];

/** Options of `responsesItemsArb`. */
export interface ItemsArbOptions {
  /** The turn kinds drawn (default: all of `ITEM_TURNS`). */
  kinds?: readonly ItemTurn[];
  /** Now and then tool outputs of 2,000–20,000 words (default false). */
  huge?: boolean;
  /** The same `call_id`s in every turn, so later calls reuse earlier ids (default false). */
  reuseIds?: boolean;
}

function words(n: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`v${(i * 17 + seed * 5) % 89}y${i % 7}`);
  return out.join(' ');
}

function reasoning(id: string, t: number): Record<string, unknown> {
  const summary = [`thinking about step ${t}`];
  return {
    type: 'reasoning',
    id,
    summary: summary.map((text) => ({ type: 'summary_text', text })),
    encrypted_content: sealReasoning(id, summary),
  };
}

function turn(
  kind: ItemTurn,
  t: number,
  size: number,
  huge: number,
  reuseIds: boolean,
): Array<Record<string, unknown>> {
  // A call id: unique to the turn, or the same in every turn.
  const cid = (prefix: string, suffix = '') =>
    reuseIds ? `${prefix}_r${suffix}` : `${prefix}_${t}${suffix}`;
  const user = { role: 'user', content: `ask ${t}: ${words(Math.ceil(size / 4), t)}` };
  const answer = {
    type: 'message',
    id: `msg_${t}`,
    role: 'assistant',
    status: 'completed',
    content: [
      { type: 'output_text', text: `reply ${t}: ${words(Math.ceil(size / 4), t + 1)}`, annotations: [] },
    ],
  };
  const long = words(huge > 0 ? huge : size, t + 2);
  switch (kind) {
    case 'reasoning-call': {
      const rs = `rs_${t}`;
      return [
        user,
        reasoning(rs, t),
        {
          type: 'function_call',
          id: `fc_${rs}_0`,
          call_id: cid('call'),
          name: 'lookup',
          arguments: `{"q":${t}}`,
        },
        { type: 'function_call_output', call_id: cid('call'), output: long },
        reasoning(`rs_${t}b`, t),
        answer,
      ];
    }
    case 'parallel':
      return [
        user,
        { type: 'function_call', call_id: cid('call', 'a'), name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: cid('call', 'b'), name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: cid('call', 'b'), output: long },
        { type: 'function_call_output', call_id: cid('call', 'a'), output: `sunny ${t}` },
        answer,
      ];
    case 'custom':
      return [
        user,
        { type: 'custom_tool_call', call_id: cid('ctc'), name: 'grammar', input: `x = ${t}` },
        { type: 'custom_tool_call_output', call_id: cid('ctc'), output: long },
        answer,
      ];
    case 'computer':
      return [
        user,
        {
          type: 'computer_call',
          id: `cu_${t}`,
          call_id: cid('cc'),
          action: { type: 'click', x: 1, y: 2, button: 'left' },
          pending_safety_checks: [],
          status: 'completed',
        },
        {
          type: 'computer_call_output',
          call_id: cid('cc'),
          output: { type: 'computer_screenshot', image_url: 'https://example.com/s.png' },
        },
        answer,
      ];
    case 'shell':
      return [
        user,
        {
          type: 'local_shell_call',
          id: `lsh_${t}`,
          call_id: cid('ls'),
          action: { type: 'exec', command: ['ls'], env: {} },
          status: 'completed',
        },
        { type: 'local_shell_call_output', call_id: cid('ls'), output: long },
        answer,
      ];
    case 'hosted':
      return [
        user,
        {
          type: 'web_search_call',
          id: `ws_${t}`,
          status: 'completed',
          action: { type: 'search', query: `q${t}` },
        },
        { type: 'file_search_call', id: `fs_${t}`, status: 'completed', queries: [`q${t}`], results: null },
        {
          type: 'code_interpreter_call',
          id: `ci_${t}`,
          status: 'completed',
          container_id: 'cntr_1',
          code: 'print(1)',
          outputs: [{ type: 'logs', logs: long }],
        },
        {
          type: 'image_generation_call',
          id: `ig_${t}`,
          status: 'completed',
          result: Buffer.from(long).toString('base64'),
        },
        answer,
      ];
    case 'mcp':
      return [
        user,
        {
          type: 'mcp_list_tools',
          id: `ml_${t}`,
          server_label: 'deepwiki',
          tools: [{ name: 'ask', input_schema: {} }],
        },
        {
          type: 'mcp_call',
          id: `mc_${t}`,
          server_label: 'deepwiki',
          name: 'ask',
          arguments: '{}',
          output: long,
        },
        answer,
      ];
    case 'approval':
      return [
        user,
        {
          type: 'mcp_approval_request',
          id: `mcpr_${t}`,
          server_label: 'deepwiki',
          name: 'ask',
          arguments: '{}',
        },
        { type: 'mcp_approval_response', approval_request_id: `mcpr_${t}`, approve: true },
        {
          type: 'mcp_call',
          id: `mc2_${t}`,
          server_label: 'deepwiki',
          name: 'ask',
          arguments: '{}',
          output: long,
          approval_request_id: `mcpr_${t}`,
        },
        answer,
      ];
    case 'reference':
      return [user, { type: 'item_reference', id: `msg_ref_${t}` }, answer];
    case 'refusal':
      return [
        user,
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: `no ${t}` }] },
      ];
    case 'media':
      return [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: `look ${t}: ${long}` },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
            { type: 'input_file', file_id: `file_${t}` },
          ],
        },
        answer,
      ];
    default:
      return [user, answer];
  }
}

/** A developer message, then 2–8 turns of the kinds asked for. */
export function responsesItemsArb(options: ItemsArbOptions = {}): fc.Arbitrary<Message[]> {
  const hugeArb = hugeWordsArb(options.huge === true);
  return fc
    .array(
      fc.record({
        kind: fc.constantFrom(...(options.kinds ?? ITEM_TURNS)),
        size: fc.integer({ min: 5, max: 400 }),
        huge: hugeArb,
      }),
      { minLength: 2, maxLength: 8 },
    )
    .map(
      (turns) =>
        [
          { role: 'developer', content: 'You are a careful agent.' },
          ...turns.flatMap(({ kind, size, huge }, t) => turn(kind, t, size, huge, options.reuseIds === true)),
        ] as unknown as Message[],
    );
}

/** A developer message, then 2–8 turns of any kind. */
export const itemsConversationArb: fc.Arbitrary<Message[]> = responsesItemsArb();
