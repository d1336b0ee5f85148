/**
 * Shape validation of one message against the provider formats, before anything is stored. Every
 * problem is collected (not just the first) with the exact path and what was expected there, so a
 * caller fixing a converter sees all of it at once.
 */

import { InvalidMessageError, type MessageIssue } from '../errors.js';
import {
  ASSISTANT_ONLY_BLOCKS,
  COMPACTION_BLOCK,
  isFutureBlockType,
  isInlineCall,
  KNOWN_ANTHROPIC_BLOCKS,
  OPENAI_PART_TYPES,
} from '../formats/anthropic/blocks.js';
import { geminiMessageIssues } from '../formats/gemini/parts.js';
import { responsesItemIssues } from '../formats/openai-responses/validate.js';
import { formatEvidence } from './detect.js';
import { jsonTextDepth, jsonValueIssues, MAX_JSON_DEPTH } from './json-limits.js';
import type { Message, MessageFormat } from './types.js';

type Issues = MessageIssue[];
type Scope = MessageFormat | undefined;

const OPENAI_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
const ANTHROPIC_ROLES = ['system', 'user', 'assistant'] as const;

/** Accepted content part/block types by format and role. */
const PARTS = {
  openai: {
    system: ['text'],
    developer: ['text'],
    user: ['text', 'image_url', 'input_audio', 'file'],
    assistant: ['text', 'refusal'],
    tool: ['text'],
  },
  anthropic: {
    system: ['text'],
    user: ['text', 'image', 'document', 'tool_result', 'search_result', 'container_upload'],
    assistant: [
      'text',
      'image',
      'document',
      'tool_use',
      'thinking',
      'redacted_thinking',
      ...ASSISTANT_ONLY_BLOCKS,
    ],
  },
} as const;

const ANTHROPIC_BLOCK_TYPES = KNOWN_ANTHROPIC_BLOCKS;
/** Where a block that is known but misplaced is allowed, for a better message than "unknown". */
const BLOCK_HOME: Record<string, string> = {
  tool_use: 'an assistant message',
  tool_result: 'a user message',
  thinking: 'an assistant message',
  redacted_thinking: 'an assistant message',
  search_result: 'a user message or a tool result',
  container_upload: 'a user message',
  ...Object.fromEntries(ASSISTANT_ONLY_BLOCKS.map((t) => [t, 'an assistant message'])),
};

/** Blocks a tool_result's content may hold (text, image, document, search results, tool references). */
const RESULT_CONTENT = ['text', 'image', 'document', 'search_result', 'tool_reference'];

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const IMAGE_DETAILS = ['auto', 'low', 'high'];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function oneOf(values: readonly string[]): string {
  return `expected one of ${values.map((v) => `"${v}"`).join(', ')}`;
}

function str(issues: Issues, value: unknown, path: string, nonEmpty = false): void {
  if (typeof value !== 'string')
    issues.push({ path, message: nonEmpty ? 'expected a non-empty string' : 'expected a string' });
  else if (nonEmpty && value.length === 0) issues.push({ path, message: 'expected a non-empty string' });
}

function optStr(issues: Issues, value: unknown, path: string): void {
  if (value !== undefined) str(issues, value, path);
}

function base64(issues: Issues, value: unknown, path: string): void {
  if (typeof value === 'string' && value.length > 0 && value.length % 4 === 0 && BASE64.test(value)) return;
  const hint =
    typeof value === 'string' && value.startsWith('data:')
      ? ' (the bare data, without the "data:…;base64," prefix)'
      : '';
  issues.push({ path, message: `expected a base64 string${hint}` });
}

function record(issues: Issues, value: unknown, path: string): value is Record<string, unknown> {
  if (isRecord(value)) return true;
  issues.push({ path, message: 'expected an object' });
  return false;
}

function enumOf(issues: Issues, value: unknown, path: string, values: readonly string[]): void {
  if (typeof value !== 'string' || !values.includes(value)) issues.push({ path, message: oneOf(values) });
}

/** The message for a block type not accepted here, naming what is accepted and why it is not. */
function unknownTypeMessage(type: unknown, accepted: readonly string[], scope: Scope): string {
  const base = oneOf(accepted);
  if (typeof type !== 'string') return base;
  if (scope === 'openai' && ANTHROPIC_BLOCK_TYPES.has(type) && !OPENAI_PART_TYPES.has(type)) {
    return `${base} ("${type}" is an Anthropic content block; convert the conversation with toOpenAI)`;
  }
  if (scope === 'anthropic' && OPENAI_PART_TYPES.has(type) && !ANTHROPIC_BLOCK_TYPES.has(type)) {
    return `${base} ("${type}" is an OpenAI content part; convert the conversation with toAnthropic)`;
  }
  const home = BLOCK_HOME[type];
  if (scope === 'anthropic' && home) return `${base} (a "${type}" block is only allowed in ${home})`;
  return base;
}

// ------------------------------------------------------------------------------------ OpenAI parts

function openaiPart(issues: Issues, part: Record<string, unknown>, path: string): void {
  switch (part.type) {
    case 'text':
      str(issues, part.text, `${path}.text`);
      return;
    case 'refusal':
      str(issues, part.refusal, `${path}.refusal`);
      return;
    case 'image_url': {
      const image = part.image_url;
      if (!record(issues, image, `${path}.image_url`)) return;
      str(issues, image.url, `${path}.image_url.url`, true);
      if (image.detail !== undefined) enumOf(issues, image.detail, `${path}.image_url.detail`, IMAGE_DETAILS);
      return;
    }
    case 'input_audio': {
      const audio = part.input_audio;
      if (!record(issues, audio, `${path}.input_audio`)) return;
      str(issues, audio.data, `${path}.input_audio.data`, true);
      str(issues, audio.format, `${path}.input_audio.format`, true);
      return;
    }
    case 'file': {
      const file = part.file;
      if (!record(issues, file, `${path}.file`)) return;
      optStr(issues, file.file_data, `${path}.file.file_data`);
      optStr(issues, file.file_id, `${path}.file.file_id`);
      optStr(issues, file.filename, `${path}.file.filename`);
      if (file.file_data === undefined && file.file_id === undefined) {
        issues.push({ path: `${path}.file`, message: 'expected "file_data" or "file_id"' });
      }
      return;
    }
  }
}

// ------------------------------------------------------------------------------------ Anthropic blocks

function imageSource(issues: Issues, source: unknown, path: string): void {
  if (!record(issues, source, path)) return;
  switch (source.type) {
    case 'base64':
      enumOf(issues, source.media_type, `${path}.media_type`, IMAGE_MEDIA_TYPES);
      base64(issues, source.data, `${path}.data`);
      return;
    case 'url':
      str(issues, source.url, `${path}.url`, true);
      return;
    case 'file':
      str(issues, source.file_id, `${path}.file_id`, true);
      return;
    default:
      issues.push({ path: `${path}.type`, message: oneOf(['base64', 'url', 'file']) });
  }
}

function documentSource(issues: Issues, source: unknown, path: string): void {
  if (!record(issues, source, path)) return;
  switch (source.type) {
    case 'base64':
      str(issues, source.media_type, `${path}.media_type`, true);
      base64(issues, source.data, `${path}.data`);
      return;
    case 'text':
      str(issues, source.media_type, `${path}.media_type`, true);
      str(issues, source.data, `${path}.data`);
      return;
    case 'url':
      str(issues, source.url, `${path}.url`, true);
      return;
    case 'file':
      str(issues, source.file_id, `${path}.file_id`, true);
      return;
    case 'content': {
      const content = source.content;
      if (typeof content === 'string') return;
      blockList(
        issues,
        content,
        `${path}.content`,
        ['text', 'image'],
        'anthropic',
        'expected a string or an array of text and image blocks',
      );
      return;
    }
    default:
      issues.push({ path: `${path}.type`, message: oneOf(['base64', 'text', 'url', 'content', 'file']) });
  }
}

function anthropicBlock(issues: Issues, block: Record<string, unknown>, path: string): void {
  switch (block.type) {
    case 'text':
      str(issues, block.text, `${path}.text`);
      citations(issues, block.citations, `${path}.citations`);
      return;
    case 'image':
      imageSource(issues, block.source, `${path}.source`);
      return;
    case 'document':
      documentSource(issues, block.source, `${path}.source`);
      optStr(issues, block.title, `${path}.title`);
      optStr(issues, block.context, `${path}.context`);
      return;
    case 'tool_use':
      str(issues, block.id, `${path}.id`, true);
      str(issues, block.name, `${path}.name`, true);
      if (!isRecord(block.input)) issues.push({ path: `${path}.input`, message: 'expected an object' });
      return;
    case 'tool_result': {
      str(issues, block.tool_use_id, `${path}.tool_use_id`, true);
      const content = block.content;
      if (content !== undefined && typeof content !== 'string') {
        blockList(
          issues,
          content,
          `${path}.content`,
          RESULT_CONTENT,
          'anthropic',
          'expected a string or an array of text, image, document and search_result blocks',
        );
      }
      optBool(issues, block.is_error, `${path}.is_error`);
      return;
    }
    case 'thinking':
      str(issues, block.thinking, `${path}.thinking`);
      str(issues, block.signature, `${path}.signature`);
      return;
    case 'redacted_thinking':
      str(issues, block.data, `${path}.data`);
      return;
    default:
      newerBlock(issues, block, path);
  }
}

function optBool(issues: Issues, value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') issues.push({ path, message: 'expected a boolean' });
}

/** `citations` of a text block: absent, null, or a list of citation objects of any documented kind. */
function citations(issues: Issues, value: unknown, path: string): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'expected an array of citations' });
    return;
  }
  value.forEach((c: unknown, i) => {
    if (!isRecord(c) || typeof c.type !== 'string')
      issues.push({ path: `${path}[${i}]`, message: 'expected a citation object with a "type"' });
  });
}

/**
 * Server tools, MCP, container uploads and search results (Messages API reference, content
 * blocks). Results are checked for their id and that they carry content; what is inside (search
 * hits, stdout, a fetched page) is the API's own and kept as it came.
 */
function newerBlock(issues: Issues, block: Record<string, unknown>, path: string): void {
  const type = block.type as string;
  if (isInlineCall(type)) {
    str(issues, block.id, `${path}.id`, true);
    str(issues, block.name, `${path}.name`, true);
    if (!isRecord(block.input)) issues.push({ path: `${path}.input`, message: 'expected an object' });
    if (type === 'mcp_tool_use') str(issues, block.server_name, `${path}.server_name`, true);
    return;
  }
  switch (type) {
    case 'container_upload':
      str(issues, block.file_id, `${path}.file_id`, true);
      return;
    case 'search_result':
      str(issues, block.source, `${path}.source`, true);
      str(issues, block.title, `${path}.title`);
      blockList(
        issues,
        block.content,
        `${path}.content`,
        ['text'],
        'anthropic',
        'expected an array of text blocks',
      );
      return;
  }
  // A compaction block is the API's own (its summary may be null when compaction failed): verbatim.
  if (!ASSISTANT_ONLY_BLOCKS.includes(type) || type === COMPACTION_BLOCK) return;
  str(issues, block.tool_use_id, `${path}.tool_use_id`, true);
  if (block.content === undefined)
    issues.push({ path: `${path}.content`, message: 'expected the result content' });
  optBool(issues, block.is_error, `${path}.is_error`);
}

// ------------------------------------------------------------------------------------ content

/**
 * Checks an array of parts/blocks: each an object of an accepted type with its fields. `scope`
 * picks which format's field rules apply (undefined: only `text` can be accepted, as in a
 * message that fits either format).
 */
function blockList(
  issues: Issues,
  value: unknown,
  path: string,
  accepted: readonly string[],
  scope: Scope,
  notArray: string,
): void {
  if (!Array.isArray(value)) {
    issues.push({ path, message: notArray });
    return;
  }
  for (let i = 0; i < value.length; i++) {
    const block: unknown = value[i];
    const at = `${path}[${i}]`;
    if (!isRecord(block)) {
      issues.push({ path: at, message: 'expected an object' });
      continue;
    }
    const future = scope === 'anthropic' && isFutureBlockType(block.type);
    if (!future && (typeof block.type !== 'string' || !accepted.includes(block.type))) {
      issues.push({ path: `${at}.type`, message: unknownTypeMessage(block.type, accepted, scope) });
      continue;
    }
    if (scope === 'anthropic') anthropicBlock(issues, block, at);
    else if (scope === 'openai') openaiPart(issues, block, at);
    else str(issues, block.text, `${at}.text`);
  }
}

function acceptedParts(scope: Scope, role: string): readonly string[] {
  if (scope === 'openai') return PARTS.openai[role as keyof typeof PARTS.openai];
  if (scope === 'anthropic') return PARTS.anthropic[role as keyof typeof PARTS.anthropic];
  // Either format: the union, so an unknown type is told everything it could have been.
  const union = new Set<string>([...PARTS.openai[role as keyof typeof PARTS.openai]]);
  if (role in PARTS.anthropic)
    for (const t of PARTS.anthropic[role as keyof typeof PARTS.anthropic]) union.add(t);
  return [...union];
}

function contentNoun(scope: Scope, accepted: readonly string[]): string {
  if (accepted.length === 1) return scope === 'anthropic' ? 'text blocks' : 'text parts';
  return scope === 'anthropic' ? 'content blocks' : 'content parts';
}

function openaiToolCalls(issues: Issues, value: unknown, path: string): void {
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'expected an array of tool calls' });
    return;
  }
  for (let i = 0; i < value.length; i++) {
    const call: unknown = value[i];
    const at = `${path}[${i}]`;
    if (!record(issues, call, at)) continue;
    str(issues, call.id, `${at}.id`, true);
    if (call.type !== 'function') issues.push({ path: `${at}.type`, message: oneOf(['function']) });
    const fn = call.function;
    if (!record(issues, fn, `${at}.function`)) continue;
    str(issues, fn.name, `${at}.function.name`, true);
    str(issues, fn.arguments, `${at}.function.arguments`);
    if (typeof fn.arguments === 'string' && jsonTextDepth(fn.arguments) > MAX_JSON_DEPTH) {
      issues.push({
        path: `${at}.function.arguments`,
        message: `JSON nested more than ${MAX_JSON_DEPTH} levels deep; refused`,
      });
    }
  }
}

function messageIssues(message: unknown, path: string, format: MessageFormat | undefined): Issues {
  const issues: Issues = [];
  if (!isRecord(message)) {
    issues.push({ path, message: 'expected a message object with "role" and "content"' });
    return issues;
  }
  // Every walk below (and every later one) is bounded by this depth.
  const deep = jsonValueIssues(message, path, { depthOnly: true });
  if (deep.length > 0) return deep;
  const scope: Scope = format ?? formatEvidence(message)?.format;
  if (scope === 'openai-responses') return responsesItemIssues(message, path);
  if (scope === 'gemini') return geminiMessageIssues(message, path);
  const roles = scope === 'anthropic' ? ANTHROPIC_ROLES : OPENAI_ROLES;
  const role = message.role;
  if (typeof role !== 'string' || !(roles as readonly string[]).includes(role)) {
    const hint =
      scope === 'anthropic' && (role === 'tool' || role === 'developer')
        ? ` (role "${role}" is OpenAI's; convert the conversation with toAnthropic)`
        : '';
    issues.push({ path: `${path}.role`, message: `${oneOf(roles)}${hint}` });
    return issues;
  }
  if (message.name !== undefined) str(issues, message.name, `${path}.name`);

  const accepted = acceptedParts(scope, role);
  const content = message.content;
  const contentPath = `${path}.content`;
  const noun = contentNoun(scope, accepted);

  if (role === 'assistant' && scope !== 'anthropic') {
    const calls = message.tool_calls;
    const hasCalls = Array.isArray(calls) && calls.length > 0;
    if (calls !== undefined && calls !== null) openaiToolCalls(issues, calls, `${path}.tool_calls`);
    if (message.refusal !== undefined && message.refusal !== null)
      str(issues, message.refusal, `${path}.refusal`);
    const hasRefusal = typeof message.refusal === 'string';
    if (content === undefined || content === null) {
      // OpenAI lets content be omitted only when the reply is tool calls (or a refusal).
      if (!hasCalls && !hasRefusal) {
        issues.push({
          path: contentPath,
          message:
            'expected a string or an array of content parts (content may be null only when tool_calls is present)',
        });
      }
    } else if (typeof content !== 'string') {
      blockList(
        issues,
        content,
        contentPath,
        accepted,
        scope,
        `expected a string, an array of ${noun}, or null`,
      );
    }
    return issues;
  }

  if (role === 'tool') {
    str(issues, message.tool_call_id, `${path}.tool_call_id`, true);
  }
  if (typeof content !== 'string') {
    blockList(issues, content, contentPath, accepted, scope, `expected a string or an array of ${noun}`);
  }
  return issues;
}

/**
 * Checks that `message` is a well-formed message (of `format` when given, else of the format its
 * own fields show) and returns it typed. Throws `InvalidMessageError` listing every problem by
 * path (`messages[12].tool_calls[0].function.arguments: expected a string`). The input is only
 * read, never changed.
 *
 * Shape only: unknown extra fields are allowed (providers and SDKs add their own), unknown content
 * types are not. An assistant message with empty text (`""`, `[]`) is well-formed and accepted,
 * because real replies (a cancelled stream, a bare stop) produce them and the history should keep
 * what happened; `validateRequest` flags them, and views leave them out. An OpenAI assistant
 * message with neither content nor `tool_calls` is malformed and rejected here.
 */
export function validateMessage(message: unknown, path: string, format?: MessageFormat): Message {
  const issues = messageIssues(message, path, format);
  if (issues.length > 0) throw new InvalidMessageError(issues);
  return message as Message;
}

/** Like `validateMessage` but returns the problems instead of throwing (empty when valid). */
export function messageProblems(message: unknown, path: string, format?: MessageFormat): MessageIssue[] {
  return messageIssues(message, path, format);
}
