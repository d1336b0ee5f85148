import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { longSessionMessages } from '../../test/support/arbitraries.js';
import type { Message } from '../messages/types.js';
import { escapeHtml } from './escape-html.js';
import { renderReportHtml } from './html.js';
import { type ReplayReport, replayConversation } from './replay.js';
import { REPORT_SCRIPT } from './report-script.js';
import { REPORT_STYLE } from './report-style.js';
import { scriptJson } from './script-json.js';

const PAYLOAD = '</script><script>alert(1)</script>';
const IMG = '<img src=x onerror="alert(2)">';

/** The text of the `<script type="application/json">` element, parsed. */
function embeddedData(html: string): unknown {
  const match = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error('no report data in the page');
  return JSON.parse(match[1] as string);
}

/** The page with the embedded data taken out: what the browser parses as markup. */
function markup(html: string): string {
  return html.replace(/<script type="application\/json" id="report-data">[\s\S]*?<\/script>/, '');
}

let report: ReplayReport;
let hostile: ReplayReport;

beforeAll(async () => {
  const messages: Message[] = longSessionMessages(300, 'openai', 7);
  messages.splice(3, 0, { role: 'user', content: `look at ${PAYLOAD} and ${IMG} in /srv/${PAYLOAD}/x.ts` });
  report = await replayConversation(messages, { maxTokens: 6_000, source: 'session.json' });
  // Every string a report carries from the conversation or the command line, made hostile.
  hostile = structuredClone(report);
  hostile.source = `run ${PAYLOAD}.json`;
  hostile.model = `gpt-4o${IMG}`;
  hostile.warnings = [`warning ${PAYLOAD}`];
  hostile.messages[1]!.text = `user ${PAYLOAD}`;
  hostile.messages[2]!.tools = [`tool${PAYLOAD}`];
  const receipt = hostile.compactions[0]!.receipt;
  receipt.facts.values = [...receipt.facts.values, `fact ${PAYLOAD}`, `fact ${IMG}`];
  receipt.facts.kept += 2;
  receipt.cleared = [...receipt.cleared, { seq: 1, callSeq: 0, tool: `grep${PAYLOAD}`, tokens: 5 }];
  receipt.repairs = [{ kind: 'orphan_result', seq: 2, detail: `detail ${PAYLOAD}` }];
  receipt.summary = { fromSeq: 1, toSeq: 2, tools: `llm${PAYLOAD}`, chars: 10 };
  receipt.summarized = [...receipt.summarized, 1, 2];
});

describe('renderReportHtml', () => {
  it('is one page that loads nothing: no links, sources or imports, and a policy that forbids them', () => {
    const html = renderReportHtml(report);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    // Text is escaped, so every `<` left in the markup opens a real tag.
    const tags = markup(html).match(/<[a-zA-Z][^>]*>/g) ?? [];
    expect(tags.length).toBeGreaterThan(100);
    for (const tag of tags) {
      const names = tag.replace(/"[^"]*"/g, '""');
      expect(names).not.toMatch(/^<(link|img|iframe|object|embed|base|form)\b/i);
      expect(names).not.toMatch(/\s(src|href|action|srcset)\s*=/i);
    }
    expect(REPORT_STYLE).not.toMatch(/@import|url\(/i);
    expect(REPORT_SCRIPT).not.toMatch(/fetch\(|XMLHttpRequest|import\(|\.src\s*=/);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '';
    expect(csp).toContain("default-src 'none'");
    const sha = (text: string) => createHash('sha256').update(text).digest('base64');
    expect(csp).toContain(`script-src 'sha256-${sha(REPORT_SCRIPT)}'`);
    expect(csp).toContain(`style-src 'sha256-${sha(REPORT_STYLE)}'`);
    // The hashes are of exactly what the page holds.
    expect(html).toContain(`<script>${REPORT_SCRIPT}</script>`);
    expect(html).toContain(`<style>${REPORT_STYLE}</style>`);
  });

  it('embeds the report data so the script reads back exactly the report', () => {
    const html = renderReportHtml(report);
    expect(embeddedData(html)).toEqual(JSON.parse(JSON.stringify(report)));
  });

  it('lists every compaction with its receipt, in order, linked by id', () => {
    const html = renderReportHtml(report);
    expect(report.compactions.length).toBeGreaterThan(1);
    const ids = [...html.matchAll(/<details class="compaction" id="compaction-(\d+)" data-number="(\d+)"/g)];
    expect(ids.map((m) => Number(m[1]))).toEqual(report.compactions.map((c) => c.number));
    const first = report.compactions[0]!.receipt;
    expect(html).toContain(`Compactions · ${report.compactions.length}`);
    if (first.cleared.length > 0)
      expect(html).toContain(`<code>${escapeHtml(first.cleared[0]!.tool)}</code>`);
    for (const value of first.facts.values.slice(0, 5)) expect(html).toContain(escapeHtml(value));
    expect(html).toContain(
      `${first.tokensBefore.toLocaleString('en-US')} → ${first.tokensAfter.toLocaleString('en-US')} tokens`,
    );
  });

  it('shows the totals as figures', () => {
    const html = renderReportHtml(report);
    const t = report.totals;
    expect(html).toContain(
      `<div class="label">Model calls</div><div class="value">${t.turns.toLocaleString('en-US')}</div>`,
    );
    expect(html).toContain(`<div class="label">Compactions</div><div class="value">${t.compactions}</div>`);
    expect(html).toContain(`${Math.round(t.savedShare * 100)}% less than sending the whole history`);
  });

  it('says so when no compaction was needed', async () => {
    const quiet = await replayConversation(longSessionMessages(40, 'openai', 1), { model: 'gpt-4o' });
    const html = renderReportHtml(quiet);
    expect(html).toContain('No compaction was needed');
    expect(html).not.toContain('<details class="compaction"');
  });

  it('escapes every piece of conversation text: no message can add an element or a script', () => {
    const html = renderReportHtml(hostile);
    expect(html).not.toContain(PAYLOAD);
    expect(html).not.toContain(IMG);
    expect(html).not.toContain('<script>alert');
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html.match(/<img\b/gi)).toBeNull();
    expect(markup(html)).toContain(escapeHtml(`fact ${PAYLOAD}`));
    expect(markup(html)).toContain(escapeHtml(`run ${PAYLOAD}.json`));
    expect(markup(html)).toContain(escapeHtml(`grep${PAYLOAD}`));
    expect(markup(html)).toContain(escapeHtml(`detail ${PAYLOAD}`));
    expect(markup(html)).toContain(escapeHtml(`warning ${PAYLOAD}`));
    // Previews go into attributes, quoted and escaped.
    const seq1 = hostile.messages[1]!;
    expect(markup(html)).toContain(escapeHtml(`#1 · ${seq1.role} · ${seq1.tokens} tokens — user ${PAYLOAD}`));
    // The data element holds it all and gives it back intact.
    expect(embeddedData(html)).toEqual(JSON.parse(JSON.stringify(hostile)));
  });
});

describe('escapeHtml', () => {
  it('escapes the characters that open markup or end an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
  });

  it('leaves no markup character in any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(escapeHtml(s)).not.toMatch(/[<>"']/);
      }),
    );
  });
});

describe('scriptJson', () => {
  it('round-trips any JSON value and never contains a character that could end the element', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('</script>', '<!--', '\u2028', '&'), (value, nasty) => {
        const wrapped = { value, nasty: `${nasty}${JSON.stringify(value)}` };
        const text = scriptJson(wrapped);
        expect(text).not.toMatch(/[<>&\u2028\u2029]/);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(wrapped)));
      }),
    );
  });
});

describe('the report says what its figures are (issue 23, item 14)', () => {
  it('gives the billed-input chart a unit and a plain-text chat a readable format', async () => {
    const chat: Message[] = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i}: ${'we talked about trains and pastries '.repeat(8)}`,
    }));
    const html = renderReportHtml(await replayConversation(chat, { maxTokens: 2_000, source: 'chat.json' }));
    expect(html).toContain('<span>Format <b>plain text (either format)</b></span>');
    expect(html).toMatch(/Billed input per model call, in tokens/);
    expect(html).toMatch(/<text class="unit"[^>]*>tokens<\/text>/);
  });
});
