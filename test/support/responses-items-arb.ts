/**
 * OpenAI Responses API conversations with every item kind issue 11 lists: input and output
 * messages (input_text, input_image, input_file, output_text with annotations, refusal),
 * reasoning (sealed so an edit is caught) before function calls, parallel calls, custom tool,
 * computer and local shell calls with their outputs, hosted tool calls, MCP listing, calls and
 * approvals, and item references.
 */
import fc from 'fast-check';
import type { Message } from '../../src/messages/types.js';
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

function turn(kind: (typeof ITEM_TURNS)[number], t: number, size: number): Array<Record<string, unknown>> {
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
  const long = words(size, t + 2);
  switch (kind) {
    case 'reasoning-call': {
      const rs = `rs_${t}`;
      return [
        user,
        reasoning(rs, t),
        {
          type: 'function_call',
          id: `fc_${rs}_0`,
          call_id: `call_${t}`,
          name: 'lookup',
          arguments: `{"q":${t}}`,
        },
        { type: 'function_call_output', call_id: `call_${t}`, output: long },
        reasoning(`rs_${t}b`, t),
        answer,
      ];
    }
    case 'parallel':
      return [
        user,
        { type: 'function_call', call_id: `call_${t}a`, name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: `call_${t}b`, name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: `call_${t}b`, output: long },
        { type: 'function_call_output', call_id: `call_${t}a`, output: `sunny ${t}` },
        answer,
      ];
    case 'custom':
      return [
        user,
        { type: 'custom_tool_call', call_id: `ctc_${t}`, name: 'grammar', input: `x = ${t}` },
        { type: 'custom_tool_call_output', call_id: `ctc_${t}`, output: long },
        answer,
      ];
    case 'computer':
      return [
        user,
        {
          type: 'computer_call',
          id: `cu_${t}`,
          call_id: `cc_${t}`,
          action: { type: 'click', x: 1, y: 2, button: 'left' },
          pending_safety_checks: [],
          status: 'completed',
        },
        {
          type: 'computer_call_output',
          call_id: `cc_${t}`,
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
          call_id: `ls_${t}`,
          action: { type: 'exec', command: ['ls'], env: {} },
          status: 'completed',
        },
        { type: 'local_shell_call_output', call_id: `ls_${t}`, output: long },
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

/** A developer message, then 2–8 turns of any kind. */
export const itemsConversationArb: fc.Arbitrary<Message[]> = fc
  .array(fc.record({ kind: fc.constantFrom(...ITEM_TURNS), size: fc.integer({ min: 5, max: 400 }) }), {
    minLength: 2,
    maxLength: 8,
  })
  .map(
    (turns) =>
      [
        { role: 'developer', content: 'You are a careful agent.' },
        ...turns.flatMap(({ kind, size }, t) => turn(kind, t, size)),
      ] as unknown as Message[],
  );
