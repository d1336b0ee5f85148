/**
 * The Anthropic content blocks beyond the basic ones: server tools (web search, web fetch, code
 * execution, tool search), the MCP connector, container uploads and search results, as the
 * Messages API reference documents them (platform.claude.com/docs/en/api/messages, "content
 * blocks"; agents-and-tools/tool-use/*-tool). Server-tool pairs live inside one assistant message:
 * Claude calls the tool (`server_tool_use`) and Anthropic puts its result block right there.
 *
 * A block type none of these lists knows (one a future API adds) is stored and sent verbatim.
 */

/** Result blocks of Anthropic's server tools, each answering a `server_tool_use` by `tool_use_id`. */
export const SERVER_TOOL_RESULT_TYPES: ReadonlySet<string> = new Set([
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
]);

/**
 * Anthropic's server-side compaction block (`compact_20260112`, beta `compact-2026-01-12`): the
 * summary the API wrote at the start of an assistant reply; on later requests the API drops every
 * block before the last one (platform.claude.com/docs/en/build-with-claude/compaction). Kept and
 * sent verbatim.
 */
export const COMPACTION_BLOCK = 'compaction';

/** Blocks that only an assistant message carries (server tools, the MCP connector, compaction). */
export const ASSISTANT_ONLY_BLOCKS: readonly string[] = [
  'server_tool_use',
  ...SERVER_TOOL_RESULT_TYPES,
  'mcp_tool_use',
  'mcp_tool_result',
  COMPACTION_BLOCK,
];

/** Anthropic reasoning blocks, signed or encrypted: no other provider can take them. */
export const THINKING_BLOCKS: ReadonlySet<string> = new Set(['thinking', 'redacted_thinking']);

/** Every block type the Messages API documents, basic ones included. */
export const KNOWN_ANTHROPIC_BLOCKS: ReadonlySet<string> = new Set([
  'text',
  'image',
  'document',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'search_result',
  'container_upload',
  ...ASSISTANT_ONLY_BLOCKS,
]);

/** The content part types of OpenAI Chat Completions (none of them an Anthropic block). */
export const OPENAI_PART_TYPES: ReadonlySet<string> = new Set([
  'text',
  'image_url',
  'input_audio',
  'file',
  'refusal',
]);

/**
 * A block type no format knows: one a future Anthropic API adds. In an Anthropic conversation it
 * is stored and sent verbatim, never refused (only its `type` is checked), and counted by an
 * estimate.
 */
export function isFutureBlockType(type: unknown): boolean {
  return typeof type === 'string' && !KNOWN_ANTHROPIC_BLOCKS.has(type) && !OPENAI_PART_TYPES.has(type);
}

/** The future block types (see `isFutureBlockType`) in a message's content, each once. */
export function futureBlockTypes(message: { content?: unknown }): string[] {
  const content = message.content;
  if (!Array.isArray(content)) return [];
  const types = new Set<string>();
  for (const block of content) {
    if (isRecord(block) && isFutureBlockType(block.type)) types.add(block.type as string);
  }
  return [...types];
}

/** Whether a block type is a call made inside an assistant message (server tool or MCP). */
export function isInlineCall(type: unknown): boolean {
  return type === 'server_tool_use' || type === 'mcp_tool_use';
}

/** Whether a block type is the result of an inline call (server tool or MCP). */
export function isInlineResult(type: unknown): boolean {
  return type === 'mcp_tool_result' || (typeof type === 'string' && SERVER_TOOL_RESULT_TYPES.has(type));
}

/** The call type an inline result answers. */
export function callTypeFor(resultType: string): string {
  return resultType === 'mcp_tool_result' ? 'mcp_tool_use' : 'server_tool_use';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether clearing may shorten an inline result. Only results whose text we can replace and still
 * send a block of the documented shape: code execution output (stdout), a text editor view, a
 * fetched page's text, an MCP result. Web search results (encrypted), encrypted code output, tool
 * search references and error results are kept as they came.
 */
export function isShortenableResult(block: Record<string, unknown>): boolean {
  if (block.type === 'mcp_tool_result') return true;
  const content = block.content;
  if (!isRecord(content)) return false;
  switch (block.type) {
    case 'code_execution_tool_result':
      return content.type === 'code_execution_result';
    case 'bash_code_execution_tool_result':
      return content.type === 'bash_code_execution_result';
    case 'text_editor_code_execution_tool_result':
      return content.type === 'text_editor_code_execution_view_result';
    case 'web_fetch_tool_result':
      return content.type === 'web_fetch_result' && isRecord(content.content);
    default:
      return false;
  }
}

/**
 * The block with its output replaced by `text` (a placeholder saying what was cleared), in the
 * shape the API documents for that result type. Every other field (ids, return codes, file
 * references, `cache_control`) is carried through.
 */
export function shortenedResult(block: Record<string, unknown>, text: string): Record<string, unknown> {
  if (block.type === 'mcp_tool_result') return { ...block, content: text };
  const content = block.content as Record<string, unknown>;
  switch (content.type) {
    case 'code_execution_result':
    case 'bash_code_execution_result':
      return { ...block, content: { ...content, stdout: text, stderr: '' } };
    case 'text_editor_code_execution_view_result':
      return { ...block, content: { ...content, content: text } };
    default: {
      // web_fetch_result: the fetched document becomes a short plain-text document.
      const document = content.content as Record<string, unknown>;
      const shortened = { ...document, source: { type: 'text', media_type: 'text/plain', data: text } };
      return { ...block, content: { ...content, content: shortened } };
    }
  }
}

/** The text an inline result carries, for sizing what clearing it saves. */
export function inlineResultText(block: Record<string, unknown>): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (isRecord(b) && typeof b.text === 'string' ? b.text : ''))
      .filter((t) => t.length > 0)
      .join('\n');
  }
  if (!isRecord(content)) return '';
  const parts: string[] = [];
  for (const key of ['stdout', 'stderr', 'content'] as const) {
    if (typeof content[key] === 'string') parts.push(content[key] as string);
  }
  const document = content.content;
  if (isRecord(document) && isRecord(document.source) && typeof document.source.data === 'string') {
    parts.push(document.source.data);
  }
  return parts.join('\n');
}

/** Whether a stored message carries a provider compaction block. */
export function hasCompactionBlock(message: { content?: unknown }): boolean {
  const content = message.content;
  if (!Array.isArray(content)) return false;
  for (const block of content) {
    if (
      typeof block === 'object' &&
      block !== null &&
      (block as { type?: unknown }).type === COMPACTION_BLOCK
    )
      return true;
  }
  return false;
}

/** The line a provider's compaction summary opens with when another provider is sent it. */
export const COMPACTION_SUMMARY_LABEL =
  '[summary of the earlier conversation, written by the previous provider when it compacted the context]';

/**
 * A message holding `compaction` blocks, for another provider: each block's summary (its
 * `content`, which the compaction page shows as the text of the summary) as a text block in its
 * place, labelled; a block whose `content` is empty goes. Null when nothing is left; undefined when
 * the message holds no compaction block.
 */
export function readableCompactionBlock<M extends { content?: unknown }>(message: M): M | null | undefined {
  if (!hasCompactionBlock(message)) return undefined;
  const blocks: unknown[] = [];
  for (const block of message.content as unknown[]) {
    const b = block as { type?: unknown; content?: unknown };
    if (b?.type !== COMPACTION_BLOCK) {
      blocks.push(block);
      continue;
    }
    if (typeof b.content === 'string' && b.content.trim() !== '')
      blocks.push({ type: 'text', text: `${COMPACTION_SUMMARY_LABEL}\n${b.content}` });
  }
  return blocks.length === 0 ? null : { ...message, content: blocks };
}
