/**
 * Checks one Bedrock Converse message against the shapes the Converse API reference documents
 * (Message, ContentBlock and the blocks it links; SystemContentBlock for the stored system
 * prompt). Every problem comes back with its path (`messages[3].content[1].toolUse.toolUseId`).
 * What a view repairs (blank text, a call left unanswered) is not a problem of the message.
 */
import type { MessageIssue } from '../../errors.js';
import { BEDROCK_BLOCK_MEMBERS, isRecord, memberOf } from './blocks.js';

type Rec = Record<string, unknown>;

/**
 * The Converse API reference's limits on one message (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html):
 * "up to 20 images", "up to five documents", "you can only include images and documents if the
 * role is user". ToolUseBlock.name (API_runtime_ToolUseBlock.html): 1 to 64 of `[a-zA-Z0-9_-]`.
 */
export const MAX_IMAGES = 20;
export const MAX_DOCUMENTS = 5;
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const IMAGE_FORMATS = ['png', 'jpeg', 'gif', 'webp'];
const DOCUMENT_FORMATS = ['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md'];
const VIDEO_FORMATS = ['mkv', 'mov', 'mp4', 'webm', 'flv', 'mpeg', 'mpg', 'wmv', 'three_gp'];
const RESULT_MEMBERS = ['text', 'json', 'image', 'document', 'video', 'searchResult'];
const SYSTEM_MEMBERS = ['text', 'guardContent', 'cachePoint'];

function mediaSource(
  source: unknown,
  path: string,
  issues: MessageIssue[],
  extra: readonly string[] = [],
): void {
  if (!isRecord(source)) {
    issues.push({ path, message: 'expected an object with one of bytes, s3Location' });
    return;
  }
  const keys = Object.keys(source);
  const allowed = ['bytes', 's3Location', ...extra];
  if (keys.length !== 1 || !allowed.includes(keys[0]!)) {
    issues.push({ path, message: `expected exactly one of ${allowed.join(', ')}` });
    return;
  }
  const key = keys[0]!;
  const value = source[key];
  if (key === 'bytes' && typeof value !== 'string')
    issues.push({ path: `${path}.bytes`, message: 'expected a base64 string' });
  if (key === 's3Location' && !(isRecord(value) && typeof value.uri === 'string'))
    issues.push({ path: `${path}.s3Location.uri`, message: 'expected a string' });
  if (key === 'text' && typeof value !== 'string')
    issues.push({ path: `${path}.text`, message: 'expected a string' });
  if (key === 'content' && !Array.isArray(value))
    issues.push({ path: `${path}.content`, message: 'expected an array of text blocks' });
}

function media(member: string, value: unknown, path: string, issues: MessageIssue[]): void {
  if (!isRecord(value)) {
    issues.push({ path, message: 'expected an object' });
    return;
  }
  const formats = member === 'image' ? IMAGE_FORMATS : member === 'video' ? VIDEO_FORMATS : DOCUMENT_FORMATS;
  if ((member !== 'document' || value.format !== undefined) && !formats.includes(String(value.format)))
    issues.push({ path: `${path}.format`, message: `expected one of ${formats.join(', ')}` });
  if (member === 'document') {
    if (typeof value.name !== 'string' || value.name.length === 0 || value.name.length > 200)
      issues.push({ path: `${path}.name`, message: 'expected a name of 1 to 200 characters' });
    mediaSource(value.source, `${path}.source`, issues, ['text', 'content']);
  } else mediaSource(value.source, `${path}.source`, issues);
}

function toolResult(value: unknown, path: string, issues: MessageIssue[]): void {
  if (!isRecord(value)) {
    issues.push({ path, message: 'expected an object' });
    return;
  }
  if (typeof value.toolUseId !== 'string' || value.toolUseId.length === 0)
    issues.push({ path: `${path}.toolUseId`, message: 'expected a non-empty string' });
  if (value.status !== undefined && value.status !== 'success' && value.status !== 'error')
    issues.push({ path: `${path}.status`, message: 'expected "success" or "error"' });
  if (!Array.isArray(value.content)) {
    issues.push({ path: `${path}.content`, message: 'expected an array of result blocks' });
    return;
  }
  value.content.forEach((c: unknown, k: number) => {
    const at = `${path}.content[${k}]`;
    const keys = isRecord(c) ? Object.keys(c) : [];
    if (keys.length !== 1 || !RESULT_MEMBERS.includes(keys[0]!)) {
      issues.push({ path: at, message: `expected exactly one of ${RESULT_MEMBERS.join(', ')}` });
      return;
    }
    const key = keys[0]!;
    const v = (c as Rec)[key];
    if (key === 'text' && typeof v !== 'string')
      issues.push({ path: `${at}.text`, message: 'expected a string' });
    if (key === 'image' || key === 'document' || key === 'video') media(key, v, `${at}.${key}`, issues);
  });
}

function block(raw: unknown, role: string, path: string, issues: MessageIssue[]): void {
  if (!isRecord(raw)) {
    issues.push({ path, message: 'expected a content block object' });
    return;
  }
  const keys = Object.keys(raw);
  const unknown = keys.filter((k) => !BEDROCK_BLOCK_MEMBERS.includes(k));
  for (const k of unknown) issues.push({ path: `${path}.${k}`, message: 'not a member of ContentBlock' });
  const member = memberOf(raw);
  if (member === undefined) {
    if (unknown.length === 0)
      issues.push({ path, message: 'a content block sets exactly one member (text, image, toolUse, …)' });
    return;
  }
  const value = raw[member];
  const at = `${path}.${member}`;
  switch (member) {
    case 'text':
      if (typeof value !== 'string') issues.push({ path: at, message: 'expected a string' });
      break;
    case 'image':
    case 'document':
    case 'video':
      if (member !== 'video' && role !== 'user')
        issues.push({ path: at, message: `Converse takes an ${member} only in a user message` });
      media(member, value, at, issues);
      break;
    case 'toolUse':
      if (role !== 'assistant') issues.push({ path: at, message: 'toolUse belongs in an assistant message' });
      if (!isRecord(value)) {
        issues.push({ path: at, message: 'expected an object' });
        break;
      }
      if (typeof value.toolUseId !== 'string' || value.toolUseId.length === 0)
        issues.push({ path: `${at}.toolUseId`, message: 'expected a non-empty string' });
      if (typeof value.name !== 'string' || !TOOL_NAME.test(value.name))
        issues.push({
          path: `${at}.name`,
          message: 'expected 1 to 64 characters of [a-zA-Z0-9_-] (Converse refuses other tool names)',
        });
      if (value.input === undefined) issues.push({ path: `${at}.input`, message: 'expected a JSON value' });
      break;
    case 'toolResult':
      if (role !== 'user') issues.push({ path: at, message: 'toolResult belongs in a user message' });
      toolResult(value, at, issues);
      break;
    case 'reasoningContent': {
      if (role !== 'assistant')
        issues.push({ path: at, message: 'reasoningContent belongs in an assistant message' });
      const r = isRecord(value) ? value : {};
      const text = isRecord(r.reasoningText) ? r.reasoningText.text : undefined;
      if (typeof text !== 'string' && typeof r.redactedContent !== 'string')
        issues.push({ path: at, message: 'expected reasoningText {text, signature?} or redactedContent' });
      break;
    }
    case 'cachePoint':
      if (!isRecord(value) || value.type !== 'default')
        issues.push({ path: `${at}.type`, message: 'expected "default"' });
      break;
    case 'guardContent':
      if (!isRecord(value) || (!isRecord(value.text) && !isRecord(value.image)))
        issues.push({ path: at, message: 'expected text {text} or image {format, source}' });
      break;
    default:
      break;
  }
}

/**
 * Problems of one Bedrock message, at `path` (`messages[3]`): empty when the message is a valid
 * Converse message (or the stored system prompt).
 */
export function bedrockMessageIssues(message: unknown, path: string): MessageIssue[] {
  const issues: MessageIssue[] = [];
  if (!isRecord(message)) return [{ path, message: 'expected a message object' }];
  const role = message.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant') {
    issues.push({ path: `${path}.role`, message: 'expected "system", "user" or "assistant"' });
    return issues;
  }
  for (const key of Object.keys(message))
    if (key !== 'role' && key !== 'content')
      issues.push({ path: `${path}.${key}`, message: 'not a member of a Converse message (role, content)' });
  if (!Array.isArray(message.content)) {
    issues.push({ path: `${path}.content`, message: 'expected an array of content blocks' });
    return issues;
  }
  if (message.content.length === 0)
    issues.push({ path: `${path}.content`, message: 'expected at least one block' });
  message.content.forEach((b: unknown, k: number) => {
    const at = `${path}.content[${k}]`;
    if (role === 'system') {
      const keys = isRecord(b) ? Object.keys(b) : [];
      if (keys.length !== 1 || !SYSTEM_MEMBERS.includes(keys[0]!))
        issues.push({ path: at, message: `a system block sets exactly one of ${SYSTEM_MEMBERS.join(', ')}` });
      else if (keys[0] === 'text' && typeof (b as Rec).text !== 'string')
        issues.push({ path: `${at}.text`, message: 'expected a string' });
      return;
    }
    block(b, role, at, issues);
  });
  if (role !== 'system') {
    const count = (member: string) =>
      (message.content as unknown[]).filter((b: unknown) => isRecord(b) && memberOf(b) === member).length;
    if (count('document') > MAX_DOCUMENTS)
      issues.push({
        path: `${path}.content`,
        message: `Converse takes at most ${MAX_DOCUMENTS} documents in a message`,
      });
    if (count('image') > MAX_IMAGES)
      issues.push({
        path: `${path}.content`,
        message: `Converse takes at most ${MAX_IMAGES} images in a message`,
      });
  }
  return issues;
}
