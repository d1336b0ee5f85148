import { describe, expect, it } from 'vitest';
import { freezeDeep } from '../../messages/freeze.js';
import type { Message } from '../../messages/types.js';
import { getModelInfo } from '../../tokens/catalog.js';
import { bedrockClearedResult, bedrockInputsCleared, bedrockTextParts, bedrockTruncated } from './shorten.js';
import { type BlockCounting, bedrockContentTokens } from './tokens.js';

const results = freezeDeep({
  role: 'user',
  content: [
    {
      toolResult: {
        toolUseId: 't1',
        content: [{ text: 'a long listing' }, { json: { n: 1 } }],
        status: 'error',
      },
    },
    { text: 'and a note' },
    { cachePoint: { type: 'default' } },
  ],
}) as unknown as Message;

describe('shortening Bedrock messages in their own shape', () => {
  it('clears a result to a placeholder, keeping its id, status and the blocks around it', () => {
    const cleared = bedrockClearedResult(results, 0, '[cleared]')!;
    expect(cleared.content).toEqual([
      { toolResult: { toolUseId: 't1', content: [{ text: '[cleared]' }], status: 'error' } },
      { text: 'and a note' },
      { cachePoint: { type: 'default' } },
    ]);
    expect(bedrockClearedResult(results, 1, 'x')).toBeUndefined();
    expect(Object.isFrozen(cleared)).toBe(true);
  });

  it('cuts the texts truncation may cut, never the text of a turn holding reasoning', () => {
    // A json block is cut as its JSON text (a listing of records has no one long string to cut).
    expect(bedrockTextParts(results)).toEqual([
      { block: 0, inner: 0, text: 'a long listing' },
      { block: 0, inner: 1, text: '{"n":1}' },
      { block: 1, inner: -1, text: 'and a note' },
    ]);
    const cut = bedrockTruncated(results, 0, 0, (t) => t.slice(0, 6))!;
    expect(
      (cut.content as unknown as Array<{ toolResult: { content: unknown[] } }>)[0]!.toolResult.content,
    ).toEqual([{ text: 'a long' }, { json: { n: 1 } }]);
    const cutJson = bedrockTruncated(results, 0, 1, (t) => t.slice(0, 4))!;
    expect(
      (cutJson.content as unknown as Array<{ toolResult: { content: unknown[] } }>)[0]!.toolResult.content,
    ).toEqual([{ text: 'a long listing' }, { text: '{"n"' }]);
    const reasoning = {
      role: 'assistant',
      content: [{ reasoningContent: { reasoningText: { text: 'r', signature: 's' } } }, { text: 'answer' }],
    } as unknown as Message;
    expect(bedrockTextParts(reasoning)).toEqual([]);
  });

  it('empties the inputs of the calls asked for only', () => {
    const calls = {
      role: 'assistant',
      content: [
        { toolUse: { toolUseId: 'a', name: 'f', input: { big: 'x' } } },
        { toolUse: { toolUseId: 'b', name: 'g', input: { keep: 1 } } },
      ],
    } as unknown as Message;
    expect(bedrockInputsCleared(calls, new Set([0])).content).toEqual([
      { toolUse: { toolUseId: 'a', name: 'f', input: {} } },
      { toolUse: { toolUseId: 'b', name: 'g', input: { keep: 1 } } },
    ]);
  });
});

describe('Bedrock tokens and prices', () => {
  it('counts media by what they are, never their base64 as text, and a cache point as nothing', () => {
    let fixed = 0;
    const c: BlockCounting = {
      bpe: (t) => t.split(/\s+/).filter(Boolean).length,
      fixed: (n) => {
        fixed += n;
      },
      image: () => 1600,
      pdf: () => 3000,
      encrypted: (b) => Math.ceil(b.length / 4),
      perToolCall: 10,
      perToolResult: 5,
    };
    const text = bedrockContentTokens(
      {
        role: 'user',
        content: [
          { text: 'two words' },
          { image: { format: 'png', source: { bytes: 'A'.repeat(100_000) } } },
          { document: { name: 'Q3 report', format: 'pdf', source: { bytes: 'JVBERi0=' } } },
          { cachePoint: { type: 'default' } },
        ],
      },
      c,
    );
    expect(text).toBe(4);
    expect(fixed).toBe(1600 + 3000);
  });

  it("prices Claude on Bedrock: global profiles at Anthropic's rates, regional ones 10% over", () => {
    const direct = getModelInfo('claude-sonnet-4-5')!.pricing!;
    expect(getModelInfo('global.anthropic.claude-sonnet-4-5-20250929-v1:0')!.pricing).toEqual(direct);
    const regional = getModelInfo('us.anthropic.claude-sonnet-4-5-20250929-v1:0')!.pricing!;
    expect([regional.input, regional.output, regional.cacheRead, regional.cacheWrite]).toEqual([
      3.3, 16.5, 0.33, 4.125,
    ]);
    expect(getModelInfo('anthropic.claude-3-5-haiku-20241022-v1:0')!.pricing).toBe(
      getModelInfo('claude-3-5-haiku')!.pricing,
    );
  });
});
