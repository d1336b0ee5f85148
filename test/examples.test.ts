import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs an example as a user would (`node --import tsx examples/NAME.ts`) and gives its outcome. */
function runExample(name: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `examples/${name}.ts`],
      { cwd: root, timeout: 90_000, env: { ...process.env, OPENAI_API_KEY: '', NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('examples run offline against a fake model on 127.0.0.1', () => {
  it.each([
    ['ai-sdk', /16 model calls, 0 refused/],
    ['openai-agents', /12 model calls, 0 refused/],
    ['langchain', /12 model calls, 0 refused/],
  ])('examples/%s.ts exits 0 and reports what it did', async (name, closing) => {
    const { code, stdout, stderr } = await runExample(name);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(closing);
  });
});
