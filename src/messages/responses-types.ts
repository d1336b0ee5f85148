/**
 * The OpenAI Responses API's input items, as types
 * (platform.openai.com/docs/api-reference/responses/create, "input"): a conversation in the
 * `'openai-responses'` format is a list of these, stored as they came. They sit below the formats,
 * beside the other formats' message types, because `Message` is their union; what the items mean
 * and how they pair is src/formats/openai-responses/items.ts.
 */

/** A Responses message item: `type: "message"` may be left out in input (EasyInputMessage). */
export interface ResponsesMessageItem {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ResponsesContentPart[];
  id?: string;
  status?: string;
}

/** A part of a Responses message. */
export type ResponsesContentPart =
  | { type: 'input_text'; text: string }
  | { type: 'output_text'; text: string; annotations?: unknown[] }
  | { type: 'refusal'; refusal: string }
  | { type: 'input_image'; image_url?: string; file_id?: string; detail?: string }
  | { type: 'input_file'; file_id?: string; file_data?: string; file_url?: string; filename?: string }
  | { type: 'input_audio'; input_audio: { data: string; format: string } };

/**
 * Any other Responses item (a call, an output, reasoning, a hosted tool call, an MCP item, an
 * item reference). These have no `role`; the fields are the API's and kept as they came.
 */
export interface ResponsesOtherItem {
  type: string;
  role?: undefined;
  content?: undefined;
  id?: string;
  call_id?: string;
  [key: string]: unknown;
}

/** Any Responses API input item. */
export type ResponsesItem = ResponsesMessageItem | ResponsesOtherItem;
