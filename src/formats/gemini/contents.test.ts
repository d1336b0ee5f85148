import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationArb, pngBase64 } from '../../../test/support/arbitraries.js';
import { callingMessage, functionCall } from '../../../test/support/openai-calls.js';
import { viewReaderOf } from '../../measure/count-endpoints.js';
import type { AnthropicMessage, AnthropicTextBlock, Message, OpenAIMessage } from '../../messages/types.js';
import { type GeminiPart, type GeminiRequestParts, geminiContentsOf, toGeminiTools } from './contents.js';

/** A view of any format as Gemini's `systemInstruction` and `contents`, read as the count body reads it. */
function toGeminiContents(
  messages: readonly Message[],
  system?: string | readonly AnthropicTextBlock[],
): GeminiRequestParts {
  return geminiContentsOf(viewReaderOf(messages), system);
}

const PART_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];

describe('toGeminiContents', () => {
  it('turns OpenAI tool calls and their results into functionCall and functionResponse', () => {
    const messages: OpenAIMessage[] = [
      { role: 'system', content: 'You are a booking agent.' },
      { role: 'user', content: 'Find flight BA117 on 2024-05-01' },
      callingMessage(
        functionCall('call_1', 'search_flights', '{"flight":"BA117"}'),
        functionCall('call_2', 'get_user', '{"id":"u_42"}'),
      ),
      { role: 'tool', tool_call_id: 'call_1', content: '{"status":"on time"}' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Ada Lovelace' },
      { role: 'assistant', content: 'BA117 is on time.' },
    ];
    const out = toGeminiContents(messages);
    expect(out.systemInstruction).toEqual({ parts: [{ text: 'You are a booking agent.' }] });
    expect(out.contents).toEqual([
      { role: 'user', parts: [{ text: 'Find flight BA117 on 2024-05-01' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'search_flights', args: { flight: 'BA117' } } },
          { functionCall: { name: 'get_user', args: { id: 'u_42' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'search_flights', response: { content: '{"status":"on time"}' } } },
          { functionResponse: { name: 'get_user', response: { content: 'Ada Lovelace' } } },
        ],
      },
      { role: 'model', parts: [{ text: 'BA117 is on time.' }] },
    ]);
  });

  it('sends images as inlineData (base64) or fileData (URL) with their media type', () => {
    const png = pngBase64(8, 8);
    const messages: OpenAIMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/photos/cat.webp?size=2' } },
        ],
      },
    ];
    expect(toGeminiContents(messages).contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: png } },
          { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/photos/cat.webp?size=2' } },
        ],
      },
    ]);
  });

  it('keeps media from an Anthropic tool result right after its functionResponse, and marks errors', () => {
    const png = pngBase64(4, 4);
    const messages: AnthropicMessage[] = [
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: 'Take a screenshot, then read /etc/missing' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'two calls', signature: 'sig' },
          { type: 'text', text: '' },
          { type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: '/etc/missing' },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'screen 1' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
            ],
          },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'ENOENT', is_error: true },
          { type: 'text', text: 'Now explain.' },
        ],
      },
    ];
    const out = toGeminiContents(messages, 'Always cite paths.');
    expect(out.systemInstruction).toEqual({ parts: [{ text: 'Always cite paths.' }, { text: 'Be brief.' }] });
    expect(out.contents).toEqual([
      { role: 'user', parts: [{ text: 'Take a screenshot, then read /etc/missing' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'screenshot', args: {} } },
          { functionCall: { name: 'read_file', args: { value: '/etc/missing' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'screenshot', response: { content: 'screen 1' } } },
          { inlineData: { mimeType: 'image/png', data: png } },
          { functionResponse: { name: 'read_file', response: { error: 'ENOENT' } } },
          { text: 'Now explain.' },
        ],
      },
    ]);
  });

  it('sends documents as inlineData, text or fileData', () => {
    const messages: AnthropicMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes.txt body' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/spec.pdf' } },
          { type: 'document', source: { type: 'file', file_id: 'file_9' } },
        ],
      },
    ];
    const parts = toGeminiContents(messages).contents[0]?.parts ?? [];
    expect(parts.slice(0, 3)).toEqual([
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0x' } },
      { text: 'notes.txt body' },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/spec.pdf' } },
    ]);
    expect(parts[3]).toEqual({ text: expect.stringContaining('file_9') });
  });

  it('merges consecutive turns of one role and drops turns left empty', () => {
    const messages: AnthropicMessage[] = [
      { role: 'user', content: 'first' },
      { role: 'user', content: '   ' },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: 'answer' },
    ];
    expect(toGeminiContents(messages).contents).toEqual([
      { role: 'user', parts: [{ text: 'first' }, { text: 'second' }] },
      { role: 'model', parts: [{ text: 'answer' }] },
    ]);
  });

  it('gives well-formed contents for any generated conversation in either format', () => {
    fc.assert(
      fc.property(conversationArb(), ({ messages }) => {
        const { contents } = toGeminiContents(messages);
        const called = new Set<string>();
        for (const content of contents) {
          expect(['user', 'model']).toContain(content.role);
          expect(content.parts.length).toBeGreaterThan(0);
          for (const part of content.parts) {
            const fields = Object.keys(part);
            expect(fields).toHaveLength(1);
            expect(PART_FIELDS).toContain(fields[0]);
            const p: GeminiPart = part;
            if ('text' in p) expect(p.text.trim()).not.toBe('');
            if ('functionCall' in p) {
              expect(content.role).toBe('model');
              called.add(p.functionCall.name);
            }
            if ('functionResponse' in p) {
              expect(content.role).toBe('user');
              expect(called.has(p.functionResponse.name)).toBe(true);
            }
          }
        }
        for (let i = 1; i < contents.length; i++) expect(contents[i]?.role).not.toBe(contents[i - 1]?.role);
      }),
      { numRuns: 60 },
    );
  });
});

describe('toGeminiTools', () => {
  it('declares OpenAI and Anthropic tools with their JSON Schema', () => {
    const schema = { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false };
    expect(
      toGeminiTools([
        {
          type: 'function',
          function: { name: 'read_file', description: 'Reads a file', parameters: schema },
        },
        { name: 'write_file', description: 'Writes a file', input_schema: schema },
        { type: 'web_search_20250305', name: 'web_search' },
      ]),
    ).toEqual([
      {
        functionDeclarations: [
          { name: 'read_file', description: 'Reads a file', parametersJsonSchema: schema },
          { name: 'write_file', description: 'Writes a file', parametersJsonSchema: schema },
          { name: 'web_search' },
        ],
      },
    ]);
  });

  it('gives no tools entry for no tools', () => {
    expect(toGeminiTools(undefined)).toEqual([]);
    expect(toGeminiTools([])).toEqual([]);
  });
});
