import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/types.js';
import { MemoryStore } from '../stores/memory.js';
import { CliError } from './cli-error.js';
import { DEMO_CONVERSATION, messageFingerprint, resumeDemo, saveDemoRecord } from './demo-resume.js';
import { demoMessages } from './demo-session.js';

const COUNTER = 'openai:o200k_base';

async function storeWith(messages: readonly Message[]): Promise<MemoryStore> {
  const store = new MemoryStore();
  if (messages.length > 0) {
    await store.append(
      DEMO_CONVERSATION,
      messages.map((message) => ({ message, metadata: { timestamp: '2024-05-15T15:00:00.000Z' } })),
    );
  }
  return store;
}

describe('resumeDemo', () => {
  it('starts a new session with whole turns', async () => {
    const resume = await resumeDemo(await storeWith([]), [], 'openai', 50, COUNTER, 'dir');
    const flat = resume.turns.flat();
    expect(flat.length).toBeGreaterThanOrEqual(50);
    expect(flat).toEqual(demoMessages('openai', flat.length));
    expect(resume.storedTokens).toBe(0);
  });

  it('continues mid-turn from a log a run left unfinished, checking it against the session', async () => {
    const all = demoMessages('openai', 200);
    const stored = all.slice(0, 137);
    const resume = await resumeDemo(await storeWith(stored), stored, 'openai', 40, COUNTER, 'dir');
    const flat = resume.turns.flat();
    expect(flat).toEqual(all.slice(137, 137 + flat.length));
    expect(resume.storedTokens).toBeUndefined();
  });

  it('continues from its record as it would by generating the session again', async () => {
    const first = await resumeDemo(await storeWith([]), [], 'anthropic', 120, COUNTER, 'dir');
    const stored = first.turns.flat();
    const store = await storeWith(stored);
    await saveDemoRecord(store, {
      messages: stored.length,
      tokens: 12_345,
      counter: COUNTER,
      last: messageFingerprint(stored.at(-1)),
      session: first.session.snapshot(),
    });
    const fromRecord = await resumeDemo(store, stored, 'anthropic', 80, COUNTER, 'dir');
    const regenerated = await resumeDemo(await storeWith(stored), stored, 'anthropic', 80, COUNTER, 'dir');
    expect(fromRecord.storedTokens).toBe(12_345);
    expect(regenerated.storedTokens).toBeUndefined();
    expect(fromRecord.turns).toEqual(regenerated.turns);
    expect(fromRecord.session.snapshot()).toEqual(regenerated.session.snapshot());
    // Another counter's figure is not reused.
    expect(
      (await resumeDemo(store, stored, 'anthropic', 10, 'anthropic:cl100k_base*1.2', 'dir')).storedTokens,
    ).toBeUndefined();
  });

  it('does not trust a record written for another log', async () => {
    const stored = demoMessages('openai', 60);
    const store = await storeWith(stored);
    const other = await resumeDemo(await storeWith([]), [], 'openai', 300, COUNTER, 'dir');
    await saveDemoRecord(store, {
      messages: 60,
      tokens: 1,
      counter: COUNTER,
      last: 'not-the-last-message',
      session: other.session.snapshot(),
    });
    const resume = await resumeDemo(store, stored, 'openai', 20, COUNTER, 'dir');
    expect(resume.storedTokens).toBeUndefined();
    expect(resume.turns.flat()).toEqual(
      demoMessages('openai', 200).slice(60, 60 + resume.turns.flat().length),
    );
  });

  it('refuses to append to a conversation the demo did not write', async () => {
    const stored: Message[] = [
      { role: 'system', content: 'another agent' },
      { role: 'user', content: 'hello' },
    ];
    await expect(
      resumeDemo(await storeWith(stored), stored, 'openai', 10, COUNTER, '.contextkit'),
    ).rejects.toThrow(CliError);
    await expect(
      resumeDemo(await storeWith(stored), stored, 'openai', 10, COUNTER, '.contextkit'),
    ).rejects.toThrow(
      /holds messages this demo did not write \(message #1 differs\); run contextkit demo --reset/,
    );
  });
});
