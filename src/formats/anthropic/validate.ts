/**
 * Shape validation of an Anthropic Messages message (https://docs.anthropic.com/en/api/messages:
 * content blocks). Server-tool, MCP and newer blocks are checked for their ids and that they carry
 * content; a block type no one knows yet passes (see `isFutureBlockType`).
 */

import {
  base64,
  blockList,
  type ContentRules,
  enumOf,
  type Issues,
  isRecord,
  oneOf,
  optBool,
  optStr,
  record,
  roleContentIssues,
  str,
} from '../../messages/validate-kit.js';
import {
  ASSISTANT_ONLY_BLOCKS,
  COMPACTION_BLOCK,
  isFutureBlockType,
  isInlineCall,
  KNOWN_ANTHROPIC_BLOCKS,
  OPENAI_PART_TYPES,
} from './blocks.js';

const ANTHROPIC_ROLES = ['system', 'user', 'assistant'] as const;

/** Accepted content block types by role. */
export const ANTHROPIC_PARTS = {
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
} as const;

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

/** Checks the fields of a source of one type; `source` is an object. */
type SourceCheck = (issues: Issues, source: Record<string, unknown>, path: string) => void;

/** A file the request links to, images and documents alike. */
const urlSource: SourceCheck = (issues, source, path) => str(issues, source.url, `${path}.url`, true);

/** A file uploaded through the Files API, images and documents alike. */
const fileSource: SourceCheck = (issues, source, path) =>
  str(issues, source.file_id, `${path}.file_id`, true);

/** An image's sources, by `type`. */
const IMAGE_SOURCES: Record<string, SourceCheck> = {
  base64: (issues, source, path) => {
    enumOf(issues, source.media_type, `${path}.media_type`, IMAGE_MEDIA_TYPES);
    base64(issues, source.data, `${path}.data`);
  },
  url: urlSource,
  file: fileSource,
};

/** A document's sources, by `type`. */
const DOCUMENT_SOURCES: Record<string, SourceCheck> = {
  base64: (issues, source, path) => {
    str(issues, source.media_type, `${path}.media_type`, true);
    base64(issues, source.data, `${path}.data`);
  },
  text: (issues, source, path) => {
    str(issues, source.media_type, `${path}.media_type`, true);
    str(issues, source.data, `${path}.data`);
  },
  url: urlSource,
  content: (issues, source, path) => {
    const content = source.content;
    if (typeof content === 'string') return;
    blockList(
      issues,
      content,
      `${path}.content`,
      ['text', 'image'],
      anthropicRules,
      'expected a string or an array of text and image blocks',
    );
  },
  file: fileSource,
};

/** Checks a block's `source`: an object whose `type` is one of `types`, with that type's fields. */
function checkSource(
  issues: Issues,
  source: unknown,
  path: string,
  types: Record<string, SourceCheck>,
): void {
  if (!record(issues, source, path)) return;
  const check =
    typeof source.type === 'string' && Object.hasOwn(types, source.type) ? types[source.type] : undefined;
  if (check) check(issues, source, path);
  else issues.push({ path: `${path}.type`, message: oneOf(Object.keys(types)) });
}

function anthropicBlock(issues: Issues, block: Record<string, unknown>, path: string): void {
  switch (block.type) {
    case 'text':
      str(issues, block.text, `${path}.text`);
      citations(issues, block.citations, `${path}.citations`);
      return;
    case 'image':
      checkSource(issues, block.source, `${path}.source`, IMAGE_SOURCES);
      return;
    case 'document':
      checkSource(issues, block.source, `${path}.source`, DOCUMENT_SOURCES);
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
          anthropicRules,
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
        anthropicRules,
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

/** What the Messages API accepts. */
export const anthropicRules: ContentRules = {
  roles: ANTHROPIC_ROLES,
  noun: 'blocks',
  accepted: (role) => ANTHROPIC_PARTS[role as keyof typeof ANTHROPIC_PARTS],
  block: anthropicBlock,
  future: isFutureBlockType,
  unknownHint(type) {
    if (OPENAI_PART_TYPES.has(type) && !KNOWN_ANTHROPIC_BLOCKS.has(type))
      return `("${type}" is an OpenAI content part; convert the conversation with toAnthropic)`;
    const home = BLOCK_HOME[type];
    return home ? `(a "${type}" block is only allowed in ${home})` : undefined;
  },
  roleHint: (role) =>
    role === 'tool' || role === 'developer'
      ? ` (role "${role}" is OpenAI's; convert the conversation with toAnthropic)`
      : '',
};

/**
 * A server-tool or MCP call whose id another call of the same message already has. The API gives
 * each such call an id of its own and pairs its result by it inside the message, so a repeat can
 * only be damaged data, and no view could send it (ids are unique within a request). Client
 * `tool_use` ids repeated across a conversation are renamed by the view instead.
 */
function repeatedInlineIds(issues: Issues, content: unknown, path: string): void {
  if (!Array.isArray(content)) return;
  const seen = new Map<string, { at: string; inline: boolean }>();
  content.forEach((block: unknown, k) => {
    if (!isRecord(block) || typeof block.id !== 'string') return;
    const inline = isInlineCall(block.type as string);
    if (block.type !== 'tool_use' && !inline) return;
    const at = `${path}.content[${k}].id`;
    const earlier = seen.get(block.id);
    if (earlier === undefined) seen.set(block.id, { at, inline });
    else if (inline || earlier.inline)
      issues.push({
        path: at,
        message: `"${block.id}" is already the id of a call at ${earlier.at}: each server tool or MCP call needs an id of its own`,
      });
  });
}

/** Every problem of an Anthropic message (an object, depth already checked). */
export function anthropicMessageIssues(message: Record<string, unknown>, path: string): Issues {
  const issues = roleContentIssues(message, path, anthropicRules);
  repeatedInlineIds(issues, message.content, path);
  return issues;
}
