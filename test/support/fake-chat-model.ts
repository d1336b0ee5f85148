/**
 * A LangChain chat model that calls the fake OpenAI server on 127.0.0.1 (Chat Completions), for
 * the LangChain integration's tests and example: the messages go over the wire as OpenAI
 * messages, so the server sees (and refuses) an orphaned tool result as the real API would.
 */
import { BaseChatModel, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { fromBaseMessages } from '../../src/integrations/langchain/base-messages.js';
import type { ToolDefinition } from '../../src/messages/types.js';

export interface FakeChatModelFields extends BaseChatModelParams {
  /** The fake server's `baseURL` (`http://127.0.0.1:PORT/v1`). */
  baseURL: string;
  model?: string;
  tools?: ToolDefinition[];
}

interface WireCall {
  id: string;
  function: { name: string; arguments: string };
}

/** A chat model whose replies come from the fake OpenAI server: tool calls or a final text. */
export class FakeOpenAIChatModel extends BaseChatModel {
  private readonly baseURL: string;
  private readonly modelName: string;
  private readonly tools: ToolDefinition[] | undefined;

  constructor(fields: FakeChatModelFields) {
    super(fields);
    this.baseURL = fields.baseURL;
    this.modelName = fields.model ?? 'gpt-4o';
    this.tools = fields.tools;
  }

  _llmType(): string {
    return 'fake-openai';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const res = await fetch(`${this.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
      body: JSON.stringify({
        model: this.modelName,
        messages: fromBaseMessages(messages),
        tools: this.tools,
      }),
    });
    const body = (await res.json()) as {
      error?: { message: string };
      choices?: Array<{ message: { content: string | null; tool_calls?: WireCall[] } }>;
    };
    const reply = body.choices?.[0]?.message;
    if (!res.ok || !reply) throw new Error(`fake model: ${body.error?.message ?? res.status}`);
    const message = new AIMessage({
      content: reply.content ?? '',
      tool_calls: (reply.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        args: JSON.parse(c.function.arguments) as Record<string, unknown>,
        type: 'tool_call' as const,
      })),
    });
    return { generations: [{ text: reply.content ?? '', message }] };
  }
}
