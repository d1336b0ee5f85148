/**
 * Every check a view must pass for its format, in one list: the library's own `validateRequest`
 * and the independent reading of the provider's rules (the reference validator for Chat
 * Completions, the fake Messages API, the fake Responses API, the fake `generateContent`).
 */
import { toBedrockRequest } from '../../src/formats/bedrock/request.js';
import { toGeminiRequest } from '../../src/formats/gemini/request.js';
import type { GeminiMessage } from '../../src/messages/gemini-types.js';
import type { Message, MessageFormat } from '../../src/messages/types.js';
import { validateRequest } from '../../src/wire/validate-request.js';
import { anthropicRequestProblems, messagesBody } from './fake-anthropic-server.js';
import { bedrockRequestProblems } from './fake-bedrock-server.js';
import { geminiRequestProblems } from './fake-gemini-server.js';
import { responsesRequestProblems } from './fake-responses-server.js';
import { referenceProblems } from './reference-validator.js';

/** What the provider would refuse in `view` (empty when every check accepts it). */
export function providerProblems(view: readonly Message[], format: MessageFormat): string[] {
  const own = validateRequest(view, format).problems.map((p) => `validateRequest: ${p.path}: ${p.message}`);
  return [...own, ...independentProblems(view, format)];
}

function independentProblems(view: readonly Message[], format: MessageFormat): string[] {
  switch (format) {
    case 'openai':
      return referenceProblems(view, 'openai');
    case 'anthropic':
      return [
        ...referenceProblems(view, 'anthropic'),
        ...anthropicRequestProblems(messagesBody(view), { signatures: false }),
      ];
    case 'openai-responses':
      return responsesRequestProblems({ input: view });
    case 'gemini': {
      let body: Record<string, unknown>;
      try {
        body = { ...toGeminiRequest(view as GeminiMessage[]) };
      } catch (error) {
        return [`toGeminiRequest: ${(error as Error).message}`];
      }
      return geminiRequestProblems(body);
    }
    case 'bedrock':
      return bedrockRequestProblems({ ...toBedrockRequest(view) }, { signatures: false });
  }
}
