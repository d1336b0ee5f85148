import { defineConfig } from 'tsup';

// One entry per public subpath in package.json "exports"; drivers stay separate so the core
// never pulls in an optional peer dependency.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    parts: 'src/parts.ts',
    'stores/memory': 'src/stores/memory.ts',
    'stores/file': 'src/stores/file.ts',
    'stores/sqlite': 'src/stores/sqlite.ts',
    'stores/redis': 'src/stores/redis.ts',
    'stores/postgres': 'src/stores/postgres.ts',
    'ai-sdk': 'src/integrations/ai-sdk.ts',
    'openai-agents': 'src/integrations/openai-agents.ts',
    langchain: 'src/integrations/langchain.ts',
    'cli/main': 'src/cli/main.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  // Optional peer dependencies: imported by the driver and integration entries only, never bundled.
  external: [
    'better-sqlite3',
    'redis',
    'pg',
    'ai',
    '@openai/agents',
    '@langchain/core',
    '@langchain/core/chat_history',
    '@langchain/core/messages',
    '@langchain/core/runnables',
  ],
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});
