/**
 * Shape checks of one OpenAI Responses API input item (API reference, responses/create, "input"
 * item types). Fields the API documents as required are checked; everything else an item carries
 * (statuses, ids, annotations, encrypted reasoning) is kept as it came.
 */

import type { MessageIssue } from '../../errors.js';
import { itemType, MAX_ENCRYPTED_CONTENT, RESPONSES_ITEM_TYPES } from './items.js';

type Issues = MessageIssue[];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(issues: Issues, item: Record<string, unknown>, field: string, path: string): void {
  const value = item[field];
  if (typeof value !== 'string' || value.length === 0)
    issues.push({ path: `${path}.${field}`, message: 'expected a non-empty string' });
}

function text(issues: Issues, item: Record<string, unknown>, field: string, path: string): void {
  if (typeof item[field] !== 'string')
    issues.push({ path: `${path}.${field}`, message: 'expected a string' });
}

function object(issues: Issues, item: Record<string, unknown>, field: string, path: string): void {
  if (!isRecord(item[field])) issues.push({ path: `${path}.${field}`, message: 'expected an object' });
}

const ROLES = ['user', 'assistant', 'system', 'developer'];
const PARTS_BY_ROLE: Record<string, readonly string[]> = {
  user: ['input_text', 'input_image', 'input_file', 'input_audio'],
  system: ['input_text'],
  developer: ['input_text'],
  assistant: ['output_text', 'refusal', 'input_text'],
};

function part(issues: Issues, p: Record<string, unknown>, path: string): void {
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      text(issues, p, 'text', path);
      return;
    case 'refusal':
      text(issues, p, 'refusal', path);
      return;
    case 'input_image':
      if (typeof p.image_url !== 'string' && typeof p.file_id !== 'string')
        issues.push({ path, message: 'expected "image_url" or "file_id"' });
      return;
    case 'input_file':
      if (typeof p.file_id !== 'string' && typeof p.file_data !== 'string' && typeof p.file_url !== 'string')
        issues.push({ path, message: 'expected "file_id", "file_data" or "file_url"' });
      return;
    case 'input_audio':
      object(issues, p, 'input_audio', path);
  }
}

function message(issues: Issues, item: Record<string, unknown>, path: string): void {
  const role = item.role;
  if (typeof role !== 'string' || !ROLES.includes(role)) {
    issues.push({
      path: `${path}.role`,
      message: `expected one of ${ROLES.map((r) => `"${r}"`).join(', ')}`,
    });
    return;
  }
  const content = item.content;
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) {
    issues.push({ path: `${path}.content`, message: 'expected a string or an array of content parts' });
    return;
  }
  const accepted = PARTS_BY_ROLE[role]!;
  content.forEach((p: unknown, k) => {
    const at = `${path}.content[${k}]`;
    if (!isRecord(p)) {
      issues.push({ path: at, message: 'expected an object' });
    } else if (typeof p.type !== 'string' || !accepted.includes(p.type)) {
      issues.push({
        path: `${at}.type`,
        message: `expected one of ${accepted.map((t) => `"${t}"`).join(', ')}`,
      });
    } else part(issues, p, at);
  });
}

function output(issues: Issues, item: Record<string, unknown>, path: string): void {
  const value = item.output;
  if (typeof value !== 'string' && !Array.isArray(value))
    issues.push({ path: `${path}.output`, message: 'expected a string or an array of content parts' });
}

/**
 * A `compaction` item: opaque `encrypted_content` (developers.openai.com/api/docs/guides/compaction),
 * within the API's 10 MiB string limit; an item over it would be refused on every later request.
 */
function compaction(issues: Issues, item: Record<string, unknown>, path: string): void {
  nonEmpty(issues, item, 'encrypted_content', path);
  const content = item.encrypted_content;
  if (typeof content === 'string' && content.length > MAX_ENCRYPTED_CONTENT)
    issues.push({
      path: `${path}.encrypted_content`,
      message: `has ${content.length} characters, over the API's limit of ${MAX_ENCRYPTED_CONTENT} (10 MiB); the API would refuse every request that sends it`,
    });
}

/** The problems of one Responses API input item (empty when it is well-formed). */
export function responsesItemIssues(item: unknown, path: string): Issues {
  const issues: Issues = [];
  if (!isRecord(item)) return [{ path, message: 'expected an input item object' }];
  const type = itemType(item);
  if (type === undefined || !RESPONSES_ITEM_TYPES.has(type)) {
    issues.push({
      path: `${path}.type`,
      message: `expected a Responses API item type (${[...RESPONSES_ITEM_TYPES].map((t) => `"${t}"`).join(', ')})`,
    });
    return issues;
  }
  switch (type) {
    case 'message':
      message(issues, item, path);
      break;
    case 'function_call':
      nonEmpty(issues, item, 'call_id', path);
      nonEmpty(issues, item, 'name', path);
      text(issues, item, 'arguments', path);
      break;
    case 'custom_tool_call':
      nonEmpty(issues, item, 'call_id', path);
      nonEmpty(issues, item, 'name', path);
      text(issues, item, 'input', path);
      break;
    case 'function_call_output':
    case 'custom_tool_call_output':
      nonEmpty(issues, item, 'call_id', path);
      output(issues, item, path);
      break;
    case 'computer_call':
    case 'local_shell_call':
      nonEmpty(issues, item, 'call_id', path);
      object(issues, item, 'action', path);
      break;
    case 'computer_call_output':
      nonEmpty(issues, item, 'call_id', path);
      object(issues, item, 'output', path);
      break;
    case 'local_shell_call_output':
      if (typeof item.call_id !== 'string') nonEmpty(issues, item, 'id', path);
      text(issues, item, 'output', path);
      break;
    case 'reasoning':
      nonEmpty(issues, item, 'id', path);
      if (!Array.isArray(item.summary))
        issues.push({ path: `${path}.summary`, message: 'expected an array' });
      break;
    case 'mcp_call':
    case 'mcp_approval_request':
      nonEmpty(issues, item, 'id', path);
      nonEmpty(issues, item, 'server_label', path);
      nonEmpty(issues, item, 'name', path);
      text(issues, item, 'arguments', path);
      break;
    case 'mcp_list_tools':
      nonEmpty(issues, item, 'server_label', path);
      if (!Array.isArray(item.tools)) issues.push({ path: `${path}.tools`, message: 'expected an array' });
      break;
    case 'compaction':
      compaction(issues, item, path);
      break;
    case 'mcp_approval_response':
      nonEmpty(issues, item, 'approval_request_id', path);
      if (typeof item.approve !== 'boolean')
        issues.push({ path: `${path}.approve`, message: 'expected a boolean' });
      break;
    default:
      // item_reference and the hosted tool calls: their id names them.
      nonEmpty(issues, item, 'id', path);
  }
  return issues;
}
