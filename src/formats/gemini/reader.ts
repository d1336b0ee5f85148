/**
 * Reading Gemini contents for the shared readers (`wire/content.ts`, `entrySegments`, the
 * CLI's breakdown): text, calls and responses part by part. Thoughts are not conversation text.
 */
import type { Message } from '../../messages/types.js';
import type { CallRef, MessagePiece, MessageReader } from '../wire-format.js';
import { geminiCalls, geminiParts, geminiResponses, geminiText, partKind, responseText } from './parts.js';

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** The `functionCall` parts of a model content; the part itself is what a content holding only that call carries. */
function calls(message: Message): CallRef[] {
  if (message.role !== 'model') return [];
  const out: CallRef[] = [];
  for (const part of geminiParts(message) ?? []) {
    const call = isRecord(part) ? part.functionCall : undefined;
    if (!isRecord(call)) continue;
    const name = String(call.name);
    out.push({ id: String(call.id ?? name), name, args: JSON.stringify(call.args ?? {}), block: part });
  }
  return out;
}

/** Model text and calls, or user text and function responses part by part. */
function pieces(message: Message): MessagePiece[] {
  const parts = geminiParts(message) ?? [];
  if (message.role === 'model') {
    const out: MessagePiece[] = [{ role: 'assistant', kind: 'text', text: geminiText(message) }];
    for (const part of parts) {
      const call = isRecord(part) ? part.functionCall : undefined;
      if (isRecord(call)) {
        const piece: MessagePiece = {
          role: 'assistant',
          kind: 'call',
          name: String(call.name ?? 'tool'),
          text: jsonText(call.args ?? {}),
        };
        if (typeof call.id === 'string') piece.id = call.id;
        out.push(piece);
      }
    }
    return out;
  }
  const out: MessagePiece[] = [];
  for (const part of parts) {
    if (!isRecord(part) || part.thought === true) continue;
    const fr = part.functionResponse;
    if (isRecord(fr)) {
      const piece: MessagePiece = { role: 'user', kind: 'result', text: responseText(fr) };
      if (typeof fr.name === 'string') piece.name = fr.name;
      if (typeof fr.id === 'string') piece.id = fr.id;
      if (isRecord(fr.response) && fr.response.error !== undefined) piece.isError = true;
      out.push(piece);
    } else if (typeof part.text === 'string') out.push({ role: 'user', kind: 'text', text: part.text });
  }
  return out;
}

/** How the shared readers read Gemini contents. */
export const geminiReader: MessageReader = {
  owns: (message) => geminiParts(message) !== undefined,
  text: geminiText,
  hasCalls: (message) => geminiCalls(message).length > 0,
  callIds: (message) => geminiCalls(message).map((c) => c.id ?? c.name),
  calls,
  resultIds: (message) => geminiResponses(message).map((r) => r.id ?? r.name),
  isResult: (message) => geminiResponses(message).length > 0,
  results(message) {
    if (message.role !== 'user') return [];
    const out: Array<{ id: string; alone: Message }> = [];
    for (const part of geminiParts(message) ?? []) {
      const fr = isRecord(part) ? part.functionResponse : undefined;
      if (!isRecord(fr)) continue;
      out.push({
        id: String(fr.id ?? fr.name),
        alone: { role: 'user', parts: [part] } as unknown as Message,
      });
    }
    return out;
  },
  hasUserContent: (message) =>
    (geminiParts(message) ?? []).some((p) => {
      const kind = partKind(p);
      if (kind === 'text') return ((p as { text: string }).text ?? '').length > 0;
      return kind !== undefined && kind !== 'functionResponse';
    }),
  pieces,
};
