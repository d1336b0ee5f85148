/**
 * AWS Bedrock Converse messages, kept as the Converse API reference documents them
 * (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html and the types it
 * links, read 2026-11-26), so a view can be sent as it is. A content block is a union: exactly one
 * member is set, and the member's name says what the block is (there is no `type` field).
 * The system prompt, which Converse takes apart in `system`, is stored as a
 * `{ role: 'system', content: [{ text }] }` message; `toBedrockRequest` lifts it out.
 */

/** Where media comes from: inline bytes (base64 in JSON) or an S3 object. */
export type BedrockMediaSource = { bytes: string } | { s3Location: { uri: string; bucketOwner?: string } };

/** An image: png, jpeg, gif or webp. */
export interface BedrockImage {
  format: 'png' | 'jpeg' | 'gif' | 'webp';
  source: BedrockMediaSource;
}

/** A document (`name` is required; `format` is its extension). */
export interface BedrockDocument {
  name: string;
  format?: 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';
  source: BedrockMediaSource | { text: string } | { content: Array<{ text: string }> };
  context?: string;
  citations?: { enabled: boolean };
}

/** A video. */
export interface BedrockVideo {
  format: 'mkv' | 'mov' | 'mp4' | 'webm' | 'flv' | 'mpeg' | 'mpg' | 'wmv' | 'three_gp';
  source: BedrockMediaSource;
}

/** A tool call of the assistant; `input` is the parsed arguments. */
export interface BedrockToolUse {
  toolUseId: string;
  name: string;
  input: unknown;
  type?: 'server_tool_use';
}

/** One block of a tool result. */
export type BedrockToolResultContent =
  | { text: string }
  | { json: unknown }
  | { image: BedrockImage }
  | { document: BedrockDocument }
  | { video: BedrockVideo }
  | { searchResult: unknown };

/** A tool result, in the user message after the call. */
export interface BedrockToolResult {
  toolUseId: string;
  content: BedrockToolResultContent[];
  status?: 'success' | 'error';
  type?: string;
}

/** The model's reasoning: signed text, or encrypted content. Never edited. */
export type BedrockReasoning =
  | { reasoningText: { text: string; signature?: string } }
  | { redactedContent: string };

/** A prompt-cache checkpoint: the prefix up to here is cached. */
export interface BedrockCachePoint {
  type: 'default';
  ttl?: '5m' | '1h';
}

/** Content a guardrail assesses. */
export type BedrockGuardContent =
  | { text: { text: string; qualifiers?: Array<'grounding_source' | 'query' | 'guard_content'> } }
  | { image: { format: 'png' | 'jpeg'; source: { bytes: string } } };

/**
 * Converse blocks have no `type`: declared absent, so code reading `block.type` across every
 * format's blocks still type-checks (it reads undefined here).
 */
interface Untyped {
  type?: undefined;
}

/** A content block: exactly one member set. */
export type BedrockContentBlock = Untyped &
  (
    | { text: string }
    | { image: BedrockImage }
    | { document: BedrockDocument }
    | { video: BedrockVideo }
    | { audio: unknown }
    | { toolUse: BedrockToolUse }
    | { toolResult: BedrockToolResult }
    | { reasoningContent: BedrockReasoning }
    | { cachePoint: BedrockCachePoint }
    | { guardContent: BedrockGuardContent }
    | { citationsContent: unknown }
    | { searchResult: unknown }
  );

/** A system block as Converse takes it in `system`. */
export type BedrockSystemBlock = Untyped &
  ({ text: string } | { guardContent: BedrockGuardContent } | { cachePoint: BedrockCachePoint });

/** The system prompt as stored: lifted into `system` by `toBedrockRequest`. */
export interface BedrockSystemMessage {
  role: 'system';
  content: BedrockSystemBlock[];
}

/** A user or assistant message. */
export interface BedrockConversationMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

/** Any Bedrock Converse message, with the system prompt as a `role: "system"` message. */
export type BedrockMessage = BedrockSystemMessage | BedrockConversationMessage;
