/**
 * One side of `bench formats` in a process of its own (started by formats.ts with an IPC
 * channel): loads one build, fills a manager with the session's first messages, says it is ready,
 * then runs the turns a block at a time when asked, answering each block with its turns' times
 * (ms, compaction turns left out). A process per side, so neither build pays for being loaded
 * second; blocks on request, so the two sides' turns interleave and share the machine's load.
 */
import type { Message } from '../src/messages/types.js';
import { importBuild } from './formats-build.js';
import { BUDGET, formatSession, SIZE, type SideReply, type SideRequest, TURNS } from './formats-session.js';

function reply(message: SideReply): void {
  process.send!(message);
}

async function main(): Promise<void> {
  const [entry, format] = process.argv.slice(2);
  if (process.send === undefined) throw new Error('bench formats: a side runs with an IPC channel');
  const build = await importBuild(entry!);
  const { session, model } = formatSession(build.convertMessages, format!);
  const manager = new build.ContextManager({ model });
  let compacted = false;
  manager.on('context:post_compact', () => {
    compacted = true;
  });
  for (const message of session.slice(0, SIZE)) await manager.addMessage(message);
  await manager.getMessagesForRequest({ tokenBudget: BUDGET });
  const turns = session.slice(SIZE, SIZE + TURNS) as Message[];
  let next = 0;
  // Requests come one at a time (the parent waits for each reply), so blocks never overlap.
  process.on('message', (request: SideRequest) => {
    void (async () => {
      const times: number[] = [];
      for (const message of turns.slice(next, next + request.turns)) {
        compacted = false;
        const t0 = performance.now();
        await manager.addMessage(message);
        await manager.getMessagesForRequest({ tokenBudget: BUDGET });
        const ms = performance.now() - t0;
        if (!compacted) times.push(ms);
      }
      next += request.turns;
      reply({ times });
      if (next >= turns.length) process.disconnect();
    })();
  });
  reply({ ready: true });
}

await main();
