/**
 * Hostile conversations in every format: a generated conversation (`conversationArb`, the
 * Anthropic blocks, the Responses items, the Gemini contents) with the shapes real logs and frameworks produce and
 * issue 20 found views breaking on, put in at drawn places: assistant narration between calls and
 * their results, repeated call ids inside one turn, `tool_calls: []`, a server tool call whose
 * result never came, reasoning left at the end, plain messages stored before the format was
 * known, results dropped or orphaned, and empty text.
 */
import fc from 'fast-check';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import { blocksConversationArb } from './anthropic-blocks-arb.js';
import { conversationArb } from './arbitraries.js';
import { bedrockConversationArb } from './bedrock-arb.js';
import { sealReasoning } from './fake-responses-server.js';
import { geminiConversationArb } from './gemini-arb.js';
import { itemsConversationArb } from './responses-items-arb.js';

type Rec = Record<string, unknown>;

/** The faults a hostile conversation may carry. */
export const HOSTILE_KINDS = [
  'narration',
  'plain-prefix',
  'repeated-id',
  'empty-tool-calls',
  'stray-server-tool',
  'trailing-reasoning',
  'drop-result',
  'orphan-result',
  'empty-text',
] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

/** One fault, and where it goes (an index taken modulo the places that fit). */
export interface Fault {
  kind: HostileKind;
  at: number;
}

/** A hostile conversation and the faults put in. */
export interface HostileConversation {
  format: MessageFormat;
  messages: Message[];
  faults: Fault[];
}

const clone = <T>(value: T): T => structuredClone(value);
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

function blocks(m: Rec): Rec[] {
  return Array.isArray(m.content) ? (m.content as Rec[]) : [];
}

/** Whether `m` makes client tool calls in `format`. */
function makesCalls(m: Rec, format: MessageFormat): boolean {
  switch (format) {
    case 'openai':
      return Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    case 'anthropic':
      return m.role === 'assistant' && blocks(m).some((b) => b.type === 'tool_use');
    case 'openai-responses':
      return m.type === 'function_call';
    case 'gemini':
      return Array.isArray(m.parts) && (m.parts as Rec[]).some((p) => isRec(p) && p.functionCall);
    case 'bedrock':
      return m.role === 'assistant' && blocks(m).some((b) => isRec(b.toolUse));
  }
}

/** Whether `m` carries a tool result in `format`. */
function carriesResult(m: Rec, format: MessageFormat): boolean {
  switch (format) {
    case 'openai':
      return m.role === 'tool';
    case 'anthropic':
      return m.role === 'user' && blocks(m).some((b) => b.type === 'tool_result');
    case 'openai-responses':
      return m.type === 'function_call_output';
    case 'gemini':
      return Array.isArray(m.parts) && (m.parts as Rec[]).some((p) => isRec(p) && p.functionResponse);
    case 'bedrock':
      return m.role === 'user' && blocks(m).some((b) => isRec(b.toolResult));
  }
}

function narration(format: MessageFormat, n: number): Rec {
  const text = `Working on it (${n})…`;
  switch (format) {
    case 'openai':
      return { role: 'assistant', content: text };
    case 'anthropic':
      return { role: 'assistant', content: [{ type: 'text', text }] };
    case 'openai-responses':
      return { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] };
    case 'gemini':
      return { role: 'model', parts: [{ text }] };
    case 'bedrock':
      return { role: 'assistant', content: [{ text }] };
  }
}

function orphan(format: MessageFormat): Rec {
  switch (format) {
    case 'openai':
      return { role: 'tool', tool_call_id: 'call_nobody', content: 'late' };
    case 'anthropic':
      return {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_nobody', content: 'late' }],
      };
    case 'openai-responses':
      return { type: 'function_call_output', call_id: 'call_nobody', output: 'late' };
    case 'gemini':
      return {
        role: 'user',
        parts: [{ functionResponse: { name: 'nobody', response: { content: 'late' } } }],
      };
    case 'bedrock':
      return {
        role: 'user',
        content: [{ toolResult: { toolUseId: 'tooluse_nobody', content: [{ text: 'late' }] } }],
      };
  }
}

function emptyText(format: MessageFormat, at: number): Rec {
  const role = at % 2 === 0 ? 'user' : 'assistant';
  switch (format) {
    case 'openai':
    case 'anthropic':
      return { role, content: at % 3 === 0 ? '' : [{ type: 'text', text: ' ' }] };
    case 'openai-responses':
      return {
        type: 'message',
        role,
        content: [{ type: role === 'user' ? 'input_text' : 'output_text', text: '' }],
      };
    case 'gemini':
      return { role: role === 'user' ? 'user' : 'model', parts: [{ text: '' }] };
    case 'bedrock':
      return { role, content: [{ text: at % 3 === 0 ? '' : ' ' }] };
  }
}

/** Indexes of the messages `test` holds for. */
function places(messages: readonly Rec[], test: (m: Rec, i: number) => boolean): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (test(m, i)) out.push(i);
  });
  return out;
}

function pick(list: readonly number[], at: number): number | undefined {
  return list.length === 0 ? undefined : list[at % list.length];
}

/** Puts `fault` into `messages` (in place); a fault with no place that fits changes nothing. */
function applyFault(messages: Rec[], format: MessageFormat, fault: Fault, n: number): void {
  const { kind, at } = fault;
  switch (kind) {
    case 'narration': {
      const i = pick(
        places(messages, (m) => makesCalls(m, format)),
        at,
      );
      if (i !== undefined) messages.splice(i + 1, 0, narration(format, n));
      return;
    }
    case 'plain-prefix': {
      // Plain messages fit every format until one shows which; they go after any system prompt.
      let start = 0;
      while (start < messages.length && ['system', 'developer'].includes(String(messages[start]!.role)))
        start++;
      const plain: Rec[] = [
        { role: 'user', content: at % 2 === 0 ? 'Hello there.' : [{ type: 'text', text: 'Hello there.' }] },
        {
          role: 'assistant',
          content: at % 3 === 0 ? [{ type: 'text', text: 'Hi, how can I help?' }] : 'Hi!',
        },
      ];
      messages.splice(start, 0, ...plain);
      return;
    }
    case 'repeated-id':
      repeatId(messages, format, at);
      return;
    case 'empty-tool-calls': {
      if (format !== 'openai') return;
      const i = pick(
        places(messages, (m) => m.role === 'assistant' && !makesCalls(m, format)),
        at,
      );
      if (i !== undefined) messages[i] = { ...messages[i]!, tool_calls: [] };
      return;
    }
    case 'stray-server-tool': {
      if (format !== 'anthropic') return;
      const i = pick(
        places(messages, (m) => m.role === 'assistant'),
        at,
      );
      if (i === undefined) return;
      const m = messages[i]!;
      const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : blocks(m);
      const call = {
        type: 'server_tool_use',
        id: `srvtoolu_${n}`,
        name: 'web_search',
        input: { query: 'x' },
      };
      // After the text, before any client tool_use (where Claude puts it).
      const k = content.findIndex((b) => b.type === 'tool_use');
      const next = [...content];
      next.splice(k < 0 ? next.length : k, 0, call);
      messages[i] = { ...m, content: next };
      return;
    }
    case 'trailing-reasoning': {
      if (format !== 'openai-responses') return;
      const id = `rs_tail${n}`;
      messages.push({ type: 'reasoning', id, summary: [], encrypted_content: sealReasoning(id, []) });
      return;
    }
    case 'drop-result': {
      const i = pick(
        places(messages, (m) => carriesResult(m, format)),
        at,
      );
      if (i !== undefined) messages.splice(i, 1);
      return;
    }
    case 'orphan-result': {
      const i = pick(
        places(messages, (_, k) => k > 0),
        at,
      );
      if (i !== undefined) messages.splice(i, 0, orphan(format));
      return;
    }
    case 'empty-text': {
      const i = pick(
        places(messages, (_, k) => k > 0),
        at,
      );
      if (i !== undefined) messages.splice(i, 0, emptyText(format, at));
      return;
    }
  }
}

/** Gives the second call of a turn the first one's id, and its result too (as some logs do). */
function repeatId(messages: Rec[], format: MessageFormat, at: number): void {
  if (format === 'openai') {
    const i = pick(
      places(messages, (m) => Array.isArray(m.tool_calls) && m.tool_calls.length > 1),
      at,
    );
    if (i === undefined) return;
    const calls = clone(messages[i]!.tool_calls as Rec[]);
    const [first, second] = [String(calls[0]!.id), String(calls[1]!.id)];
    calls[1]!.id = first;
    messages[i] = { ...messages[i]!, tool_calls: calls };
    for (let k = i + 1; k < messages.length && messages[k]!.role === 'tool'; k++)
      if (messages[k]!.tool_call_id === second) messages[k] = { ...messages[k]!, tool_call_id: first };
    return;
  }
  if (format === 'openai-responses') {
    const i = pick(
      places(messages, (m, k) => m.type === 'function_call' && messages[k + 1]?.type === 'function_call'),
      at,
    );
    if (i === undefined) return;
    const [first, second] = [String(messages[i]!.call_id), String(messages[i + 1]!.call_id)];
    messages[i + 1] = { ...messages[i + 1]!, call_id: first };
    for (let k = i + 2; k < messages.length; k++)
      if (messages[k]!.type === 'function_call_output' && messages[k]!.call_id === second)
        messages[k] = { ...messages[k]!, call_id: first };
    return;
  }
  if (format === 'anthropic') {
    const i = pick(
      places(
        messages,
        (m) => m.role === 'assistant' && blocks(m).filter((b) => b.type === 'tool_use').length > 1,
      ),
      at,
    );
    if (i === undefined) return;
    const content = clone(blocks(messages[i]!));
    const uses = content.filter((b) => b.type === 'tool_use');
    const [first, second] = [String(uses[0]!.id), String(uses[1]!.id)];
    uses[1]!.id = first;
    messages[i] = { ...messages[i]!, content };
    const next = messages[i + 1];
    if (next && next.role === 'user') {
      const results = clone(blocks(next)).map((b) =>
        b.type === 'tool_result' && b.tool_use_id === second ? { ...b, tool_use_id: first } : b,
      );
      messages[i + 1] = { ...next, content: results };
    }
  }
}

function baseArb(format: MessageFormat): fc.Arbitrary<Message[]> {
  switch (format) {
    case 'openai':
      return fc.oneof(
        conversationArb({ format, maxTurns: 4, images: false }).map((c) => c.messages),
        conversationArb({ format, broken: true, maxTurns: 4, images: false }).map((c) => c.messages),
      );
    case 'anthropic':
      // Server tools, MCP, pause_turn replies, citations and thinking loops besides the basics.
      return fc.oneof(
        conversationArb({ format, maxTurns: 4, images: false }).map((c) => c.messages),
        conversationArb({ format, broken: true, maxTurns: 4, images: false }).map((c) => c.messages),
        blocksConversationArb.map((c) => c.messages),
      );
    case 'openai-responses':
      return itemsConversationArb;
    case 'gemini':
      return geminiConversationArb();
    case 'bedrock':
      return bedrockConversationArb({ reuseIds: true, maxTurns: 5 });
  }
}

/** The faults that exist in `format`. */
function kindsFor(format: MessageFormat): HostileKind[] {
  const only: Partial<Record<HostileKind, MessageFormat>> = {
    'empty-tool-calls': 'openai',
    'stray-server-tool': 'anthropic',
    'trailing-reasoning': 'openai-responses',
  };
  return HOSTILE_KINDS.filter((kind) => (only[kind] ?? format) === format);
}

/** A conversation in `format` with one to four faults from `HOSTILE_KINDS`. */
export function hostileConversationArb(format: MessageFormat): fc.Arbitrary<HostileConversation> {
  const faultArb: fc.Arbitrary<Fault> = fc.record({
    kind: fc.constantFrom(...kindsFor(format)),
    at: fc.nat(50),
  });
  return fc
    .tuple(baseArb(format), fc.array(faultArb, { minLength: 1, maxLength: 4 }))
    .map(([base, faults]) => {
      const messages = clone(base) as unknown as Rec[];
      faults.forEach((fault, n) => {
        applyFault(messages, format, fault, n);
      });
      return { format, messages: messages as unknown as Message[], faults };
    });
}
