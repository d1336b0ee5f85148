/**
 * The memory tool (`memory_20250818`, https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool)
 * on any contextkit store. The tool is client-executed: the model asks to view, create, edit,
 * delete or rename files under `/memories`, and the application runs the command. Here the
 * directory is one metadata record of the store (under an id of its own, per agent or per
 * conversation), and every command that changes it is a compare-and-set of that record
 * (`setMeta` with `expectedVersion`), retried on a conflict from a fresh read: two workers
 * editing one directory at once never lose an acknowledged write, on every driver, because every
 * driver's `setMeta` is atomic and versioned.
 */
import { ConfigurationError, ConflictError, StoreError } from '../errors.js';
import { wireFormat } from '../formats/registry.js';
import type { GeminiContent } from '../messages/gemini-types.js';
import type { ResponsesItem } from '../messages/responses-types.js';
import { readToolCall } from '../messages/tool-call.js';
import type {
  AnthropicUserMessage,
  MessageFormat,
  OpenAIToolMessage,
  ToolDefinition,
} from '../messages/types.js';
import { resolveStore } from '../stores/resolve.js';
import type { ConversationStore } from '../stores/types.js';
import { toolResultMessage } from '../wire/tool-result.js';
import { type MemoryFiles, type MemoryLimits, runMemoryCommand } from './memory-commands.js';
import { MEMORY_TOOL_NAME } from './memory-spec.js';

export { anthropicMemoryTool } from '../formats/anthropic/tools.js';
export { bedrockMemoryTool } from '../formats/bedrock/tools.js';
export { geminiMemoryTool } from '../formats/gemini/tools.js';
export { openAIMemoryTool } from '../formats/openai-chat/tools.js';
export { responsesMemoryTool } from '../formats/openai-responses/tools.js';
export { MEMORY_TOOL_DESCRIPTION, MEMORY_TOOL_NAME, MEMORY_TOOL_PARAMETERS } from './memory-spec.js';

/** The tool definition in `format`: Anthropic's native tool, or a function tool elsewhere. */
export function memoryToolDefinition(format: MessageFormat): ToolDefinition {
  return wireFormat(format).memoryTool;
}

/** Whose memory a directory is: one agent's across its conversations, or one conversation's. */
export type MemoryScope = { agent: string } | { conversation: string };

/** Options of {@link memoryTool}. */
export interface MemoryToolOptions {
  /** Where the directory lives: a `ConversationStore` or a store URL, as `ContextManager`'s `store`. */
  store: ConversationStore | string;
  /** Whose memory it is; workers given the same scope and store share one directory. */
  scope: MemoryScope;
  /** Largest file in UTF-8 bytes (default 64 KiB). */
  maxFileBytes?: number;
  /** All files together in UTF-8 bytes (default 512 KiB). */
  maxTotalBytes?: number;
  /** Most files (default 1,000). */
  maxFiles?: number;
  /** Tries of a write that keeps meeting other writers' changes before it fails (default 100). */
  maxAttempts?: number;
}

/** What a command gave: the text for the model, and whether it is an error. */
export interface MemoryResult {
  text: string;
  isError: boolean;
}

const KIND = 'contextkit-memory';

/** The store id a scope's directory lives under (listed by `store.list()` like a conversation). */
export function memoryDirectoryId(scope: MemoryScope): string {
  if ('agent' in scope && typeof scope.agent === 'string' && scope.agent !== '')
    return `${KIND}:agent:${scope.agent}`;
  if ('conversation' in scope && typeof scope.conversation === 'string' && scope.conversation !== '') {
    return `${KIND}:conversation:${scope.conversation}`;
  }
  throw new ConfigurationError(
    'scope',
    'expected { agent: "<id>" } or { conversation: "<id>" } with a non-empty id',
  );
}

function limitOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigurationError(name, `expected a positive integer, got ${String(value)}`);
  }
  return value;
}

function pause(attempt: number): Promise<void> {
  // Jittered and growing, so writers that met do not meet again in lockstep.
  const ms = Math.random() * Math.min(50, 1 + 2 ** Math.min(attempt, 6));
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The memory tool's handler on a store: run the model's commands with {@link MemoryTool.run} or
 * answer its tool calls with {@link MemoryTool.handleToolCall}. Build it with {@link memoryTool}.
 */
export class MemoryTool {
  /** The store id the directory lives under. */
  readonly directoryId: string;
  /** The size limits the commands enforce. */
  readonly limits: MemoryLimits;
  readonly #store: ConversationStore;
  readonly #maxAttempts: number;

  constructor(options: MemoryToolOptions) {
    this.directoryId = memoryDirectoryId(options.scope);
    this.#store = resolveStore(options.store);
    this.limits = {
      maxFileBytes: limitOption('maxFileBytes', options.maxFileBytes, 64 * 1024),
      maxTotalBytes: limitOption('maxTotalBytes', options.maxTotalBytes, 512 * 1024),
      maxFiles: limitOption('maxFiles', options.maxFiles, 1000),
    };
    this.#maxAttempts = limitOption('maxAttempts', options.maxAttempts, 100);
  }

  async #read(): Promise<{ files: MemoryFiles; version: number }> {
    const record = await this.#store.getMeta(this.directoryId);
    if (record.value === null) return { files: {}, version: record.version };
    const { kind, files } = record.value as { kind?: unknown; files?: unknown };
    const valid =
      kind === KIND &&
      typeof files === 'object' &&
      files !== null &&
      Object.values(files).every((text) => typeof text === 'string');
    if (!valid) {
      throw new StoreError(
        this.directoryId,
        'the metadata under this id is not a memory directory; nothing was changed (use another scope)',
        { code: 'not_memory' },
      );
    }
    return { files: files as MemoryFiles, version: record.version };
  }

  /** The directory's files now (path → text), for the application; a copy. */
  async files(): Promise<Record<string, string>> {
    return { ...(await this.#read()).files };
  }

  /**
   * Runs one command (`{ command: 'view', path: '/memories' }`, …) and resolves with the text the
   * model reads. Refused arguments (a path outside `/memories`, a missing file, an edit that does
   * not match, a write over the limits) are a result with `isError`, never an exception; a store
   * that fails, or other writers that keep winning for `maxAttempts` tries, throw.
   */
  async run(input: unknown): Promise<MemoryResult> {
    for (let attempt = 1; ; attempt++) {
      const { files, version } = await this.#read();
      const outcome = runMemoryCommand(files, input, this.limits);
      if (outcome.files === undefined) return { text: outcome.text, isError: outcome.isError };
      try {
        await this.#store.setMeta(
          this.directoryId,
          { kind: KIND, files: outcome.files },
          { expectedVersion: version },
        );
        return { text: outcome.text, isError: outcome.isError };
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= this.#maxAttempts) throw error;
        await pause(attempt);
      }
    }
  }

  /**
   * Answers a call of the `memory` tool: an Anthropic `tool_use` block, an OpenAI Chat
   * `tool_calls[i]`, a Responses `function_call` item or a Gemini `functionCall` part. Resolves
   * with the tool result in the call's own shape (`is_error` set on Anthropic errors), or `null`
   * when the call is not one of `memory`. Add the result to the conversation as any tool result.
   */
  async handleToolCall(
    call: unknown,
  ): Promise<OpenAIToolMessage | AnthropicUserMessage | GeminiContent | ResponsesItem | null> {
    const read = readToolCall(call, MEMORY_TOOL_NAME);
    if (read === null) return null;
    const result = read.unreadable
      ? { text: `Error: ${(read.input as { error: string }).error}`, isError: true }
      : await this.run(read.input);
    return toolResultMessage(read.format, MEMORY_TOOL_NAME, read.id, result.text, result.isError);
  }

  /** The tool's definition in `format`, as {@link memoryToolDefinition}. */
  definition(format: MessageFormat): ToolDefinition {
    return memoryToolDefinition(format);
  }

  /** Closes the store (only when the tool opened it from a URL, or the caller is done with it). */
  close(): Promise<void> {
    return this.#store.close();
  }
}

/**
 * The memory tool's handler on a store (the public name is the class, `new MemoryTool(options)`;
 * this function stays for contextkit's own modules):
 * `const memory = memoryTool({ store: 'sqlite:./agent.db', scope: { agent: 'support' } })`, then
 * offer `memory.definition(format)` (Anthropic's native `{ type: 'memory_20250818', name:
 * 'memory' }`, or a function tool) and answer each call with `memory.handleToolCall(call)`.
 */
export function memoryTool(options: MemoryToolOptions): MemoryTool {
  return new MemoryTool(options);
}
