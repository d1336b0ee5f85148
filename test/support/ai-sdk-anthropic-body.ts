/**
 * The Messages request body `@ai-sdk/anthropic` sends for a language-model prompt
 * (`LanguageModelV3Prompt`), as vercel/ai packages/anthropic/src/convert-to-anthropic-messages-prompt.ts
 * builds it, for what the AI SDK tests send: leading system messages become the top-level `system`
 * (the SDK refuses system messages separated by others); consecutive user and tool messages become
 * one user message and consecutive assistant messages one assistant message; a text part marked
 * `providerOptions.anthropic.type: 'compaction'` becomes a `compaction` block; tool calls become
 * `tool_use`, results `tool_result` (text, or the JSON of other outputs); the last text of a final
 * assistant message is trimmed. Written for the tests (nothing from `src/`), so a prompt the fake
 * Messages server accepts through it is one the real provider would send.
 */

type Rec = Record<string, unknown>;
type Part = Rec & { type: string };

function isRec(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function partsOf(message: Rec): Part[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return Array.isArray(message.content) ? (message.content as Part[]) : [];
}

function resultContent(output: unknown): unknown {
  if (!isRec(output)) return JSON.stringify(output);
  if (output.type === 'text' || output.type === 'error-text') return output.value;
  if (output.type === 'execution-denied') return output.reason ?? 'Tool execution denied.';
  return JSON.stringify(output.value);
}

/** The body for `prompt` (throws where the SDK would), with `model` and `max_tokens`. */
export function aiSdkAnthropicBody(prompt: readonly unknown[], model: string, extra: Rec = {}): Rec {
  const groups: Array<{ kind: 'system' | 'user' | 'assistant'; messages: Rec[] }> = [];
  for (const m of prompt) {
    if (!isRec(m)) throw new Error('prompt: expected message objects');
    const kind = m.role === 'system' ? 'system' : m.role === 'assistant' ? 'assistant' : 'user';
    const last = groups[groups.length - 1];
    if (last && last.kind === kind) last.messages.push(m);
    else groups.push({ kind, messages: [m] });
  }
  let system: Rec[] | undefined;
  const messages: Rec[] = [];
  groups.forEach((group, g) => {
    if (group.kind === 'system') {
      if (system) throw new Error('Multiple system messages that are separated by user/assistant messages');
      system = group.messages.map((m) => ({ type: 'text', text: String(m.content) }));
      return;
    }
    const content: Rec[] = [];
    group.messages.forEach((m, j) => {
      const parts = partsOf(m);
      parts.forEach((part, k) => {
        const lastText = g === groups.length - 1 && j === group.messages.length - 1 && k === parts.length - 1;
        const anthropic = isRec(part.providerOptions) ? part.providerOptions.anthropic : undefined;
        if (part.type === 'text') {
          if (isRec(anthropic) && anthropic.type === 'compaction')
            content.push({ type: 'compaction', content: part.text });
          else {
            const text = String(part.text);
            content.push({ type: 'text', text: group.kind === 'assistant' && lastText ? text.trim() : text });
          }
        } else if (part.type === 'tool-call') {
          content.push({ type: 'tool_use', id: part.toolCallId, name: part.toolName, input: part.input });
        } else if (part.type === 'tool-result') {
          const result: Rec = {
            type: 'tool_result',
            tool_use_id: part.toolCallId,
            content: resultContent(part.output),
          };
          const out = part.output;
          if (isRec(out) && (out.type === 'error-text' || out.type === 'error-json')) result.is_error = true;
          content.push(result);
        } else if (part.type !== 'reasoning' && part.type !== 'tool-approval-response') {
          throw new Error(`prompt: a ${part.type} part is not covered by this test helper`);
        }
      });
    });
    messages.push({ role: group.kind, content });
  });
  return { model, max_tokens: 1024, ...(system ? { system } : {}), messages, ...extra };
}
