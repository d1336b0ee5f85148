/**
 * Issue 33, item 1: the ids the integrations already carry. An OpenAI Agents session stores an
 * item whose API-issued id (`msg_…`, `fc_…`, `rs_…`) it already holds once, on every store and
 * from every process: a durable engine that retries the `addItems` step after its write committed
 * leaves no duplicate. Placeholder ids (the SDK's constant for items no API issued) identify nothing.
 */
import type { AgentInputItem } from '@openai/agents';
import { afterAll, describe, expect, it } from 'vitest';
import { MessageIdConflictError } from '../../src/errors.js';
import { ContextkitSession } from '../../src/integrations/openai-agents/session.js';
import { skipFor } from '../support/requirements.js';
import { workerDrivers } from './fixtures/drivers.js';

const SESSION = 'agents-ids';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const drivers = workerDrivers(cleanups, [SESSION]);

const user = (text: string): AgentInputItem => ({ role: 'user', content: text });
const reply = (id: string, text: string): AgentInputItem => ({
  id,
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});
const call = (id: string, callId: string): AgentInputItem => ({
  id,
  type: 'function_call',
  callId,
  name: 'lookup',
  arguments: '{"q":1}',
  status: 'completed',
});
const output = (callId: string, text: string): AgentInputItem => ({
  type: 'function_call_result',
  callId,
  name: 'lookup',
  status: 'completed',
  output: text,
});

for (const driver of drivers) {
  describe(`${driver.name}: an Agents session's identified items`, skipFor(driver.missing), () => {
    it('a step retried after its write committed, by another process, stores each item once', async () => {
      const open = await driver.open();
      const [a, b] = [await open(), await open()];
      const first = new ContextkitSession({ store: a, conversationId: SESSION });
      const second = new ContextkitSession({ store: b, conversationId: SESSION });
      const turn = [user('look it up'), call('fc_0a1b2c3d4e5f', 'call_1'), output('call_1', 'found 42')];
      await first.addItems(turn);
      // The engine retries the step on another worker: the user's item and the result carry no id
      // and are the step's own input, so the retry is the model's items only, as the runner adds them.
      const answer = [reply('msg_9f8e7d6c5b4a', 'It is 42.')];
      await first.addItems(answer);
      await second.addItems(answer);
      await second.addItems([call('fc_0a1b2c3d4e5f', 'call_1')]);
      expect(await second.getAllItems()).toEqual([...turn, ...answer]);
      await a.close?.();
      await b.close?.();
    });

    it('the same id with a different item is refused, naming the id; nothing is stored', async () => {
      const open = await driver.open();
      const store = await open();
      const session = new ContextkitSession({ store, conversationId: `${SESSION}` });
      await session.clearSession();
      await session.addItems([reply('msg_111122223333', 'first')]);
      const before = await session.getAllItems();
      await expect(session.addItems([user('next'), reply('msg_111122223333', 'second')])).rejects.toThrow(
        MessageIdConflictError,
      );
      await expect(session.addItems([reply('msg_111122223333', 'second')])).rejects.toThrow(
        /msg_111122223333/,
      );
      expect(await session.getAllItems()).toEqual(before);
      await store.close?.();
    });

    it('placeholder ids and ids repeated in one batch identify nothing: every item is stored', async () => {
      const open = await driver.open();
      const store = await open();
      const session = new ContextkitSession({ store, conversationId: SESSION });
      await session.clearSession();
      const items = [
        reply('__fake_id__', 'one'),
        reply('__fake_id__', 'two'),
        reply('FAKE_ID', 'three'),
        reply('msg_dup', 'four'),
        reply('msg_dup', 'five'),
      ];
      await session.addItems(items);
      await session.addItems([reply('__fake_id__', 'one')]);
      expect((await session.getAllItems()).length).toBe(6);
      await store.close?.();
    });

    it('an item cleared from the session is stored anew when added again', async () => {
      const open = await driver.open();
      const store = await open();
      const session = new ContextkitSession({ store, conversationId: SESSION });
      await session.clearSession();
      await session.addItems([reply('msg_aaaabbbbcccc', 'kept')]);
      await session.clearSession();
      await session.addItems([reply('msg_aaaabbbbcccc', 'kept')]);
      expect(await session.getAllItems()).toEqual([reply('msg_aaaabbbbcccc', 'kept')]);
      await store.close?.();
    });
  });
}
