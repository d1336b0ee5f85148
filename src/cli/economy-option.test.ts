import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, REPO_ROOT, runCli } from '../../test/support/run-cli.js';
import { economyArgument } from './number-option.js';

const SESSION = join(REPO_ROOT, 'test/fixtures/cli/openai-session.json');
const RUNS = join(REPO_ROOT, 'test/fixtures/eval/three-runs.json');

describe('--economy on compact, replay and eval (issue 34, item 3)', () => {
  it('reads a preset or a share of the budget, and refuses anything else', () => {
    expect(economyArgument('lean')).toBe('lean');
    expect(economyArgument(' Minimal ')).toBe('minimal');
    expect(economyArgument('0.3')).toBe(0.3);
    expect(economyArgument('30%')).toBeCloseTo(0.3);
    for (const bad of ['0', '1', '1.5', '-0.2', 'cheap', '', '%']) {
      expect(() => economyArgument(bad)).toThrow(/rich, balanced, lean, minimal, or the share of the budget/);
    }
  });

  it('compact: a leaner setting sends a smaller view of the same conversation', async () => {
    const sizes: number[] = [];
    for (const economy of ['rich', 'minimal']) {
      const run = await runCli(['compact', SESSION, '--max-tokens', '2000', '--economy', economy, '--json']);
      expect(run.code).toBe(0);
      sizes.push((JSON.parse(run.stdout) as { usage: { tokens: number } }).usage.tokens);
    }
    expect(sizes[1]).toBeLessThan(sizes[0]!);
    const bad = await runCli(['compact', SESSION, '--max-tokens', '2000', '--economy', 'cheap']);
    expectOneLineError(bad, 2, /--economy.*rich, balanced, lean, minimal/);
  });

  it('replay and eval take it too', async () => {
    const replay = await runCli([
      'replay',
      SESSION,
      '--max-tokens',
      '2000',
      '--economy',
      'lean',
      '--json',
      '-',
    ]);
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toHaveProperty('turns');
    const evaluated = await runCli(['eval', RUNS, '--budget-ratio', '0.3', '--economy', '0.2', '--json']);
    expect(evaluated.code).toBe(0);
    expect(JSON.parse(evaluated.stdout)).toHaveProperty('summary');
  });
});
