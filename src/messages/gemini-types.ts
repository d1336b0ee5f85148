/**
 * Gemini's `contents` as types (ai.google.dev/api/generate-content, `Content` and `Part`): a
 * conversation in the `'gemini'` format is a list of `{ role: 'user' | 'model', parts }`, plus the
 * system instruction as a `{ role: 'system', parts: [{ text }] }` message. They sit below the
 * formats, beside the other formats' message types, because `Message` is their union; what the
 * parts mean and how calls pair is src/formats/gemini/parts.ts.
 */

/** Inline media: base64 `data` of the given IANA type. */
export interface GeminiBlob {
  mimeType: string;
  data: string;
}

/** One Gemini `Part` (exactly one datum set), with its thought flag and signature. */
export interface GeminiContentPart {
  text?: string;
  inlineData?: GeminiBlob;
  fileData?: { mimeType?: string; fileUri: string; displayName?: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: {
    name: string;
    response: Record<string, unknown>;
    id?: string;
    parts?: unknown[];
    willContinue?: boolean;
    scheduling?: string;
  };
  executableCode?: { language: string; code: string };
  codeExecutionResult?: { outcome: string; output?: string };
  /** A thought summary (only with `text`). */
  thought?: boolean;
  /** Opaque signature of the model's reasoning; sent back unchanged, with its part. */
  thoughtSignature?: string;
  videoMetadata?: unknown;
  [key: string]: unknown;
}

/** A user or model turn. */
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiContentPart[];
  content?: undefined;
}

/** The system instruction, given as a message; views send it as `systemInstruction`. */
export interface GeminiSystemMessage {
  role: 'system';
  parts: Array<{ text: string }>;
  content?: undefined;
}

/** Any message of the `'gemini'` format. */
export type GeminiMessage = GeminiContent | GeminiSystemMessage;
