/**
 * The agent benchmark's messages on the wire: what the agent and its tools add, written in the
 * conversation's format, and a view read back as the turns a model would see. Written here rather
 * than with the library's converters, so that what a contender sends is read as sent.
 */

import type { Message, MessageFormat } from '../../src/messages/types.js';
import { convertMessages } from '../../src/wire/convert.js';

/** One tool call as the agent makes it. */
export interface Call {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** One message of a view as a model reads it: its role, its text, the calls and results it holds. */
export interface Turn {
  role: string;
  /** Text the message shows (user or assistant prose, system prompts, summaries, facts). */
  texts: string[];
  calls: Call[];
  results: { id: string; text: string }[];
}

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every string inside a value, in order (for shapes this reader does not name). */
export function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (isObject(value)) for (const v of Object.values(value)) stringsIn(v, out);
  return out;
}

function parseArgs(raw: unknown): Record<string, unknown> {
  if (isObject(raw)) return raw;
  if (typeof raw !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return stringsIn(content).join('\n');
}

/**
 * A view read as turns. OpenAI Chat (`tool_calls`, `tool` messages) and Anthropic (`tool_use`,
 * `tool_result` blocks) are read by their documented shapes; a block or part of another kind is
 * read as its text, so a summary or facts block in any shape is still seen.
 */
export function readView(view: readonly unknown[]): Turn[] {
  const turns: Turn[] = [];
  for (const raw of view) {
    if (!isObject(raw)) continue;
    const role = typeof raw.role === 'string' ? raw.role : 'unknown';
    const turn: Turn = { role, texts: [], calls: [], results: [] };
    if (role === 'tool') {
      turn.results.push({ id: String(raw.tool_call_id ?? ''), text: contentText(raw.content) });
    } else if (typeof raw.content === 'string') {
      turn.texts.push(raw.content);
    } else if (Array.isArray(raw.content)) {
      for (const block of raw.content) {
        if (!isObject(block)) continue;
        if (block.type === 'tool_use') {
          turn.calls.push({ id: String(block.id), name: String(block.name), args: parseArgs(block.input) });
        } else if (block.type === 'tool_result') {
          turn.results.push({ id: String(block.tool_use_id), text: contentText(block.content ?? '') });
        } else if (typeof block.text === 'string') {
          turn.texts.push(block.text);
        } else {
          turn.texts.push(...stringsIn(block));
        }
      }
    }
    if (Array.isArray(raw.tool_calls)) {
      for (const c of raw.tool_calls) {
        if (!isObject(c) || !isObject(c.function)) continue;
        turn.calls.push({
          id: String(c.id),
          name: String(c.function.name),
          args: parseArgs(c.function.arguments),
        });
      }
    }
    turns.push(turn);
  }
  return turns;
}

/**
 * The text a view puts in a privileged role: a `system` or `developer` message in any format's
 * neutral form (OpenAI Chat `system`/`developer`, Responses developer and system items, which
 * its request builder lifts into `instructions`; Anthropic, Gemini and Bedrock `role: "system"`
 * messages, lifted into `system` / `systemInstruction`), and those request fields themselves when
 * given a built request.
 */
export function privilegedText(view: unknown): string[] {
  const out: string[] = [];
  const visit = (m: unknown) => {
    if (!isObject(m)) return;
    if (m.role === 'system' || m.role === 'developer') stringsIn(m.content ?? m.parts ?? m, out);
  };
  if (Array.isArray(view)) for (const m of view) visit(m);
  else if (isObject(view)) {
    for (const key of ['instructions', 'system', 'systemInstruction']) {
      if (view[key] !== undefined) stringsIn(view[key], out);
    }
    for (const key of ['messages', 'input', 'contents']) {
      const list = view[key];
      if (Array.isArray(list)) for (const m of list) visit(m);
    }
  }
  return out;
}

/**
 * The messages of a conversation in one format. OpenAI Chat and Anthropic are written here; the
 * other formats (Responses, Gemini, Bedrock) are the OpenAI Chat messages converted by the
 * library's `convertMessages` (an exchange converted whole, so parallel results stay together),
 * and their views are read back through it; their system slots are checked on the view as sent.
 */
export class Writer {
  constructor(readonly format: MessageFormat) {}

  private own(): 'openai' | 'anthropic' {
    return this.format === 'anthropic' ? 'anthropic' : 'openai';
  }

  private inFormat(messages: Message[]): Message[] {
    return this.format === 'openai' || this.format === 'anthropic'
      ? messages
      : convertMessages(messages, this.format);
  }

  system(text: string): Message[] {
    return this.inFormat([{ role: 'system', content: text } as Message]);
  }

  user(text: string): Message[] {
    return this.inFormat([{ role: 'user', content: text } as Message]);
  }

  assistantText(text: string): Message[] {
    return this.inFormat([
      (this.own() === 'openai'
        ? { role: 'assistant', content: text }
        : { role: 'assistant', content: [{ type: 'text', text }] }) as Message,
    ]);
  }

  /** One assistant message's calls and their results, as the conversation holds them. */
  exchange(calls: readonly Call[], results: readonly { id: string; text: string }[]): Message[] {
    if (this.own() === 'anthropic') {
      return [
        {
          role: 'assistant',
          content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })),
        } as Message,
        {
          role: 'user',
          content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.text })),
        } as Message,
      ];
    }
    return this.inFormat([
      {
        role: 'assistant',
        content: null,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      } as Message,
      ...results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.text }) as Message),
    ]);
  }

  /** A view as the agent reads it: as sent in OpenAI Chat and Anthropic, else converted to OpenAI Chat. */
  readable(view: readonly Message[]): readonly unknown[] {
    return this.format === 'openai' || this.format === 'anthropic' ? view : convertMessages(view, 'openai');
  }

  callId(task: number, step: number, i: number): string {
    return `${this.format === 'anthropic' ? 'toolu' : 'call'}_t${task}s${step}c${i}`;
  }
}
