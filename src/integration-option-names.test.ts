import { describe, expect, it } from 'vitest';
import { ConfigurationError } from './errors.js';
import { contextMiddleware, contextPrepareStep } from './integrations/ai-sdk/middleware.js';
import { ContextkitChatMessageHistory } from './integrations/langchain/chat-message-history.js';
import { fitBaseMessages } from './integrations/langchain/fit-messages.js';
import { ContextkitSession } from './integrations/openai-agents/session.js';

// Issue 34: the integrations take the seed contract's names (`maxTokens`, `conversationId`); the
// names they took before are refused with an error naming the one to use, never ignored.
describe('integration option names', () => {
  it('refuses budget, naming maxTokens, in every integration', async () => {
    const renamed = /budget: was renamed: pass maxTokens/;
    expect(() => contextMiddleware({ budget: 1_000 } as never)).toThrow(renamed);
    expect(() => contextPrepareStep({ budget: 1_000 } as never)).toThrow(renamed);
    expect(() => new ContextkitSession({ budget: 1_000 } as never)).toThrow(renamed);
    await expect(fitBaseMessages([], { budget: 1_000 } as never)).rejects.toThrow(renamed);
    expect(() => contextMiddleware({ budget: 1_000 } as never)).toThrow(ConfigurationError);
  });

  it('refuses sessionId, naming conversationId', () => {
    expect(() => new ContextkitSession({ sessionId: 's' } as never)).toThrow(
      /sessionId: was renamed: pass conversationId/,
    );
    expect(() => new ContextkitChatMessageHistory({ sessionId: 's' } as never)).toThrow(
      /sessionId: was renamed: pass conversationId/,
    );
  });

  it('names the nearest option of a typo, and takes the documented ones', () => {
    expect(() => new ContextkitSession({ maxToken: 1_000 } as never)).toThrow(/did you mean maxTokens\?/);
    const session = new ContextkitSession({ conversationId: 'c', maxTokens: 1_000, model: 'gpt-4o' });
    expect(session.conversationId).toBe('c');
    expect(() => contextMiddleware({ maxTokens: 1_000, conversations: 2 })).not.toThrow();
  });
});
