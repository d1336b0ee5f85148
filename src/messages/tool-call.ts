/**
 * Reading a call of one of contextkit's own tools (`recall`, `memory`, `compact`) from whichever
 * provider shape it came in. The result goes back in the same shape: src/wire/tool-result.ts.
 */

import type { MessageFormat } from './types.js';

/** A tool call read from a provider's shape: its id and its arguments, or why they cannot be read. */
export interface ToolCallInput {
  /** The shape it came in, which the result is given in. */
  format: MessageFormat;
  id: string;
  /** The parsed arguments, or what is wrong with them (told to the model as the result). */
  input: unknown | { error: string };
  /** `true` when `input` is the `{ error }` above rather than the model's arguments. */
  unreadable: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseArguments(format: MessageFormat, id: string, raw: unknown): ToolCallInput {
  if (typeof raw !== 'string') return { format, id, input: raw, unreadable: false };
  try {
    return { format, id, input: raw.trim() === '' ? {} : JSON.parse(raw), unreadable: false };
  } catch {
    return { format, id, input: { error: 'the arguments are not valid JSON' }, unreadable: true };
  }
}

/**
 * Reads a call of the tool `name`: an OpenAI Chat `tool_calls[i]` (`{ id, type: 'function',
 * function: { name, arguments } }`), a Responses `function_call` item (`{ type: 'function_call',
 * call_id, name, arguments }`), an Anthropic `tool_use` block (`{ type: 'tool_use', id, name,
 * input }`) or a Gemini `functionCall` part (`{ functionCall: { name, args, id? } }`).
 * `null` when it is not a call of `name` (or not a tool call at all).
 */
export function readToolCall(call: unknown, name: string): ToolCallInput | null {
  // A Gemini functionCall part (or its functionCall); its id, when the API gave one, else its name.
  const gemini = isRecord(call) && isRecord(call.functionCall) ? call.functionCall : undefined;
  if (gemini) {
    if (gemini.name !== name) return null;
    const id = typeof gemini.id === 'string' ? gemini.id : name;
    return { format: 'gemini', id, input: gemini.args, unreadable: false };
  }
  if (!isRecord(call)) return null;
  // A Converse toolUse block (or its toolUse): keyed by its member, no type.
  const use = isRecord(call.toolUse) ? call.toolUse : typeof call.toolUseId === 'string' ? call : undefined;
  if (use) {
    if (use.name !== name || typeof use.toolUseId !== 'string') return null;
    return { format: 'bedrock', id: use.toolUseId, input: use.input, unreadable: false };
  }
  if (call.type === 'function_call') {
    if (call.name !== name || typeof call.call_id !== 'string') return null;
    return parseArguments('openai-responses', call.call_id, call.arguments);
  }
  if (typeof call.id !== 'string') return null;
  if (call.type === 'tool_use') {
    if (call.name !== name) return null;
    return { format: 'anthropic', id: call.id, input: call.input, unreadable: false };
  }
  const fn = call.function;
  if (!isRecord(fn) || fn.name !== name) return null;
  return parseArguments('openai', call.id, fn.arguments);
}
