import type { AnthropicMessage, AnthropicTextBlock, Message } from '../../messages/types.js';

/** The shape Anthropic's Messages API takes: the system prompt apart from the turns. */
export interface AnthropicRequestParts {
  /** Omitted when the view has no system message. */
  system?: string | AnthropicTextBlock[];
  messages: Array<Exclude<AnthropicMessage, { role: 'system' }>>;
}

/**
 * Splits a view into Anthropic's `system` and `messages`: the `role: "system"` messages become the
 * top-level system prompt (a string when they are all strings, else text blocks, in order).
 */
export function toAnthropicRequest(view: readonly Message[]): AnthropicRequestParts {
  const system: AnthropicTextBlock[] = [];
  const messages: AnthropicRequestParts['messages'] = [];
  let allStrings = true;
  for (const m of view) {
    if (m.role === 'system' || m.role === 'developer') {
      if (m.content === undefined) continue;
      if (typeof m.content === 'string') system.push({ type: 'text', text: m.content });
      else {
        allStrings = false;
        for (const part of m.content) if (part.type === 'text') system.push(part as AnthropicTextBlock);
      }
    } else {
      messages.push(m as AnthropicRequestParts['messages'][number]);
    }
  }
  if (system.length === 0) return { messages };
  return { system: allStrings ? system.map((b) => b.text).join('\n\n') : system, messages };
}
