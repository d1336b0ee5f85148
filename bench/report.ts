/**
 * A benchmark's report: headings, notes and tables, printed to the terminal as aligned text and
 * written as markdown to `bench/results/NAME.md`, so the console and the file always say the same.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Block =
  | { kind: 'heading'; text: string }
  | { kind: 'note'; text: string }
  | { kind: 'table'; headers: string[]; rows: string[][] }
  | { kind: 'chart'; alt: string; file: string; svg: string };

/** Where reports are written: beside the benchmarks, whatever the working directory. */
export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'results');

/** Collects a report's blocks in order; rendered only at the end so text and markdown match. */
export class Report {
  private readonly blocks: Block[] = [];

  constructor(readonly title: string) {}

  heading(text: string): this {
    this.blocks.push({ kind: 'heading', text });
    return this;
  }

  note(text: string): this {
    this.blocks.push({ kind: 'note', text });
    return this;
  }

  /** A table; the first column is left-aligned, the rest (figures) right-aligned. */
  table(headers: string[], rows: string[][]): this {
    this.blocks.push({ kind: 'table', headers, rows });
    return this;
  }

  /**
   * A chart, drawn as SVG: written beside the report as `<file>` and shown in the markdown as an
   * image; the terminal gets its path.
   */
  chart(alt: string, file: string, svg: string): this {
    this.blocks.push({ kind: 'chart', alt, file, svg });
    return this;
  }

  /** Aligned plain text for the terminal. */
  toText(): string {
    const out: string[] = [this.title, '='.repeat(this.title.length), ''];
    for (const block of this.blocks) {
      if (block.kind === 'heading') out.push(block.text, '-'.repeat(block.text.length));
      else if (block.kind === 'note') out.push(block.text);
      else if (block.kind === 'chart') out.push(`[chart: ${join(RESULTS_DIR, block.file)}]`);
      else out.push(...textTable(block.headers, block.rows));
      out.push('');
    }
    return out.join('\n');
  }

  /** GitHub-flavoured markdown for `bench/results/`. */
  toMarkdown(): string {
    const out: string[] = [`# ${this.title}`, ''];
    for (const block of this.blocks) {
      if (block.kind === 'heading') out.push(`## ${block.text}`);
      else if (block.kind === 'note') out.push(block.text);
      else if (block.kind === 'chart') out.push(`![${block.alt}](${block.file})`);
      else out.push(...markdownTable(block.headers, block.rows));
      out.push('');
    }
    return out.join('\n');
  }

  /**
   * Writes the markdown to `bench/results/<name>.md` (and its charts beside it), replacing the
   * previous run's; with `keepOtherSections`, a run of some sections only replaces those and keeps
   * the previous run's other `## ` sections (in their place), so a partial run does not erase them.
   */
  write(name: string, options: { keepOtherSections?: boolean } = {}): string {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const path = join(RESULTS_DIR, `${name}.md`);
    for (const block of this.blocks) {
      if (block.kind === 'chart') writeFileSync(join(RESULTS_DIR, block.file), block.svg);
    }
    const fresh = this.toMarkdown();
    const previous = options.keepOtherSections && existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    writeFileSync(path, previous === undefined ? fresh : mergeSections(previous, fresh));
    return path;
  }
}

function textTable(headers: readonly string[], rows: readonly string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

function markdownTable(headers: readonly string[], rows: readonly string[][]): string[] {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [
    line(headers),
    `|${headers.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map(line),
  ];
}

/** Milliseconds with precision that suits their size (µs below 1 ms). */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1) return `${(ms * 1000).toFixed(ms < 0.01 ? 2 : ms < 0.1 ? 1 : 0)} µs`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** A ratio as `123×` (two significant decimals below 10). */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return '–';
  return ratio >= 10 ? `${Math.round(ratio).toLocaleString('en-US')}×` : `${ratio.toFixed(2)}×`;
}

/** Bytes in the unit that keeps three significant figures or so. */
export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (abs >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** A whole number with thousands separators. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** `PASS` or `MISS`, so a missed goal stands out in the table. */
export function verdict(pass: boolean): string {
  return pass ? 'PASS' : 'MISS';
}

/** Splits markdown into its text before the first `## ` heading and its `## ` sections, in order. */
function sections(markdown: string): { head: string; parts: { heading: string; text: string }[] } {
  const chunks = markdown.split(/^(?=## )/m);
  const head = chunks[0]?.startsWith('## ') ? '' : (chunks.shift() ?? '');
  return {
    head,
    parts: chunks.map((text) => ({ heading: text.slice(0, text.indexOf('\n') >>> 0).trim(), text })),
  };
}

/** The previous report with the sections the fresh one has replaced by its own (new ones at the end). */
function mergeSections(previous: string, fresh: string): string {
  const old = sections(previous);
  const next = sections(fresh);
  const byHeading = new Map(next.parts.map((p) => [p.heading, p.text]));
  const out = old.parts.map((p) => {
    const replaced = byHeading.get(p.heading);
    byHeading.delete(p.heading);
    return replaced ?? p.text;
  });
  const tail = (t: string) => (t.endsWith('\n\n') ? t : `${t.replace(/\n*$/, '')}\n\n`);
  return [next.head, ...out, ...byHeading.values()].map(tail).join('').replace(/\n+$/, '\n');
}
