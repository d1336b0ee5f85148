/**
 * The provider message formats contextkit stores and returns, kept as the providers document them
 * so a view can be sent without conversion. `MessageFormat` and `Message` list every format; the
 * format registry (src/formats/registry.ts) is checked at compile time against both, so a new
 * format's name and message type join them here and its folder joins the registry.
 */

import type { BedrockMessage } from './bedrock-types.js';
import type { GeminiMessage } from './gemini-types.js';
import type { ResponsesItem } from './responses-types.js';

/**
 * Which provider's wire format a conversation is in (a registered format's name): OpenAI Chat
 * Completions (`'openai'`), Anthropic Messages, the OpenAI Responses API's input items, Gemini's
 * `contents` (`{ role: 'user' | 'model', parts }`), Bedrock Converse messages.
 */
export type MessageFormat = 'openai' | 'anthropic' | 'openai-responses' | 'gemini' | 'bedrock';

// ---------------------------------------------------------------- OpenAI Chat Completions

/** A text part of OpenAI message content. */
export interface OpenAITextPart {
  type: 'text';
  text: string;
}

/** An image part: a URL or a `data:` URL, with the detail level that sets its cost. */
export interface OpenAIImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** An audio part of a user message (base64 data and its format). */
export interface OpenAIInputAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}

/** A file part (inline data or an uploaded file id). */
export interface OpenAIFilePart {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
}

/** A refusal part of an assistant message. */
export interface OpenAIRefusalPart {
  type: 'refusal';
  refusal: string;
}

/** Any part of OpenAI message content. */
export type OpenAIContentPart =
  | OpenAITextPart
  | OpenAIImagePart
  | OpenAIInputAudioPart
  | OpenAIFilePart
  | OpenAIRefusalPart;

/** One function call of an assistant message; `arguments` is a JSON string. */
export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A system (or developer) message. */
export interface OpenAISystemMessage {
  role: 'system' | 'developer';
  content: string | OpenAITextPart[];
  name?: string;
}

/** A user message: text or parts (images, audio, files). */
export interface OpenAIUserMessage {
  role: 'user';
  content: string | OpenAIContentPart[];
  name?: string;
}

/** An assistant message: text, tool calls, or both. */
export interface OpenAIAssistantMessage {
  role: 'assistant';
  content?: string | OpenAIContentPart[] | null;
  tool_calls?: OpenAIToolCall[];
  name?: string;
  refusal?: string | null;
}

/** A tool result, answering the call with `tool_call_id`. */
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | OpenAITextPart[];
  name?: string;
}

/** Any OpenAI Chat Completions message. */
export type OpenAIMessage =
  | OpenAISystemMessage
  | OpenAIUserMessage
  | OpenAIAssistantMessage
  | OpenAIToolMessage;

// ---------------------------------------------------------------- Anthropic Messages

/** A text block. Anthropic refuses empty or whitespace-only text. */
export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: unknown;
  citations?: unknown;
}

/** Where an image comes from: inline base64, a URL, or an uploaded file. */
export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

/** An image block; its cost comes from its dimensions. */
export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
  cache_control?: unknown;
}

/** A document block (PDF, plain text, or content blocks). */
export interface AnthropicDocumentBlock {
  type: 'document';
  source:
    | { type: 'base64'; media_type: string; data: string }
    | { type: 'text'; media_type: string; data: string }
    | { type: 'url'; url: string }
    | { type: 'content'; content: string | Array<AnthropicTextBlock | AnthropicImageBlock> }
    | { type: 'file'; file_id: string };
  title?: string;
  context?: string;
  citations?: unknown;
  cache_control?: unknown;
}

/** A tool call in an assistant message; `input` is the parsed arguments. */
export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: unknown;
}

/** A tool result in a user message, answering the `tool_use` with `tool_use_id`. */
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>;
  is_error?: boolean;
  cache_control?: unknown;
}

/** Extended thinking, signed; kept as it is (never cut). */
export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Encrypted thinking; kept as it is. */
export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/**
 * A call to one of Anthropic's server tools (web search, web fetch, code execution, tool search),
 * or to a tool of an MCP server through the MCP connector (`mcp_tool_use`, with `server_name`).
 * Its result follows in the same assistant message.
 */
export interface AnthropicInlineCallBlock {
  type: 'server_tool_use' | 'mcp_tool_use';
  id: string;
  name: string;
  input: unknown;
  server_name?: string;
  cache_control?: unknown;
}

/**
 * The result of a server tool (`web_search_tool_result`, `web_fetch_tool_result`,
 * `code_execution_tool_result`, `bash_code_execution_tool_result`,
 * `text_editor_code_execution_tool_result`, `tool_search_tool_result`) or of an MCP tool
 * (`mcp_tool_result`), answering the call with `tool_use_id` earlier in the same message.
 */
export interface AnthropicInlineResultBlock {
  type:
    | 'web_search_tool_result'
    | 'web_fetch_tool_result'
    | 'code_execution_tool_result'
    | 'bash_code_execution_tool_result'
    | 'text_editor_code_execution_tool_result'
    | 'tool_search_tool_result'
    | 'mcp_tool_result';
  tool_use_id: string;
  content: unknown;
  is_error?: boolean;
  cache_control?: unknown;
}

/** A file put in the code execution container (`file_id` of the Files API). */
export interface AnthropicContainerUploadBlock {
  type: 'container_upload';
  file_id: string;
  cache_control?: unknown;
}

/** Search results given to Claude (with a source and title), which its answers may cite. */
export interface AnthropicSearchResultBlock {
  type: 'search_result';
  source: string;
  title: string;
  content: AnthropicTextBlock[];
  citations?: unknown;
  cache_control?: unknown;
}

/**
 * Anthropic's server-side compaction summary (`compact_20260112`), at the start of an assistant
 * reply: the API drops every block before the last one on later requests. Kept verbatim.
 */
export interface AnthropicCompactionBlock {
  type: 'compaction';
  /** The summary (null where the server's compaction failed). */
  content: string | null;
  cache_control?: unknown;
}

/**
 * A block of a type this version does not know (one a future API adds): stored and sent
 * verbatim, counted by an estimate.
 */
export interface AnthropicUnknownBlock {
  type: string;
  [key: string]: unknown;
}

/** Any Anthropic content block. */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicInlineCallBlock
  | AnthropicInlineResultBlock
  | AnthropicContainerUploadBlock
  | AnthropicSearchResultBlock
  | AnthropicCompactionBlock;

/** Anthropic's top-level `system` prompt is given to contextkit as a `role: "system"` message. */
export interface AnthropicSystemMessage {
  role: 'system';
  content: string | AnthropicTextBlock[];
}

/** A user message: text, images, documents, tool results. */
export interface AnthropicUserMessage {
  role: 'user';
  content: string | AnthropicContentBlock[];
}

/** An assistant message: text, tool calls, thinking. */
export interface AnthropicAssistantMessage {
  role: 'assistant';
  content: string | AnthropicContentBlock[];
}

/** Any Anthropic message, with the system prompt as a `role: "system"` message. */
export type AnthropicMessage = AnthropicSystemMessage | AnthropicUserMessage | AnthropicAssistantMessage;

// ---------------------------------------------------------------- Either

/**
 * A message in any format (each registered format's message type: OpenAI Chat Completions,
 * Anthropic, Responses items, Gemini contents, Bedrock Converse messages). Stored messages are
 * deep-frozen copies of what was added.
 */
export type Message = OpenAIMessage | AnthropicMessage | ResponsesItem | GeminiMessage | BedrockMessage;

/** Roles contextkit accepts across both formats. */
export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/** Metadata kept beside each stored message (never sent to a provider). */
export interface MessageMetadata {
  /** ISO 8601, UTC, milliseconds; stamped by `addMessage` unless given. */
  timestamp: string;
  /** Never compacted (kept verbatim in every view). */
  critical?: boolean;
  /** Kept verbatim in every view, like `critical`; meant for facts the user pins. */
  pinned?: boolean;
  /** In views but never written to a store. */
  ephemeral?: boolean;
  /** Where the message came from (`user`, `hook`, `import`, …): free text for observability. */
  source?: string;
  /** Anything else the caller attaches. */
  [key: string]: unknown;
}

/** One stored message with its sequence number (0-based, dense, in insertion order). */
export interface HistoryEntry {
  readonly seq: number;
  readonly message: Readonly<Message>;
  readonly metadata: Readonly<MessageMetadata>;
  /** The id the message was added with (`addMessage(message, { id })`), when it had one. */
  readonly id?: string;
}

/** A tool definition as passed to a provider; counted in the budget. */
export type ToolDefinition =
  | {
      type: 'function';
      function: { name: string; description?: string; parameters?: unknown; strict?: boolean };
    }
  | { name: string; description?: string; input_schema?: unknown; [key: string]: unknown };
