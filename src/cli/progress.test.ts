import { describe, expect, it } from 'vitest';
import { ProgressBar, renderBar } from './progress.js';

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, write: (text: string) => writes.push(text) } };
}

describe('renderBar', () => {
  it('fills cells in proportion and shows the percentage and counts', () => {
    expect(renderBar(250, 600, 10)).toBe('[####------]  41% 250/600 msgs');
    expect(renderBar(0, 600, 10)).toBe('[----------]   0% 0/600 msgs');
    expect(renderBar(600, 600, 10, 'turns')).toBe('[##########] 100% 600/600 turns');
  });

  it('is full for an empty job and never overflows', () => {
    expect(renderBar(0, 0, 4)).toBe('[####] 100% 0/0 msgs');
    expect(renderBar(9, 5, 4)).toBe('[####] 100% 9/5 msgs');
  });
});

describe('ProgressBar on a terminal', () => {
  it('redraws in place at most once per interval, and always at the end', () => {
    const { writes, stream } = sink(true);
    let now = 0;
    const bar = new ProgressBar({ total: 100, stream, width: 10, intervalMs: 50, now: () => now });
    bar.update(1);
    now = 10;
    bar.update(2);
    now = 60;
    bar.update(3);
    now = 61;
    bar.update(100);
    expect(writes).toEqual([
      '\r[----------]   1% 1/100 msgs\x1b[K',
      '\r[----------]   3% 3/100 msgs\x1b[K',
      '\r[##########] 100% 100/100 msgs\x1b[K',
    ]);
    bar.done();
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });

  it('wipes the bar to print a line, then draws it again', () => {
    const { writes, stream } = sink(true);
    const out = sink(false);
    const bar = new ProgressBar({ total: 10, stream, width: 4, now: () => 0 });
    bar.update(5);
    bar.log('compaction 1', out.stream);
    expect(writes).toEqual(['\r[##--]  50% 5/10 msgs\x1b[K', '\r\x1b[K', '\r[##--]  50% 5/10 msgs\x1b[K']);
    expect(out.writes).toEqual(['compaction 1\n']);
  });
});

describe('ProgressBar elsewhere', () => {
  it('prints a plain line for each tenth, without control characters', () => {
    const { writes, stream } = sink(false);
    const bar = new ProgressBar({ total: 20, stream, label: 'demo' });
    expect(bar.interactive).toBe(false);
    for (let i = 1; i <= 20; i++) bar.update(i);
    bar.done();
    expect(writes).toHaveLength(10);
    expect(writes[0]).toBe('demo: 2/20 msgs (10%)\n');
    expect(writes[9]).toBe('demo: 20/20 msgs (100%)\n');
    expect(writes.join('')).not.toMatch(/[\r\x1b]/);
  });

  it('prints log lines as they are', () => {
    const { writes, stream } = sink(false);
    const bar = new ProgressBar({ total: 10, stream });
    bar.log('hello');
    expect(writes).toEqual(['hello\n']);
  });
});

describe('ProgressBar.stop', () => {
  it('ends a failed job where it is, without printing completion', () => {
    const tty = sink(true);
    const bar = new ProgressBar({ total: 10, stream: tty.stream, width: 4, now: () => 0 });
    bar.update(3);
    bar.stop();
    bar.done();
    expect(tty.writes).toEqual(['\r[#---]  30% 3/10 msgs\x1b[K', '\r\x1b[K']);
    const plain = sink(false);
    const other = new ProgressBar({ total: 10, stream: plain.stream });
    other.update(5);
    other.stop();
    expect(plain.writes).toEqual(['progress: 5/10 msgs (50%)\n']);
  });
});
