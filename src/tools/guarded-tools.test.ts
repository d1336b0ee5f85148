import { describe, expect, it } from 'vitest';
import { ContextManager } from '../manager.js';
import type { HistoryEntry } from '../messages/types.js';
import { messageText } from '../wire/content.js';
import { createOfflineTools } from './offline.js';
import type { ContextTools, ExtractedFact } from './types.js';

const offline = createOfflineTools();

/** A user's tools, each method replaced where a test says. */
const userTools = (overrides: Partial<ContextTools>): ContextTools => ({
  kind: 'mine',
  summarize: (entries, options) => offline.summarize(entries, options),
  extractFacts: (entries, options) => offline.extractFacts(entries, options),
  ...overrides,
});

async function longChat(tools: ContextTools) {
  const ctx = new ContextManager({ maxTokens: 3000, tools });
  const warnings: string[] = [];
  ctx.on('context:warn', (w) => warnings.push(`${w.code}: ${w.message}`));
  for (let i = 0; i < 120; i++) {
    await ctx.addMessage({
      role: i % 2 ? 'assistant' : 'user',
      content: `Step ${i}: order W${1000 + i} for mia_li_${i} ships to Lisbon on 2024-05-${(i % 28) + 1}.`,
    });
  }
  return { ctx, warnings, view: await ctx.getMessagesForRequest() };
}

const conversationIn = (view: readonly unknown[]) =>
  view.filter((m) => !messageText(m as never).includes('contextkit')).length;

describe('a user-supplied ContextTools behind the built-in guards (issue 23, item 2)', () => {
  it('one that throws does not fail the request: the offline tools answer, with a warning', async () => {
    const { view, warnings } = await longChat(
      userTools({
        summarize: () => Promise.reject(new Error('model down')),
        extractFacts: () => Promise.reject(new Error('model down')),
      }),
    );
    expect(view.length).toBeGreaterThan(2);
    expect(
      warnings.some((w) => /^tools_fallback: the mine tools' summarize failed \(model down\)/.test(w)),
    ).toBe(true);
  });

  it('a summary longer than its maxTokens does not push the conversation out of the view', async () => {
    const { view, warnings } = await longChat(
      userTools({ summarize: async (_e, o) => 'word '.repeat(o.maxTokens * 20) }),
    );
    expect(conversationIn(view)).toBeGreaterThan(10);
    expect(warnings.some((w) => /summarize returned \d+ tokens, over the \d+ allowed/.test(w))).toBe(true);
  });

  it('an empty summary does not silently replace what it stood for', async () => {
    const { view, warnings } = await longChat(userTools({ summarize: async () => '  ' }));
    const summary = view.find((m) => messageText(m).startsWith('[contextkit: summary'));
    expect(summary && messageText(summary).split('\n').slice(1).join('\n').trim()).not.toBe('');
    expect(warnings.some((w) => /returned an empty summary/.test(w))).toBe(true);
  });

  it('facts returned without the earlier ones are merged with them, never replacing them', async () => {
    const seen: ExtractedFact[][] = [];
    const onlyNew = userTools({
      extractFacts: async (entries: readonly HistoryEntry[], options) => {
        seen.push([...(options?.previousFacts ?? [])]);
        return offline.extractFacts(entries); // drops previousFacts
      },
    });
    const { ctx } = await longChat(onlyNew);
    const first = (await ctx.getMessagesForRequest()).find((m) =>
      messageText(m).includes('contextkit:facts'),
    );
    for (let i = 0; i < 120; i++) {
      await ctx.addMessage({
        role: i % 2 ? 'assistant' : 'user',
        content: `Later ${i}: ticket T${5000 + i}.`,
      });
    }
    const later = await ctx.getMessagesForRequest();
    const facts = later.find((m) => messageText(m).includes('contextkit:facts'));
    expect(seen.some((previous) => previous.length > 0)).toBe(true);
    // The first plan's facts still lead the block after the second plan.
    const firstLine = messageText(first!)
      .split('\n')
      .find((l) => /^\d+ /.test(l));
    expect(messageText(facts!)).toContain(firstLine!);
  });
});
