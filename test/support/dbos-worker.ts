/**
 * A DBOS worker process for test/dbos-agent.test.ts: launches DBOS with the agent of
 * examples/dbos-agent.ts (which recovers the workflows a killed worker left pending), then runs
 * or waits for each turn of the conversation. Prints one line per event on stdout:
 * `event <phase> <message id> <duplicate>`, `recovering <workflow id>`, `turn <n>`, `done`.
 * With a crash point it SIGKILLs itself there (e.g. after a message's add committed, before DBOS
 * recorded the step's result).
 * Mode `view` prints the conversation's next view (JSON) from a fresh manager, and exits.
 *
 * Usage: node --import tsx dbos-worker.ts '<WorkerConfig JSON>'
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { BUDGET, registerAgent, TOOLS } from '../../examples/dbos-agent.js';
import { ContextManager } from '../../src/manager.js';
import { openPostgresStore } from '../../src/stores/postgres.js';

export interface WorkerConfig {
  mode: 'run' | 'view';
  databaseUrl: string;
  systemDatabaseUrl: string;
  /** The Postgres schema of the contextkit store. */
  schema: string;
  conversationId: string;
  baseURL: string;
  questions: string[];
  /** SIGKILL this process at the first step event whose message id starts with `idPrefix`, in `phase`. */
  crash?: { idPrefix: string; phase: 'before-add' | 'after-add' | 'found' };
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const store = await openPostgresStore(config.databaseUrl, { schema: config.schema });
const write = (line: string) => process.stdout.write(`${line}\n`);

if (config.mode === 'view') {
  const manager = new ContextManager({ store, conversationId: config.conversationId, model: 'gpt-4o' });
  write(JSON.stringify(await manager.getMessagesForRequest({ tokenBudget: BUDGET, tools: TOOLS })));
  await manager.close();
  process.exit(0);
}

const agentTurn = registerAgent({
  store,
  baseURL: config.baseURL,
  onStep: (event) => {
    write(`event ${event.phase} ${event.id} ${String(event.duplicate ?? false)}`);
    const crash = config.crash;
    if (crash && event.phase === crash.phase && event.id.startsWith(crash.idPrefix)) {
      process.kill(process.pid, 'SIGKILL');
    }
  },
});
DBOS.setConfig({
  name: 'contextkit-dbos-test',
  systemDatabaseUrl: config.systemDatabaseUrl,
  applicationVersion: '1',
  runAdminServer: false,
  logLevel: 'error',
});
await DBOS.launch();
for (const [n, question] of config.questions.entries()) {
  const workflowID = `${config.conversationId}/turn-${n}`;
  const status = await DBOS.getWorkflowStatus(workflowID);
  // Left pending by a killed worker: DBOS's recovery at launch queued it again (ENQUEUED) or runs it.
  if (status !== null && status.status !== 'SUCCESS') write(`recovering ${workflowID} ${status.status}`);
  // A workflow id DBOS already holds is not started again: DBOS's recovery at launch runs it.
  const handle =
    status === null
      ? await DBOS.startWorkflow(agentTurn, { workflowID })(config.conversationId, question)
      : DBOS.retrieveWorkflow<string>(workflowID);
  await handle.getResult();
  write(`turn ${n}`);
}
write('done');
await DBOS.shutdown();
await store.close();
process.exit(0);
