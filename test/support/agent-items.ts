/**
 * The OpenAI Agents SDK's side of the hostile property test: Responses API items (a hostile
 * conversation) written as the SDK's items, and the request input the SDK itself builds from the
 * items a session gives it (its `OpenAIResponsesModel` with a client that only records the
 * request body), so the check reads what would really be sent.
 */
import { type AgentInputItem, OpenAIResponsesModel, withTrace } from '@openai/agents';
import type { Message } from '../../src/messages/types.js';

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

function sdkPart(part: unknown, role: string): Rec {
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  if (!isRec(part)) return { type: textType, text: '' };
  if (part.type === 'refusal' && role === 'assistant')
    return { type: 'refusal', refusal: String(part.refusal) };
  if (typeof part.text === 'string') return { type: textType, text: part.text };
  return { type: textType, text: `[${String(part.type)}]` };
}

/** One Responses item in the SDK's spelling; undefined for the items this test leaves out. */
function sdkItem(item: Rec, names: ReadonlyMap<string, string>): Rec | undefined {
  if (item.type === undefined || item.type === 'message') {
    const role = String(item.role);
    if (role === 'system' || role === 'developer') {
      const content = Array.isArray(item.content)
        ? item.content.map((p) => (isRec(p) && typeof p.text === 'string' ? p.text : '')).join('')
        : String(item.content ?? '');
      return { role: 'system', content };
    }
    const content =
      typeof item.content === 'string'
        ? item.content
        : (item.content as unknown[]).map((p) => sdkPart(p, role));
    if (role === 'assistant')
      return {
        type: 'message',
        role,
        status: 'completed',
        content: typeof content === 'string' ? [{ type: 'output_text', text: content }] : content,
      };
    return { role, content };
  }
  switch (item.type) {
    case 'function_call':
      return {
        type: 'function_call',
        callId: item.call_id,
        name: item.name,
        arguments: item.arguments,
        ...(typeof item.id === 'string' ? { id: item.id } : {}),
      };
    case 'function_call_output':
      return {
        type: 'function_call_result',
        callId: item.call_id,
        name: names.get(String(item.call_id)) ?? 'tool',
        status: 'completed',
        output: typeof item.output === 'string' ? item.output : JSON.stringify(item.output),
      };
    case 'reasoning':
      return {
        type: 'reasoning',
        id: item.id,
        content: ((item.summary as Rec[] | undefined) ?? []).map((s) => ({
          type: 'input_text',
          text: String(s.text),
        })),
        providerData: { encrypted_content: item.encrypted_content },
      };
    default:
      // Custom, shell, hosted and MCP items: the SDK has forms of its own this test does not build.
      return undefined;
  }
}

/**
 * `messages` (Responses API items) as the SDK's items, leaving out the kinds `sdkItem` does not
 * write; the function calls and outputs whose place among them `raw` holds (0 for the first)
 * stay in the Responses API's spelling (what a caller might wrongly hand the session).
 */
export function toAgentItems(
  messages: readonly Message[],
  raw: (index: number) => boolean,
): AgentInputItem[] {
  const names = new Map<string, string>();
  for (const m of messages as unknown as Rec[])
    if (m.type === 'function_call') names.set(String(m.call_id), String(m.name));
  const out: AgentInputItem[] = [];
  let place = 0;
  for (const m of messages as unknown as Rec[]) {
    const call = m.type === 'function_call' || m.type === 'function_call_output';
    const item = call && raw(place++) ? m : sdkItem(m, names);
    if (item) out.push(item as unknown as AgentInputItem);
  }
  return out;
}

/** The `input` of the Responses request the SDK builds from `items` (nothing is sent). */
export async function sdkRequestInput(items: readonly AgentInputItem[]): Promise<unknown[]> {
  let body: Rec | undefined;
  const stop = new Error('request recorded');
  const client = {
    responses: {
      create: (request: Rec) => {
        body = request;
        throw stop;
      },
    },
  };
  type Client = ConstructorParameters<typeof OpenAIResponsesModel>[0];
  const model = new OpenAIResponsesModel(client as unknown as Client, 'gpt-4o');
  const request = {
    input: items.slice(),
    modelSettings: {},
    tools: [],
    outputType: 'text',
    handoffs: [],
    tracing: false,
  };
  await withTrace('hostile', () =>
    model
      .getResponse(request as unknown as Parameters<typeof model.getResponse>[0])
      .catch((error: unknown) => {
        if (error !== stop) throw error;
      }),
  );
  if (!body) throw new Error('the SDK built no request');
  return body.input as unknown[];
}
