/**
 * contextkit's messages as Gemini `generateContent` input, so Gemini's `countTokens` endpoint can
 * count a view exactly. Shapes as the Gemini API reference documents them (ai.google.dev/api,
 * `Content`, `Part`, `FunctionDeclaration`; confirmed through the docs search on the
 * `models.countTokens` and `FunctionDeclaration` pages):
 *
 * - a `Content` is `{ role: "user" | "model", parts: Part[] }`; a `Part` holds exactly one of
 *   `text`, `inlineData { mimeType, data }` (base64), `fileData { mimeType, fileUri }`,
 *   `functionCall { name, args }` or `functionResponse { name, response }`, where `args` and
 *   `response` are JSON objects (protobuf `Struct`s);
 * - the system prompt goes apart, as `systemInstruction: { parts: [{ text }] }`;
 * - tools are `[{ functionDeclarations: [{ name, description, parametersJsonSchema }] }]`;
 *   `parametersJsonSchema` takes plain JSON Schema (the older `parameters` field takes only
 *   Gemini's OpenAPI subset and refuses keys such as `additionalProperties`).
 *
 * A view already in the `'gemini'` format is sent as it is (its system messages as the
 * `systemInstruction`). Any other format is read by first converting to Anthropic's (see `convertMessages`), which
 * already pairs OpenAI tool results with their calls and turns data URLs into base64 sources;
 * from there:
 *
 * - `tool_use` becomes `functionCall` (a non-object input is wrapped as `{ value }`), and
 *   `tool_result` becomes `functionResponse` named after the call it answers, with
 *   `{ content: text }` (or `{ error: text }` when `is_error`); images and documents inside a
 *   result follow it as parts of the same user turn;
 * - images and base64 documents become `inlineData`, URL sources `fileData` (media type guessed
 *   from the extension), text documents text; Anthropic file ids, which Gemini cannot read,
 *   become a bracketed note;
 * - thinking blocks are left out (Gemini keeps its own thought signatures), as are empty texts
 *   (the API refuses them); consecutive turns of one role are merged into one `Content`.
 */

import type { GeminiMessage } from '../../messages/gemini-types.js';
import type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  ToolDefinition,
} from '../../messages/types.js';
import { toAnthropicRequest } from '../anthropic/request.js';
import type { ViewReader } from '../wire-format.js';
import { toGeminiRequest } from './request.js';

/** One Gemini `Part`: exactly one of its fields is set. */
export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: Record<string, unknown> } }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

/** One Gemini conversation turn. */
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** A Gemini function declaration, its parameters in plain JSON Schema. */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: unknown;
}

/** The `tools` entry that carries function declarations. */
export interface GeminiTool {
  functionDeclarations: GeminiFunctionDeclaration[];
}

/** The parts of a `GenerateContentRequest` that a view determines. */
export interface GeminiRequestParts {
  /** Omitted when the view has no system message. */
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const EXTENSION_TYPES: ReadonlyArray<[RegExp, string]> = [
  [/\.png$/i, 'image/png'],
  [/\.jpe?g$/i, 'image/jpeg'],
  [/\.gif$/i, 'image/gif'],
  [/\.webp$/i, 'image/webp'],
  [/\.heic$/i, 'image/heic'],
  [/\.pdf$/i, 'application/pdf'],
  [/\.txt$/i, 'text/plain'],
];

/** Media type of a URL from its path's extension, else `fallback`. */
function mediaTypeOfUrl(url: string, fallback: string): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // Not absolute: read the extension off the string as given.
  }
  for (const [pattern, type] of EXTENSION_TYPES) if (pattern.test(path)) return type;
  return fallback;
}

function textParts(text: string): GeminiPart[] {
  return text.trim() === '' ? [] : [{ text }];
}

function imageParts(block: AnthropicImageBlock): GeminiPart[] {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return [{ inlineData: { mimeType: source.media_type, data: source.data } }];
    case 'url':
      return [{ fileData: { mimeType: mediaTypeOfUrl(source.url, 'image/jpeg'), fileUri: source.url } }];
    case 'file':
      return [{ text: `[image file ${source.file_id}: an Anthropic file is not available to Gemini]` }];
  }
}

function documentParts(block: AnthropicDocumentBlock): GeminiPart[] {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return [{ inlineData: { mimeType: source.media_type, data: source.data } }];
    case 'text':
      return textParts(source.data);
    case 'url':
      return [{ fileData: { mimeType: mediaTypeOfUrl(source.url, 'application/pdf'), fileUri: source.url } }];
    case 'content':
      if (typeof source.content === 'string') return textParts(source.content);
      return source.content.flatMap((inner) =>
        inner.type === 'text' ? textParts(inner.text) : imageParts(inner),
      );
    case 'file':
      return [{ text: `[document file ${source.file_id}: an Anthropic file is not available to Gemini]` }];
  }
}

/** A tool result as a `functionResponse` plus the media parts that follow it. */
function resultParts(block: AnthropicToolResultBlock, name: string): GeminiPart[] {
  const texts: string[] = [];
  const media: GeminiPart[] = [];
  const content = block.content;
  if (typeof content === 'string') texts.push(content);
  else if (content !== undefined) {
    for (const inner of content) {
      if (inner.type === 'text') texts.push(inner.text);
      else if (inner.type === 'image') media.push(...imageParts(inner));
      else media.push(...documentParts(inner));
    }
  }
  const text = texts.join('\n');
  const response = block.is_error === true ? { error: text } : { content: text };
  return [{ functionResponse: { name, response } }, ...media];
}

function blockParts(block: AnthropicContentBlock, callNames: ReadonlyMap<string, string>): GeminiPart[] {
  switch (block.type) {
    case 'text':
      return textParts(block.text);
    case 'image':
      return imageParts(block);
    case 'document':
      return documentParts(block);
    case 'tool_use':
      return [
        {
          functionCall: {
            name: block.name,
            args: isRecord(block.input) ? block.input : { value: block.input },
          },
        },
      ];
    case 'tool_result':
      return resultParts(block, callNames.get(block.tool_use_id) ?? block.tool_use_id);
    case 'thinking':
    case 'redacted_thinking':
      return [];
    case 'search_result':
      return textParts([block.title, ...block.content.map((b) => b.text)].join('\n'));
    default:
      // Server tools, MCP and container blocks have no Gemini part: their text stands in, so
      // the count still covers them.
      return textParts(JSON.stringify(block));
  }
}

function systemTexts(system: string | readonly AnthropicTextBlock[] | undefined): string[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system.trim() === '' ? [] : [system];
  return system.map((b) => b.text).filter((t) => t.trim() !== '');
}

/**
 * The `systemInstruction` and `contents` of a Gemini request for a view in any format, read
 * through `view` (see the module note for the mapping; `viewReaderOf` in
 * src/measure/count-endpoints.ts reads a list of messages so). `system`, when given, comes before the
 * view's own system messages.
 */
export function geminiContentsOf(
  view: ViewReader,
  system?: string | readonly AnthropicTextBlock[],
): GeminiRequestParts {
  if (view.format === 'gemini') {
    // Already Gemini contents: sent as they are (thought signatures included).
    const request = toGeminiRequest(view.as('gemini') as readonly GeminiMessage[]);
    const texts = [
      ...systemTexts(system).map((text) => ({ text })),
      ...(request.systemInstruction?.parts ?? []),
    ];
    const contents = request.contents as unknown as GeminiContent[];
    return texts.length > 0 ? { systemInstruction: { parts: texts }, contents } : { contents };
  }
  const split = toAnthropicRequest(view.as('anthropic'));
  const callNames = new Map<string, string>();
  const contents: GeminiContent[] = [];
  for (const message of split.messages) {
    const role = message.role === 'assistant' ? 'model' : 'user';
    let parts: GeminiPart[];
    if (typeof message.content === 'string') parts = textParts(message.content);
    else {
      for (const block of message.content) if (block.type === 'tool_use') callNames.set(block.id, block.name);
      parts = message.content.flatMap((block) => blockParts(block, callNames));
    }
    if (parts.length === 0) continue;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  const texts = [...systemTexts(system), ...systemTexts(split.system)];
  if (texts.length === 0) return { contents };
  return { systemInstruction: { parts: texts.map((text) => ({ text })) }, contents };
}

/**
 * Tool definitions in either provider's shape as one Gemini `tools` entry of function
 * declarations (empty list for no tools). A definition without a schema (an Anthropic server
 * tool such as `web_search`) is declared by name and description only.
 */
export function toGeminiTools(tools: readonly ToolDefinition[] | undefined): GeminiTool[] {
  if (tools === undefined || tools.length === 0) return [];
  const declarations = tools.map((tool): GeminiFunctionDeclaration => {
    const fn = 'function' in tool && isRecord(tool.function) ? tool.function : undefined;
    const source: Record<string, unknown> = fn ?? (tool as Record<string, unknown>);
    const name = typeof source.name === 'string' ? source.name : 'unnamed';
    const declaration: GeminiFunctionDeclaration = { name };
    if (typeof source.description === 'string') declaration.description = source.description;
    const schema = fn ? fn.parameters : source.input_schema;
    if (schema !== undefined) declaration.parametersJsonSchema = schema;
    return declaration;
  });
  return [{ functionDeclarations: declarations }];
}
