/**
 * Shape validation of a Chat Completions message (https://platform.openai.com/docs/api-reference/chat/create:
 * `messages`), and of a plain message that fits every format (no format shown yet).
 */

import { jsonTextDepth, MAX_JSON_DEPTH } from '../../messages/json-limits.js';
import {
  blockList,
  type ContentRules,
  contentNoun,
  enumOf,
  type Issues,
  oneOf,
  optStr,
  record,
  roleContentIssues,
  str,
} from '../../messages/validate-kit.js';
import { KNOWN_ANTHROPIC_BLOCKS, OPENAI_PART_TYPES } from '../anthropic/blocks.js';
import { ANTHROPIC_PARTS } from '../anthropic/validate.js';

const OPENAI_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** Accepted content part types by role. */
const PARTS = {
  system: ['text'],
  developer: ['text'],
  user: ['text', 'image_url', 'input_audio', 'file'],
  assistant: ['text', 'refusal'],
  tool: ['text'],
} as const;

const IMAGE_DETAILS = ['auto', 'low', 'high'];

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

/** An assistant message: content, `tool_calls` and `refusal` (content may be null with calls). */
function assistantFields(
  issues: Issues,
  message: Record<string, unknown>,
  path: string,
  rules: ContentRules,
): void {
  const accepted = rules.accepted('assistant');
  const content = message.content;
  const contentPath = `${path}.content`;
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
      rules,
      `expected a string, an array of ${contentNoun(rules, accepted)}, or null`,
    );
  }
}

/** What Chat Completions accepts. */
export const openaiRules: ContentRules = {
  roles: OPENAI_ROLES,
  noun: 'parts',
  accepted: (role) => PARTS[role as keyof typeof PARTS],
  block: openaiPart,
  unknownHint: (type) =>
    KNOWN_ANTHROPIC_BLOCKS.has(type) && !OPENAI_PART_TYPES.has(type)
      ? `("${type}" is an Anthropic content block; convert the conversation with toOpenAI)`
      : undefined,
  assistant: assistantFields,
};

/**
 * What a plain message that fits every format is checked by: OpenAI's roles and fields, text
 * parts only; an unknown type is told every type it could have been (both formats' lists).
 */
export const plainRules: ContentRules = {
  roles: OPENAI_ROLES,
  noun: 'parts',
  accepted(role) {
    const union = new Set<string>(PARTS[role as keyof typeof PARTS]);
    if (role in ANTHROPIC_PARTS)
      for (const t of ANTHROPIC_PARTS[role as keyof typeof ANTHROPIC_PARTS]) union.add(t);
    return [...union];
  },
  block: (issues, block, path) => str(issues, block.text, `${path}.text`),
  assistant: assistantFields,
};

/** Every problem of a Chat Completions message (an object, depth already checked). */
export function openaiMessageIssues(message: Record<string, unknown>, path: string): Issues {
  return roleContentIssues(message, path, openaiRules);
}
