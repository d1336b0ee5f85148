import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isContextOverflowError, overflowNumbers } from './overflow-errors.js';

/** An error the way an SDK builds it: an `Error` with the SDK's extra fields. */
function sdkError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

const OPENAI_MESSAGE =
  "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.";

/** openai-node's BadRequestError: `.error` is the body's `error`, its fields copied onto the error. */
const openaiSdk = sdkError(`400 ${OPENAI_MESSAGE}`, {
  status: 400,
  headers: { 'x-request-id': 'req_abc' },
  error: {
    message: OPENAI_MESSAGE,
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
  code: 'context_length_exceeded',
  param: 'messages',
  type: 'invalid_request_error',
});

const ANTHROPIC_BODY = {
  type: 'error',
  error: { type: 'invalid_request_error', message: 'prompt is too long: 208423 tokens > 200000 maximum' },
  request_id: 'req_011CVQe1dLrGNMJyE1ghG1av',
};

/** @anthropic-ai/sdk's BadRequestError: `.error` is the whole body, the message `400 {json}`. */
const anthropicSdk = sdkError(`400 ${JSON.stringify(ANTHROPIC_BODY)}`, {
  status: 400,
  error: ANTHROPIC_BODY,
  requestID: 'req_011CVQe1dLrGNMJyE1ghG1av',
});

const GEMINI_BODY = {
  error: {
    code: 400,
    message: 'The input token count (1234567) exceeds the maximum number of tokens allowed (1048576).',
    status: 'INVALID_ARGUMENT',
  },
};

describe('isContextOverflowError and overflowNumbers', () => {
  const overflows: Array<[string, unknown, { limit?: number; actual?: number }]> = [
    ['OpenAI SDK error', openaiSdk, { limit: 128000, actual: 130532 }],
    [
      'OpenAI body with the completion reserved',
      {
        error: {
          message:
            "This model's maximum context length is 4097 tokens. However, you requested 4268 tokens (4012 in the messages, 256 in the completion). Please reduce the length of the messages or completion.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
      { limit: 3841, actual: 4012 },
    ],
    [
      'OpenAI body with functions (all input)',
      sdkError(
        "Error code: 400 - {'error': {'message': \"This model's maximum context length is 128000 tokens. However, your messages resulted in 202868 tokens (202767 in the messages, 101 in the functions). Please reduce the length of the messages or functions.\", 'type': 'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}",
        {},
      ),
      { limit: 128000, actual: 202868 },
    ],
    [
      'OpenAI Responses API stream error',
      {
        type: 'error',
        sequence_number: 2,
        error: {
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
          message:
            'Your input exceeds the context window of this model. Please adjust your input and try again.',
          param: 'input',
        },
      },
      {},
    ],
    ['Anthropic SDK error', anthropicSdk, { limit: 200000, actual: 208423 }],
    [
      'Anthropic input plus max_tokens',
      sdkError(
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and try again"}}',
        { status: 400 },
      ),
      { limit: 184648, actual: 189136 },
    ],
    [
      'Gemini SDK error',
      sdkError(`got status: 400 Bad Request. ${JSON.stringify(GEMINI_BODY)}`, {
        name: 'ApiError',
        status: 400,
      }),
      { limit: 1048576, actual: 1234567 },
    ],
    [
      'Gemini error list',
      [
        {
          error: {
            ...GEMINI_BODY.error,
            errors: [{ message: GEMINI_BODY.error.message, reason: 'badRequest' }],
          },
        },
      ],
      { limit: 1048576, actual: 1234567 },
    ],
    [
      'AI SDK APICallError',
      sdkError('Bad Request', {
        name: 'AI_APICallError',
        url: 'https://api.anthropic.com/v1/messages',
        requestBodyValues: { model: 'claude-sonnet-4-5', messages: [] },
        statusCode: 400,
        responseHeaders: { 'content-type': 'application/json' },
        responseBody:
          '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 202609 tokens > 200000 maximum"}}',
        isRetryable: false,
      }),
      { limit: 200000, actual: 202609 },
    ],
    [
      'axios response',
      sdkError('Request failed with status code 400', {
        config: { url: 'https://api.openai.com/v1/chat/completions' },
        response: {
          status: 400,
          data: { error: { message: OPENAI_MESSAGE, code: 'context_length_exceeded' } },
        },
      }),
      { limit: 128000, actual: 130532 },
    ],
    [
      'a cause chain',
      new Error('agent step 3 failed', { cause: anthropicSdk }),
      { limit: 200000, actual: 208423 },
    ],
    [
      'xAI',
      {
        status: 400,
        message: "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
      },
      { limit: 131072, actual: 136973 },
    ],
    [
      'vLLM with output reserved',
      {
        error: {
          message:
            "You passed 99073 input tokens and requested 32000 output tokens. However, the model's context length is only 131072 tokens, resulting in a maximum input length of 99072 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=99073)",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
      { limit: 99072, actual: 99073 },
    ],
    [
      'llama.cpp server',
      {
        error: {
          code: 400,
          message: 'the request exceeds the available context size, try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 14429,
          n_ctx: 8192,
        },
      },
      { limit: 8192, actual: 14429 },
    ],
    [
      'Bedrock ValidationException',
      sdkError('Input is too long for requested model.', {
        name: 'ValidationException',
        $metadata: { httpStatusCode: 400 },
      }),
      {},
    ],
    ['a bare message', 'prompt is too long: 1,234 tokens > 1,000 maximum', { limit: 1000, actual: 1234 }],
  ];

  it.each(overflows)('recognises %s and reads its numbers', (_name, err, numbers) => {
    expect(isContextOverflowError(err)).toBe(true);
    expect(overflowNumbers(err)).toEqual(numbers);
  });

  const others: Array<[string, unknown]> = [
    [
      'an Anthropic rate limit that asks to reduce the prompt length',
      sdkError(
        '429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 20,000 input tokens per minute. Please reduce the prompt length or the maximum tokens requested, or try again later."}}',
        { status: 429 },
      ),
    ],
    [
      'the same rate limit through an OpenAI-compatible proxy',
      {
        error: {
          code: 'rate_limit_error',
          message:
            'This request would exceed the rate limit for your organization of 20,000 input tokens per minute.',
          type: 'invalid_request_error',
          param: null,
        },
      },
    ],
    [
      'an OpenAI tokens-per-minute limit',
      sdkError(
        'Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 45123.',
        { status: 429, code: 'rate_limit_exceeded', type: 'tokens' },
      ),
    ],
    [
      'a Groq request-too-large (413) rate limit',
      {
        status: 413,
        error: {
          message:
            'Request too large for model `llama-3.3-70b-versatile` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again.',
          type: 'tokens',
          code: 'rate_limit_exceeded',
        },
      },
    ],
    [
      'an invalid tool schema',
      sdkError(
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"}}',
        { status: 400 },
      ),
    ],
    [
      'a max_tokens above the output limit (Anthropic)',
      {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            'max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929',
        },
      },
    ],
    [
      'a max_tokens above the output limit (OpenAI)',
      {
        status: 400,
        error: {
          message:
            'max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.',
          type: 'invalid_request_error',
          param: 'max_tokens',
          code: null,
        },
      },
    ],
    [
      'an orphaned tool result',
      {
        status: 400,
        error: {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message:
              'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          },
        },
      },
    ],
    [
      'a Gemini quota error',
      {
        error: {
          code: 429,
          message: 'Resource has been exhausted (e.g. check quota).',
          status: 'RESOURCE_EXHAUSTED',
        },
      },
    ],
    [
      'a bad request whose request body quotes an overflow message',
      sdkError('Bad Request', {
        name: 'AI_APICallError',
        statusCode: 400,
        requestBodyValues: {
          messages: [
            { role: 'user', content: 'Why do I get "prompt is too long: 300000 tokens > 200000 maximum"?' },
          ],
        },
        responseBody:
          '{"type":"error","error":{"type":"invalid_request_error","message":"model: field required"}}',
      }),
    ],
    ['nothing', undefined],
    ['null', null],
    ['a number', 400],
    ['an empty object', {}],
    ['a plain error', new Error('socket hang up')],
  ];

  it.each(others)('does not take %s for an overflow', (_name, err) => {
    expect(isContextOverflowError(err)).toBe(false);
    expect(overflowNumbers(err)).toBeUndefined();
  });

  it('survives cyclic and deeply nested errors', () => {
    const cyclic: Record<string, unknown> = { message: 'outer' };
    cyclic.cause = cyclic;
    expect(isContextOverflowError(cyclic)).toBe(false);
    let deep: unknown = anthropicSdk;
    for (let i = 0; i < 50; i++) deep = { cause: deep };
    expect(() => isContextOverflowError(deep)).not.toThrow();
  });

  it('reads back any numbers each provider can state', () => {
    const tokens = fc.integer({ min: 1, max: 10_000_000 });
    fc.assert(
      fc.property(tokens, tokens, tokens, (limit, actual, output) => {
        const anthropic = { error: { message: `prompt is too long: ${actual} tokens > ${limit} maximum` } };
        expect(overflowNumbers(anthropic)).toEqual({ limit, actual });
        const gemini = {
          error: {
            message: `The input token count (${actual}) exceeds the maximum number of tokens allowed (${limit}).`,
          },
        };
        expect(overflowNumbers(gemini)).toEqual({ limit, actual });
        const openai = {
          error: {
            code: 'context_length_exceeded',
            message: `This model's maximum context length is ${limit + output} tokens. However, you requested ${actual + output} tokens (${actual} in the messages, ${output} in the completion).`,
          },
        };
        expect(overflowNumbers(openai)).toEqual({ limit, actual });
        const withMax = {
          message: `input length and \`max_tokens\` exceed context limit: ${actual} + ${output} > ${limit + output}, decrease input length or \`max_tokens\` and try again`,
        };
        expect(overflowNumbers(withMax)).toEqual({ limit, actual });
      }),
    );
  });
});
