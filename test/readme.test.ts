/**
 * Every TypeScript block of the README typechecks as written, imports included, as a file of a
 * user's app would: `contextkit` and its subpaths resolve through package.json `exports` (to the
 * sources tsup builds each of them from, so no build is needed and a subpath that is not exported
 * does not resolve), other packages from node_modules. Each block is its own module.
 *
 * The library quick start also runs, twice, against a fake Anthropic API on 127.0.0.1: the second
 * run resumes the conversation without adding the system prompt again.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { entryPoints } from '../scripts/docs.js';
import { FileStore } from '../src/stores/file.js';
import { startFakeLLMServer } from './support/fake-llm-server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A fenced TypeScript block, the README line its first line of code is on, and its section. */
interface CodeBlock {
  code: string;
  line: number;
  section?: string;
}

/** The ```ts (or ```typescript) blocks of a Markdown text, in order. */
function typescriptBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let section: string | undefined;
  let open: { fence: string; start: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    if (open) {
      if (text.trimEnd() === open.fence) {
        const block = { code: open.body.join('\n'), line: open.start + 1 };
        blocks.push(section === undefined ? block : { ...block, section });
        open = undefined;
      } else open.body.push(text);
      return;
    }
    const heading = /^#+\s+(.*)$/.exec(text);
    if (heading) section = (heading[1] as string).trim();
    const fence = /^(```+)\s*(ts|typescript)\s*$/.exec(text.trimEnd());
    if (fence) open = { fence: fence[1] as string, start: i + 1, body: [] };
  });
  if (open) throw new Error(`README.md:${open.start}: a TypeScript block is never closed`);
  return blocks;
}

/** `contextkit/…` → its source file, for every public subpath package.json exports. */
async function exportedPaths(): Promise<Record<string, string[]>> {
  const paths: Record<string, string[]> = {};
  for (const entry of await entryPoints()) paths[entry.specifier] = [entry.file];
  return paths;
}

/**
 * Typechecks `blocks` as separate modules at the repository root (in memory: nothing is
 * written), in one program; the problems of each block, as `README.md:LINE: message`.
 */
async function typecheck(blocks: readonly CodeBlock[]): Promise<string[][]> {
  const names = blocks.map((_, i) => join(ROOT, `readme-block-${i}.ts`));
  const files = new Map(names.map((name, i) => [name, blocks[i] as CodeBlock]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    esModuleInterop: true,
    skipLibCheck: true,
    verbatimModuleSyntax: true,
    noEmit: true,
    paths: await exportedPaths(),
  };
  const host = ts.createCompilerHost(options);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  host.readFile = (name) => files.get(name)?.code ?? readFile(name);
  host.getSourceFile = (name, language, onError, create) => {
    const block = files.get(name);
    return block
      ? ts.createSourceFile(name, block.code, language, true, ts.ScriptKind.TS)
      : getSourceFile(name, language, onError, create);
  };
  const program = ts.createProgram(names, options, host);
  return names.map((name, i) => {
    const file = program.getSourceFile(name);
    const block = blocks[i] as CodeBlock;
    const diagnostics = [
      ...(i === 0 ? [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()] : []),
      ...program.getSyntacticDiagnostics(file),
      ...program.getSemanticDiagnostics(file),
    ];
    return diagnostics.map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
      if (d.file?.fileName !== name || d.start === undefined) return text;
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      return `README.md:${block.line + line}: ${text}`;
    });
  });
}

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Snippets that must fail, so a passing check means something: a missing import, a private subpath. */
const BROKEN: CodeBlock[] = [
  { code: "import { ContextManager } from 'contextkit';\nawait openStore('memory:');\n", line: 10 },
  { code: "import { nothing } from 'contextkit/not-exported';\n", line: 20 },
];

/** Runs `file` with `node --import tsx` in `cwd`; resolves with its exit code and output. */
function runNode(
  file: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href, file],
      { cwd, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        done({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          output: stdout + stderr,
        }),
    );
  });
}

describe('the README', () => {
  const blocks = typescriptBlocks(README);
  let problems: string[][] = [];
  beforeAll(async () => {
    problems = await typecheck([...blocks, ...BROKEN]);
  }, 180_000);

  it('finds its TypeScript blocks with the line each starts on and their section', () => {
    const found = typescriptBlocks(
      '# x\n\n```ts\nconst a = 1;\n```\n\n## y\n```sh\nls\n```\n```typescript\nlet b;\n```\n',
    );
    expect(found).toEqual([
      { code: 'const a = 1;', line: 4, section: 'x' },
      { code: 'let b;', line: 12, section: 'y' },
    ]);
    expect(() => typescriptBlocks('```ts\nconst a = 1;\n')).toThrow(
      /README\.md:1: a TypeScript block is never closed/,
    );
  });

  it('reports a snippet that would not compile in an app, at its README line', () => {
    const [missingImport, privatePath] = problems.slice(blocks.length);
    expect(missingImport).toContainEqual(
      expect.stringMatching(/^README\.md:11: Cannot find name 'openStore'/),
    );
    expect(privatePath).toContainEqual(
      expect.stringMatching(/^README\.md:20: Cannot find module 'contextkit\/not-exported'/),
    );
  });

  it('has TypeScript blocks that all typecheck as written, imports included', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const block of blocks) expect(block.code, `README.md:${block.line}`).toMatch(/^import /m);
    expect(problems.slice(0, blocks.length).flat()).toEqual([]);
  });

  it('has a library quick start that resumes its conversation without a second system prompt', async () => {
    const quickStart = blocks.find((b) => b.section === 'Quick start: the library');
    expect(quickStart).toBeDefined();
    // The same code, with the package's specifiers pointed at the sources they are built from.
    const sources = new Map((await entryPoints()).map((e) => [e.specifier, pathToFileURL(e.file).href]));
    const code = (quickStart as CodeBlock).code.replace(
      /from '(contextkit(?:\/[\w-/]+)?)'/g,
      (whole, specifier: string) => (sources.has(specifier) ? `from '${sources.get(specifier)}'` : whole),
    );
    expect(code).not.toMatch(/from 'contextkit/);
    const dir = await mkdtemp(join(tmpdir(), 'contextkit-readme-'));
    const server = await startFakeLLMServer({ provider: 'anthropic', apiKey: 'test-key' });
    try {
      const file = join(dir, 'quick-start.mts');
      await writeFile(file, code);
      const env = { ANTHROPIC_BASE_URL: server.baseURL, ANTHROPIC_API_KEY: 'test-key' };
      for (let run = 1; run <= 2; run++) {
        const { code: exit, output } = await runNode(file, dir, env);
        expect(exit, output).toBe(0);
      }
      expect(server.requests).toHaveLength(2);
      for (const request of server.requests) expect(request.problems).toEqual([]);
      const second = server.requests[1]?.body as { system?: unknown; messages: Array<{ role: string }> };
      expect(second.system).toBe('You are a careful coding agent.');
      expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);

      const store = new FileStore(join(dir, '.contextkit'));
      const stored = (await store.read('run-42')).map((e) => e.message.role);
      await store.close();
      expect(stored).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
