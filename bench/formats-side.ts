/**
 * One side of `bench formats` in a process of its own: loads one build, fills a manager with the
 * session's first messages, runs the turns and prints their times (ms, compaction turns left out)
 * as JSON. A process per side, so neither build pays for being loaded second.
 */
import { pathToFileURL } from 'node:url';
import type { Message } from '../src/messages/types.js';
import { BUDGET, type FormatsBuild, formatSession, SIZE } from './formats-session.js';

async function main(): Promise<void> {
  const [entry, format, first, count] = process.argv.slice(2);
  const build = (await import(pathToFileURL(entry!).href)) as FormatsBuild;
  const { session, model } = formatSession(build.convertMessages, format!);
  const manager = new build.ContextManager({ model });
  let compacted = false;
  manager.on('context:post_compact', () => {
    compacted = true;
  });
  for (const message of session.slice(0, SIZE)) await manager.addMessage(message);
  await manager.getMessagesForRequest({ tokenBudget: BUDGET });
  const turns: number[] = [];
  const from = SIZE + Number(first);
  for (const message of session.slice(from, from + Number(count)) as Message[]) {
    compacted = false;
    const t0 = performance.now();
    await manager.addMessage(message);
    await manager.getMessagesForRequest({ tokenBudget: BUDGET });
    const ms = performance.now() - t0;
    if (!compacted) turns.push(ms);
  }
  process.stdout.write(JSON.stringify(turns));
}

await main();
