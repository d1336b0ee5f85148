/**
 * The memory tool in each integration's tool shape: the schema the framework sends the model is
 * the tool's, and running the tool runs the command on the store behind the `MemoryTool`.
 */
import { RunContext } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { memoryTool as coreMemoryTool, MEMORY_TOOL_PARAMETERS } from '../memory/memory-tool.js';
import { MemoryStore } from '../stores/memory.js';
import { memoryTool as aiSdkMemoryTool } from './ai-sdk/memory-tool.js';
import { memoryTool as langchainMemoryTool } from './langchain/memory-tool.js';
import { memoryTool as agentsMemoryTool } from './openai-agents/memory-tool.js';

const CREATE = { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' };
const VIEW = { command: 'view', path: '/memories/plan.md' };
const SHOWN = "Here's the content of /memories/plan.md with line numbers:\n     1\tstep 1";

function fresh() {
  return coreMemoryTool({ store: new MemoryStore(), scope: { agent: 'x' } });
}

describe('memory tool integrations', () => {
  it('AI SDK: runs commands and refuses traversal', async () => {
    const memory = fresh();
    const tool = aiSdkMemoryTool(memory);
    const options = { toolCallId: 'c1', messages: [] };
    const execute = tool.execute as (input: unknown, options: unknown) => Promise<string>;
    expect(await execute(CREATE, options)).toBe('File created successfully at: /memories/plan.md');
    expect(await execute(VIEW, options)).toBe(SHOWN);
    expect(await execute({ command: 'view', path: '/memories/../x' }, options)).toMatch(/^Error: The path/);
  });

  it('OpenAI Agents: a non-strict function tool with the schema, running commands', async () => {
    const memory = fresh();
    const tool = agentsMemoryTool(memory);
    expect(tool.name).toBe('memory');
    expect(tool.strict).toBe(false);
    expect(Object.keys(tool.parameters.properties)).toEqual(Object.keys(MEMORY_TOOL_PARAMETERS.properties));
    const context = new RunContext();
    expect(await tool.invoke(context, JSON.stringify(CREATE))).toBe(
      'File created successfully at: /memories/plan.md',
    );
    expect(await tool.invoke(context, JSON.stringify(VIEW))).toBe(SHOWN);
  });

  it('LangChain: a structured tool with the schema, running commands', async () => {
    const memory = fresh();
    const tool = langchainMemoryTool(memory);
    expect(tool.name).toBe('memory');
    expect(await tool.invoke(CREATE)).toBe('File created successfully at: /memories/plan.md');
    expect(await tool.invoke(VIEW)).toBe(SHOWN);
    expect(await memory.files()).toEqual({ '/memories/plan.md': 'step 1\n' });
  });
});
