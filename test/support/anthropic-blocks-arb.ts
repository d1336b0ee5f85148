/**
 * Anthropic conversations with every block kind the Messages API documents (issue 11): server
 * tools with their results inside one assistant message, MCP calls, container uploads, search
 * results, citations of each kind, thinking and redacted thinking in tool loops, caller
 * `cache_control` marks, and a block type from a "future" API. Thinking blocks are signed the way
 * the fake server checks, so an edited one is caught.
 */
import fc from 'fast-check';
import type { Message } from '../../src/messages/types.js';
import { signThinking } from './fake-anthropic-server.js';

export const TURN_KINDS = [
  'chat',
  'search',
  'fetch',
  'code',
  'bash',
  'editor',
  'toolsearch',
  'mcp',
  'thinking-tools',
  'redacted',
  'upload',
  'searchresult',
  'future',
  'pause',
] as const;
export type TurnKind = (typeof TURN_KINDS)[number];

export interface BlocksConversation {
  messages: Message[];
  /** The conversation ends inside a tool loop with thinking on (last message: tool results). */
  thinkingLoop: boolean;
}

function words(n: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`w${(i * 31 + seed * 7) % 97}x${i % 13}`);
  return out.join(' ');
}

function thinking(text: string) {
  return { type: 'thinking', thinking: text, signature: signThinking(text) };
}

function assistantTurn(kind: TurnKind, t: number, size: number): Array<Record<string, unknown>> {
  const id = `srvtoolu_${t}`;
  const long = words(size, t);
  const answer = { type: 'text', text: `answer ${t}: ${words(Math.ceil(size / 4), t + 1)}` };
  switch (kind) {
    case 'search':
      return [
        { type: 'server_tool_use', id, name: 'web_search', input: { query: `q${t}` } },
        {
          type: 'web_search_tool_result',
          tool_use_id: id,
          content: [
            {
              type: 'web_search_result',
              url: `https://example.com/${t}`,
              title: `Result ${t}`,
              encrypted_content: Buffer.from(long).toString('base64'),
              page_age: 'April 30, 2025',
            },
          ],
        },
        {
          type: 'text',
          text: `found ${t}`,
          citations: [
            {
              type: 'web_search_result_location',
              url: `https://example.com/${t}`,
              title: `Result ${t}`,
              encrypted_index: Buffer.from(`i${t}`).toString('base64'),
              cited_text: 'w1x1',
            },
          ],
        },
      ];
    case 'fetch':
      return [
        { type: 'server_tool_use', id, name: 'web_fetch', input: { url: `https://example.com/${t}` } },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: id,
          content: {
            type: 'web_fetch_result',
            url: `https://example.com/${t}`,
            retrieved_at: '2025-08-25T10:30:00Z',
            content: {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: long },
              title: `Page ${t}`,
              citations: { enabled: true },
            },
          },
        },
        answer,
      ];
    case 'code':
      return [
        { type: 'server_tool_use', id, name: 'code_execution', input: { code: `print(${t})` } },
        {
          type: 'code_execution_tool_result',
          tool_use_id: id,
          content: { type: 'code_execution_result', stdout: long, stderr: '', return_code: 0, content: [] },
        },
        answer,
      ];
    case 'bash':
      return [
        { type: 'server_tool_use', id, name: 'bash_code_execution', input: { command: `ls ${t}` } },
        {
          type: 'bash_code_execution_tool_result',
          tool_use_id: id,
          content: {
            type: 'bash_code_execution_result',
            stdout: long,
            stderr: 'warn',
            return_code: 0,
            content: [{ type: 'bash_code_execution_output', file_id: `file_${t}` }],
          },
        },
        answer,
      ];
    case 'editor':
      return [
        {
          type: 'server_tool_use',
          id,
          name: 'text_editor_code_execution',
          input: { command: 'view', path: `/tmp/f${t}.py` },
        },
        {
          type: 'text_editor_code_execution_tool_result',
          tool_use_id: id,
          content: {
            type: 'text_editor_code_execution_view_result',
            file_type: 'text',
            content: long,
            num_lines: 3,
            start_line: 1,
            total_lines: 3,
          },
        },
        answer,
      ];
    case 'toolsearch':
      return [
        { type: 'server_tool_use', id, name: 'tool_search_tool_regex', input: { query: 'weather' } },
        {
          type: 'tool_search_tool_result',
          tool_use_id: id,
          content: {
            type: 'tool_search_tool_search_result',
            tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }],
          },
        },
        answer,
      ];
    case 'mcp':
      return [
        {
          type: 'mcp_tool_use',
          id: `mcptoolu_${t}`,
          name: 'echo',
          server_name: 'example-mcp',
          input: { param1: `v${t}` },
        },
        {
          type: 'mcp_tool_result',
          tool_use_id: `mcptoolu_${t}`,
          is_error: false,
          content: [{ type: 'text', text: long }],
        },
        answer,
      ];
    case 'future':
      return [{ type: 'hologram_v9', payload: { frames: [long] } }, answer];
    case 'searchresult':
      return [
        {
          type: 'text',
          text: `per the docs ${t}`,
          citations: [
            {
              type: 'search_result_location',
              source: `https://kb.example.com/${t}`,
              title: `KB ${t}`,
              search_result_index: 0,
              start_block_index: 0,
              end_block_index: 0,
              cited_text: 'w1x1',
            },
          ],
        },
      ];
    default:
      return [
        {
          type: 'text',
          text: `answer ${t}: ${long}`,
          citations: [
            {
              type: 'char_location',
              document_index: 0,
              document_title: null,
              start_char_index: 0,
              end_char_index: 4,
              cited_text: 'w0x0',
            },
          ],
        },
      ];
  }
}

function userTurn(kind: TurnKind, t: number, size: number, mark: boolean): Message {
  const text: Record<string, unknown> = {
    type: 'text',
    text: `question ${t}: ${words(Math.ceil(size / 3), t)}`,
  };
  if (mark) text.cache_control = { type: 'ephemeral' };
  if (kind === 'upload')
    return {
      role: 'user',
      content: [{ type: 'container_upload', file_id: `file_up${t}` }, text],
    } as unknown as Message;
  if (kind === 'searchresult')
    return {
      role: 'user',
      content: [
        {
          type: 'search_result',
          source: `https://kb.example.com/${t}`,
          title: `KB ${t}`,
          content: [{ type: 'text', text: words(size, t + 3) }],
          citations: { enabled: true },
        },
        text,
      ],
    } as unknown as Message;
  return { role: 'user', content: [text] } as unknown as Message;
}

/** One tool loop with thinking: thinking + tool_use, the result, then thinking + the answer. */
function thinkingLoop(t: number, size: number, redacted: boolean, finish: boolean, mark: boolean): Message[] {
  const id = `toolu_${t}`;
  const first = redacted
    ? { type: 'redacted_thinking', data: Buffer.from(words(20, t)).toString('base64') }
    : thinking(`let me look up ${t}: ${words(30, t)}`);
  const result: Record<string, unknown> = {
    type: 'tool_result',
    tool_use_id: id,
    content: words(size, t + 5),
  };
  if (mark) result.cache_control = { type: 'ephemeral' };
  const out: Message[] = [
    {
      role: 'assistant',
      content: [first, { type: 'tool_use', id, name: 'lookup', input: { q: t } }],
    } as unknown as Message,
    { role: 'user', content: [result] } as unknown as Message,
  ];
  if (finish)
    out.push({
      role: 'assistant',
      content: [thinking(`now answer ${t}`), { type: 'text', text: `done ${t}: ${words(10, t)}` }],
    } as unknown as Message);
  return out;
}

/** Conversations of 2–8 turns of any kind, optionally ending inside a thinking tool loop. */
export const blocksConversationArb: fc.Arbitrary<BlocksConversation> = fc
  .record({
    turns: fc.array(
      fc.record({ kind: fc.constantFrom(...TURN_KINDS), size: fc.integer({ min: 5, max: 400 }) }),
      { minLength: 2, maxLength: 8 },
    ),
    marks: fc.integer({ min: 0, max: 2 }),
    endInLoop: fc.boolean(),
  })
  .map(({ turns, marks, endInLoop }) => {
    const messages: Message[] = [{ role: 'system', content: 'You are a research agent.' }];
    let left = marks;
    turns.forEach(({ kind, size }, t) => {
      const mark = left > 0 && t % 3 === 1;
      if (mark) left--;
      messages.push(userTurn(kind, t, size, mark));
      if (kind === 'thinking-tools' || kind === 'redacted') {
        messages.push(...thinkingLoop(t, size, kind === 'redacted', true, false));
        return;
      }
      if (kind === 'pause') {
        // A pause_turn reply (web search still running), then the reply that continues it.
        const id = `srvtoolu_p${t}`;
        messages.push({
          role: 'assistant',
          content: [
            { type: 'text', text: `searching ${t}` },
            { type: 'server_tool_use', id, name: 'web_search', input: { query: `q${t}` } },
          ],
        } as unknown as Message);
        messages.push({
          role: 'assistant',
          content: [
            {
              type: 'web_search_tool_result',
              tool_use_id: id,
              content: [
                {
                  type: 'web_search_result',
                  url: 'https://e.com',
                  title: 'E',
                  encrypted_content: Buffer.from(words(size, t)).toString('base64'),
                },
              ],
            },
            { type: 'text', text: `found ${t}: ${words(Math.ceil(size / 4), t)}` },
          ],
        } as unknown as Message);
        return;
      }
      const blocks = assistantTurn(kind, t, size);
      messages.push({ role: 'assistant', content: blocks } as unknown as Message);
    });
    if (endInLoop) {
      const t = turns.length;
      messages.push({ role: 'user', content: `last question ${t}` });
      messages.push(...thinkingLoop(t, 200, false, false, left > 0));
    }
    return { messages, thinkingLoop: endInLoop };
  });
