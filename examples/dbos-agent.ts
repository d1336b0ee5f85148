/**
 * contextkit + DBOS (durable workflows on PostgreSQL): an agent loop as a workflow, the model call
 * and each tool call as steps, the conversation in contextkit's Postgres store. A process killed
 * mid-turn is harmless: DBOS restarts the workflow in the next process and replays the steps it
 * recorded; a step that ran but whose result DBOS had not recorded yet runs again, and its
 * message, added under an id derived from the workflow id and the step, is stored once.
 *
 *   node --import tsx examples/dbos-agent.ts      (Postgres: DATABASE_URL, default 127.0.0.1:5432/test)
 *
 * DBOS keeps its checkpoints in a system database of its own; this example creates one
 * (`contextkit_dbos_example_…`) beside DATABASE_URL's database and drops it at the end.
 * In your project, import from 'contextkit' and 'contextkit/stores/postgres' instead of '../src/…'.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { ContextManager, type Message } from '../src/index.js';
import { openPostgresStore, type PostgresStore } from '../src/stores/postgres.js';
import { startFakeOpenAI, toolLoopReply } from '../test/support/fake-openai-server.js';

/** The tools offered to the model (OpenAI Chat Completions shape). */
export const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'search',
      description: 'Searches the order database.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' }, step: { type: 'number' } },
        required: ['query', 'step'],
      },
    },
  },
];

/** The budget each view is fitted to: small, so the views of a long run are fitted, not whole. */
export const BUDGET = 1_200;

/** Where a message is in its step, for `onStep` (logging, or a test that kills the process there). */
export interface StepEvent {
  /** The message id: `<workflow id>/user`, `/model-N`, `/tool-N-CALLID`. */
  id: string;
  /**
   * `before-add`: the step's work is done and its message not yet stored; `after-add`: stored, DBOS
   * has not recorded the step's result yet; `found`: a model step run again found its reply stored.
   */
  phase: 'before-add' | 'after-add' | 'found';
  /** After the add: whether the id was already stored (a step run again after its write committed). */
  duplicate?: boolean;
}

export interface AgentOptions {
  /** The conversations' store (one per process; the managers share it). */
  store: PostgresStore;
  /** OpenAI-compatible base URL (`…/v1`) of the model. */
  baseURL: string;
  model?: string;
  onStep?: (event: StepEvent) => void;
}

/**
 * Registers the agent's workflow with DBOS (before `DBOS.launch()`, in every process that may run
 * or recover it) and returns it: `agentTurn(conversationId, userText)` runs one turn to the final
 * answer and resolves with it.
 */
export function registerAgent(
  options: AgentOptions,
): (conversationId: string, userText: string) => Promise<string> {
  const managers = new Map<string, ContextManager>();
  // One manager per conversation in this process; every step first takes in what the store holds.
  const managerFor = async (conversationId: string): Promise<ContextManager> => {
    let manager = managers.get(conversationId);
    if (manager === undefined) {
      manager = new ContextManager({
        store: options.store,
        conversationId,
        model: options.model ?? 'gpt-4o',
      });
      managers.set(conversationId, manager);
    }
    await manager.sync();
    return manager;
  };

  // Adds `message` under `id`: a step run again after its add committed stores nothing new.
  const store = async (manager: ContextManager, id: string, message: Message): Promise<void> => {
    options.onStep?.({ id, phase: 'before-add' });
    const added = await manager.addMessage(message, { id });
    options.onStep?.({ id, phase: 'after-add', duplicate: added.duplicate });
  };

  const callModel = async (view: Message[]): Promise<Message> => {
    const response = await fetch(`${options.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: options.model ?? 'gpt-4o', messages: view, tools: TOOLS }),
    });
    if (!response.ok) throw new Error(`model: HTTP ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { choices: Array<{ message: Record<string, unknown> }> };
    const { content, tool_calls } = body.choices[0]?.message ?? {};
    return {
      role: 'assistant',
      content: (content as string | null) ?? null,
      ...(Array.isArray(tool_calls) && tool_calls.length > 0 ? { tool_calls } : {}),
    } as Message;
  };

  // The model call as a step: the view is computed inside it from the stored conversation.
  const modelStep = async (conversationId: string, id: string): Promise<Message> => {
    const manager = await managerFor(conversationId);
    // Run again after its add committed: the stored reply is the step's result (a model asked
    // again may answer otherwise, and the same id with another message is refused).
    const stored = (await manager.getEntries()).find((e) => e.id === id);
    if (stored !== undefined) {
      options.onStep?.({ id, phase: 'found' });
      return stored.message as Message;
    }
    const view = await manager.getMessagesForRequest({ tokenBudget: BUDGET, tools: TOOLS });
    const reply = await callModel(view);
    await store(manager, id, reply);
    return reply;
  };

  // A tool call as a step (deterministic here; a tool with effects would carry the id too).
  const toolStep = async (
    conversationId: string,
    id: string,
    callId: string,
    args: string,
  ): Promise<void> => {
    const { query, step } = JSON.parse(args) as { query: string; step: number };
    const rows = Array.from({ length: 60 }, (_, i) => `#${(i * 31 + step * 7 + query.length) % 1009}`);
    const manager = await managerFor(conversationId);
    await store(manager, id, {
      role: 'tool',
      tool_call_id: callId,
      content: `Orders ${step} for "${query}": ${rows.join(' ')}`,
    });
  };

  const turn = async (conversationId: string, userText: string): Promise<string> => {
    const workflowId = DBOS.workflowID;
    if (workflowId === undefined) throw new Error('agentTurn runs as a DBOS workflow');
    await DBOS.runStep(
      async () =>
        store(await managerFor(conversationId), `${workflowId}/user`, { role: 'user', content: userText }),
      { name: 'user' },
    );
    for (let call = 0; call < 20; call++) {
      const id = `${workflowId}/model-${call}`;
      const reply = (await DBOS.runStep(() => modelStep(conversationId, id), { name: `model-${call}` })) as {
        content: string | null;
        tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
      };
      if (!reply.tool_calls?.length) return reply.content ?? '';
      for (const c of reply.tool_calls) {
        await DBOS.runStep(
          () => toolStep(conversationId, `${workflowId}/tool-${call}-${c.id}`, c.id, c.function.arguments),
          { name: `tool-${call}-${c.id}` },
        );
      }
    }
    throw new Error(`turn ${workflowId}: no final answer after 20 model calls`);
  };
  return DBOS.registerWorkflow(turn, { name: 'contextkit-agent-turn' });
}

/**
 * A fake model's reply: `toolLoopReply(2)` with call ids derived from the request, as a model's are
 * its own (a request repeated after a crash gets the same reply).
 */
export function deterministicReply(): ReturnType<typeof toolLoopReply> {
  const inner = toolLoopReply(2);
  return (request) => {
    const turn = inner(request);
    if (!turn.toolCalls) return turn;
    return {
      ...turn,
      toolCalls: turn.toolCalls.map((c) => {
        const { query, step } = c.arguments as { query: string; step: number };
        return { ...c, id: `call_${Buffer.from(query).toString('hex').slice(0, 16)}_${step}` };
      }),
    };
  };
}

/** `url` with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const suffix = randomBytes(4).toString('hex');
  const systemDatabase = `contextkit_dbos_example_${suffix}`;
  const server = await startFakeOpenAI({ reply: deterministicReply() });
  const schema = `ckdbos_example_${suffix}`;
  const store = await openPostgresStore(databaseUrl, { schema });
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${systemDatabase}`);
  try {
    const agentTurn = registerAgent({ store, baseURL: server.baseURL });
    DBOS.setConfig({
      name: 'contextkit-dbos-example',
      systemDatabaseUrl: withDatabase(databaseUrl, systemDatabase),
      applicationVersion: '1',
      runAdminServer: false,
      logLevel: 'error',
    });
    await DBOS.launch();
    const conversationId = 'support-1';
    for (const [n, question] of ['Where is order 1042?', 'Refunds this week?', 'Late shipments?'].entries()) {
      // The workflow id names the turn: started again (after a crash), DBOS resumes it, not a new one.
      const handle = await DBOS.startWorkflow(agentTurn, { workflowID: `${conversationId}/turn-${n}` })(
        conversationId,
        question,
      );
      console.log(`> ${question}\n  ${await handle.getResult()}`);
    }
    const check = new ContextManager({ store, conversationId, model: 'gpt-4o' });
    const entries = await check.getEntries();
    const view = await check.getMessagesForRequest({ tokenBudget: BUDGET, tools: TOOLS });
    const ids = new Set(entries.map((e) => e.id));
    console.log(
      `\n${entries.length} messages stored (${ids.size} ids), next view ${view.length} messages, ${server.requests.length} model calls, ${server.requests.filter((r) => r.problems.length > 0).length} refused`,
    );
  } finally {
    await DBOS.shutdown();
    await store.close();
    await server.close();
    await admin.query(`DROP DATABASE IF EXISTS ${systemDatabase} WITH (FORCE)`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
