/**
 * The replay report as one self-contained HTML page: styles, script and data inline, the chart
 * drawn as SVG in the page, no request to any server (a Content-Security-Policy with `default-src
 * 'none'` makes sure of it, and lets only this page's own script and stylesheet run). The totals
 * and the compaction receipts are written here as HTML, so they read without JavaScript; the
 * script draws the chart from the embedded data and links its markers to the receipts.
 */

import { createHash } from 'node:crypto';
import type { CompactionReceipt } from '../events.js';
import { formatInt } from '../format-number.js';
import { conversationFormatLabel } from '../wire/detect.js';
import { escapeHtml } from './escape-html.js';
import type {
  MessagePreview,
  ReplayCompaction,
  ReplayReport,
  ReplayServerCompaction,
  ReplayTurn,
} from './replay.js';
import { REPORT_SCRIPT } from './report-script.js';
import { REPORT_STYLE } from './report-style.js';
import { scriptJson } from './script-json.js';
import { USABLE_SHARE } from './view-keeps.js';

/** What the page says about itself. */
export interface ReportHtmlOptions {
  /** The contextkit version named in the footer. */
  version?: string;
}

const MAX_ROWS = 200;
const MAX_CHIPS = 80;

const e = escapeHtml;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}

function percent(x: number): string {
  if (!Number.isFinite(x)) return '–';
  const p = x * 100;
  return `${p >= 10 || p === 0 ? Math.round(p) : p.toFixed(1)}%`;
}

/** `12.3k`, `1.4M`: for the big figures of the totals. */
function shortNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e6) return `${(n / 1e6).toFixed(abs >= 1e7 ? 0 : 1).replace(/\.0$/, '')}M`;
  if (abs >= 1e4) return `${(n / 1e3).toFixed(abs >= 1e5 ? 0 : 1).replace(/\.0$/, '')}k`;
  return formatInt(n);
}

function duration(ms: number): string {
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${formatInt(n)} ${n === 1 ? word : many}`;
}

/** Sorted seqs as runs of consecutive numbers. */
function seqRuns(seqs: readonly number[]): Array<[number, number]> {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const runs: Array<[number, number]> = [];
  for (const s of sorted) {
    const last = runs.at(-1);
    if (last && s === last[1] + 1) last[1] = s;
    else runs.push([s, s]);
  }
  return runs;
}

class Previews {
  private readonly bySeq = new Map<number, MessagePreview>();
  constructor(list: readonly MessagePreview[]) {
    for (const p of list) this.bySeq.set(p.seq, p);
  }

  /** `#41 · tool · 812 tokens — the first words`, for a chip's tooltip. */
  describe(seq: number): string {
    const p = this.bySeq.get(seq);
    if (!p) return `#${seq}`;
    const tools = p.tools ? ` → ${p.tools.join(', ')}` : '';
    const text = p.text ? ` — ${p.text}` : '';
    return `#${seq} · ${p.role}${tools} · ${formatInt(p.tokens)} tokens${text}`;
  }

  tokens(from: number, to: number): number {
    let n = 0;
    for (let s = from; s <= to; s++) n += this.bySeq.get(s)?.tokens ?? 0;
    return n;
  }
}

function chips(seqs: readonly number[], previews: Previews): string {
  const runs = seqRuns(seqs);
  const shown = runs.slice(0, MAX_CHIPS).map(([from, to]) => {
    if (from === to) return `<span class="chip" title="${e(previews.describe(from))}">#${from}</span>`;
    const title = `#${from}–${to}: ${plural(to - from + 1, 'message')}, ${formatInt(previews.tokens(from, to))} tokens\n${previews.describe(from)}\n…\n${previews.describe(to)}`;
    return `<span class="chip" title="${e(title)}">#${from}–${to}</span>`;
  });
  const more =
    runs.length > MAX_CHIPS ? `<span class="pill">+${plural(runs.length - MAX_CHIPS, 'range')}</span>` : '';
  return `<div class="chips">${shown.join('')}${more}</div>`;
}

function moreRow(total: number, columns: number): string {
  return total > MAX_ROWS
    ? `<tr><td colspan="${columns}" class="muted">… and ${formatInt(total - MAX_ROWS)} more</td></tr>`
    : '';
}

const REASONS: Readonly<Record<CompactionReceipt['reason'], string>> = {
  threshold: 'the view grew past the trigger',
  forced: 'asked for with compact({ force: true })',
  over_budget: 'the view was over the budget',
  clearing: 'the clearing trigger for old tool results was crossed',
  cache_expired: 'the prompt cache had expired (idle past its TTL) with a compaction due soon',
  requested: 'the model called the compact tool',
};

function receiptBody(r: CompactionReceipt, previews: Previews): string {
  const parts: string[] = [];
  const saved = r.tokensBefore > 0 ? 1 - r.tokensAfter / r.tokensBefore : 0;
  parts.push(`<dl>
<div><dt>Reason</dt><dd>${e(r.reason.replace(/_/g, ' '))}: ${e(REASONS[r.reason] ?? '')}</dd></div>
<div><dt>Tokens in the view</dt><dd>${formatInt(r.tokensBefore)} → ${formatInt(r.tokensAfter)} <span class="muted">(−${percent(saved)})</span></dd></div>
<div><dt>Messages in the view</dt><dd>${formatInt(r.messagesBefore)} → ${formatInt(r.messagesAfter)}</dd></div>
<div><dt>Budget · trigger · target</dt><dd>${formatInt(r.budget)} · ${formatInt(r.trigger)} · ${formatInt(r.target)}</dd></div>
<div><dt>Counts</dt><dd>${e(r.counter)}${r.exact ? ' (exact)' : ' (estimate)'}</dd></div>
<div><dt>Took</dt><dd>${e(duration(r.durationMs))}</dd></div>
</dl>`);
  if (r.atFloor) {
    parts.push(
      `<p class="muted">At the floor: what must be kept (system, pinned and critical messages, the latest user message, the tool exchange in progress) is above the target, so the view stops there.</p>`,
    );
  }
  if (r.cleared.length > 0) {
    const byTool = new Map<string, { seqs: number[]; tokens: number }>();
    for (const c of r.cleared) {
      const t = byTool.get(c.tool) ?? { seqs: [], tokens: 0 };
      t.seqs.push(c.seq);
      t.tokens += c.tokens;
      byTool.set(c.tool, t);
    }
    const tools = [...byTool].sort((a, b) => b[1].tokens - a[1].tokens);
    const total = r.cleared.reduce((n, c) => n + c.tokens, 0);
    const rows = tools
      .slice(0, MAX_ROWS)
      .map(
        ([tool, t]) =>
          `<tr><td><code>${e(tool)}</code></td><td class="r">${formatInt(t.seqs.length)}</td><td class="r">${formatInt(t.tokens)}</td><td>${chips(t.seqs, previews)}</td></tr>`,
      );
    parts.push(`<section><h3>Cleared tool results · ${plural(r.cleared.length, 'result')}, ${formatInt(total)} tokens</h3>
<table class="rows"><thead><tr><th>Tool</th><th class="r">Results</th><th class="r">Tokens</th><th>Messages</th></tr></thead><tbody>${rows.join('')}${moreRow(tools.length, 4)}</tbody></table></section>`);
  }
  if (r.summarized.length > 0) {
    const s = r.summary;
    const what = s
      ? `<p>One summary of #${s.fromSeq}–${s.toSeq}, written by <code>${e(s.tools)}</code> (${formatInt(s.chars)} characters), stands where these messages stood.</p>`
      : '';
    parts.push(
      `<section><h3>Summarized · ${plural(r.summarized.length, 'message')}</h3>${what}${chips(r.summarized, previews)}</section>`,
    );
  }
  if (r.dropped.length > 0) {
    parts.push(
      `<section><h3>Dropped · ${plural(r.dropped.length, 'message')} <span class="muted">(their facts kept)</span></h3>${chips(r.dropped, previews)}</section>`,
    );
  }
  if (r.truncated.length > 0) {
    const rows = r.truncated
      .slice(0, MAX_ROWS)
      .map(
        (t) =>
          `<tr><td><span class="chip" title="${e(previews.describe(t.seq))}">#${t.seq}</span></td><td class="r">−${formatInt(t.removedChars)}</td></tr>`,
      );
    parts.push(`<section><h3>Truncated · ${plural(r.truncated.length, 'message')} <span class="muted">(middle cut)</span></h3>
<table class="rows"><thead><tr><th>Message</th><th class="r">Characters removed</th></tr></thead><tbody>${rows.join('')}${moreRow(r.truncated.length, 2)}</tbody></table></section>`);
  }
  const f = r.facts;
  if (f.kept > 0 || f.added > 0 || f.omitted > 0) {
    const values = f.values
      .slice(0, MAX_ROWS)
      .map((v) => `<li><code title="${e(v)}">${e(v)}</code></li>`)
      .join('');
    const more =
      f.values.length > MAX_ROWS
        ? `<li class="muted">+${formatInt(f.values.length - MAX_ROWS)} more</li>`
        : '';
    const omitted = f.omitted > 0 ? `, ${formatInt(f.omitted)} left out for room` : '';
    parts.push(
      `<section><h3>Facts kept in the view · ${formatInt(f.kept)} (${formatInt(f.added)} new${omitted})</h3><ul class="facts">${values}${more}</ul></section>`,
    );
  }
  if (r.repairs.length > 0) {
    const rows = r.repairs
      .slice(0, MAX_ROWS)
      .map(
        (p) =>
          `<tr><td>${e(p.kind.replace(/_/g, ' '))}</td><td><span class="chip" title="${e(previews.describe(p.seq))}">#${p.seq}</span></td><td>${e(p.detail)}</td></tr>`,
      );
    parts.push(`<section><h3>Repaired in the view · ${formatInt(r.repairs.length)}</h3>
<table class="rows"><thead><tr><th>Repair</th><th>Message</th><th>Detail</th></tr></thead><tbody>${rows.join('')}${moreRow(r.repairs.length, 3)}</tbody></table></section>`);
  }
  if (r.cleared.length + r.summarized.length + r.dropped.length + r.truncated.length === 0) {
    parts.push('<p class="muted">Nothing more could be removed.</p>');
  }
  return `<div class="receipt">${parts.join('\n')}</div>`;
}

/** Tokens before and after on one bar scaled to the budget. */
function tokenBar(r: CompactionReceipt): string {
  const scale = Math.max(r.budget, r.tokensBefore);
  const after = (r.tokensAfter / scale) * 100;
  const before = (r.tokensBefore / scale) * 100;
  return (
    `<svg class="bar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true" width="100%" height="6">` +
    `<rect class="bar-bg" x="0" y="0" width="100" height="6" rx="3"/>` +
    `<rect class="bar-cut" x="${after.toFixed(2)}" y="0" width="${Math.max(0, before - after).toFixed(2)}" height="6"/>` +
    `<rect class="bar-after" x="0" y="0" width="${after.toFixed(2)}" height="6" rx="3"/></svg>`
  );
}

/** One server compaction in the report's sentence: when, where, and what the provider wrote. */
function serverCompactionItem(c: ReplayServerCompaction): string {
  // A summary the provider shows (Anthropic's block) has a length; an encrypted one (OpenAI's item) none.
  const what =
    c.summaryChars === undefined
      ? 'an encrypted compaction item'
      : `a ${formatInt(c.summaryChars)}-character summary`;
  return `after call ${formatInt(c.turn)} (seq ${formatInt(c.seq)}, ${what})`;
}

function compactionItem(c: ReplayCompaction, turn: ReplayTurn | undefined, previews: Previews): string {
  const r = c.receipt;
  const saved = r.tokensBefore > 0 ? 1 - r.tokensAfter / r.tokensBefore : 0;
  const pills = [`<span class="pill reason">${e(r.reason.replace(/_/g, ' '))}</span>`];
  const counts: Array<[number, string]> = [
    [r.cleared.length, 'cleared'],
    [r.summarized.length, 'summarized'],
    [r.dropped.length, 'dropped'],
    [r.truncated.length, 'truncated'],
  ];
  for (const [n, word] of counts)
    if (n > 0) pills.push(`<span class="pill strong">${word} ${formatInt(n)}</span>`);
  if (r.facts.kept > 0) pills.push(`<span class="pill">${plural(r.facts.kept, 'fact')}</span>`);
  if (r.atFloor) pills.push('<span class="pill">at floor</span>');
  const before = turn ? `<small>before message #${turn.beforeSeq}</small>` : '';
  return `<li><details class="compaction" id="compaction-${c.number}" data-number="${c.number}" data-turn="${c.turn}">
<summary><span class="badge-num">${c.number}</span><span class="turn">Call ${formatInt(c.turn)}${before}</span>
<span class="tokens-cell"><span class="num">${formatInt(r.tokensBefore)} → ${formatInt(r.tokensAfter)} tokens <span class="muted">(−${percent(saved)})</span></span>${tokenBar(r)}</span>
<span class="actions">${pills.join('')}</span><span class="chev" aria-hidden="true">›</span></summary>
${receiptBody(r, previews)}
</details></li>`;
}

function stat(label: string, value: string, sub: string, tone = ''): string {
  return `<div class="card stat${tone ? ` ${tone}` : ''}"><div class="label">${e(label)}</div><div class="value">${value}</div><div class="sub">${sub}</div></div>`;
}

function totalsCards(report: ReplayReport): string {
  const t = report.totals;
  const budget = report.budget.tokens;
  const cards: string[] = [];
  cards.push(stat('Model calls', formatInt(t.turns), `${plural(t.messages, 'message')} replayed`));
  const every =
    t.compactions > 0 ? `one every ${formatInt(Math.round(t.turns / t.compactions))} calls` : 'none needed';
  const overflow = t.overflows > 0 ? ` · ${plural(t.overflows, 'request')} over budget` : '';
  const server =
    t.serverCompactions > 0 ? ` · ${formatInt(t.serverCompactions)} by the provider's server` : '';
  cards.push(
    stat(
      'Compactions',
      formatInt(t.compactions),
      `${every}${server}${overflow}`,
      t.overflows > 0 ? 'warn' : '',
    ),
  );
  cards.push(
    stat(
      'Tokens sent',
      `${e(shortNumber(t.sentTokens))}<small>of ${e(shortNumber(t.storedTokens))}</small>`,
      t.compactions === 0
        ? 'the whole history, every call: it fit'
        : `${percent(t.savedShare)} less than sending the whole history every call`,
      t.savedShare > 0.05 ? 'good' : '',
    ),
  );
  cards.push(
    stat(
      'Average request',
      formatInt(t.averageSent),
      `${percent(t.averageSent / budget)} of the ${formatInt(budget)} budget · peak ${percent(t.peakUsage)}`,
    ),
  );
  const compared = t.turns > 1 ? Math.max(0, t.turns - 1 - t.overflows) : 0;
  cards.push(
    stat(
      'Cache prefix kept',
      compared > 0 ? percent(t.cacheStableShare) : '–',
      `${formatInt(t.cacheStableTurns)} of ${formatInt(compared)} calls extend the previous request; ` +
        `${percent(t.cachedPrefixShare)} of sent tokens cacheable` +
        (t.cacheBreaks > 0 ? ` · ${plural(t.cacheBreaks, 'break')} without compaction` : ''),
      t.cacheBreaks > 0 ? 'warn' : compared > 0 && t.cacheStableShare >= 0.9 ? 'good' : '',
    ),
  );
  cards.push(
    stat(
      'Replay time',
      e(duration(t.durationMs)),
      `${t.compactions > 0 ? `compaction ${e(duration(t.compactionMs))} in all` : 'no compaction'}${t.turns > 0 ? `, ${e(duration(t.durationMs / t.turns))} a call` : ''}`,
    ),
  );
  return `<section class="totals" aria-label="Totals">${cards.join('\n')}</section>`;
}

function usd(n: number | undefined): string {
  return n === undefined ? '–' : `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;
}

/**
 * Input billed per model call (cached, written, fresh tokens stacked; price in the tooltip) as
 * an SVG drawn here, no script needed, and the session's totals beside a sliding window at the
 * same budget and no compaction. Every string in it is escaped; colours come from the style sheet.
 */
function costSection(report: ReplayReport): string {
  const cost = report.cost;
  const turns = report.turns;
  const W = 960;
  const H = 220;
  const ml = 56;
  const mt = 10;
  const pw = W - ml - 10;
  const ph = H - mt - 30;
  const top = Math.max(1, ...turns.map((t) => (t.cost ? t.cost.cached + t.cost.written + t.cost.fresh : 0)));
  const bw = pw / Math.max(1, turns.length);
  const bars: string[] = [];
  turns.forEach((t, i) => {
    if (!t.cost) return;
    let y = mt + ph;
    const x = (ml + i * bw).toFixed(2);
    const title = `call ${t.turn}: ${formatInt(t.cost.cached)} cached, ${formatInt(t.cost.written)} written, ${formatInt(t.cost.fresh)} fresh${t.cost.price !== undefined ? `, ${usd(t.cost.price)}` : ''}`;
    const parts: Array<[string, number]> = [
      ['cost-cached', t.cost.cached],
      ['cost-written', t.cost.written],
      ['cost-fresh', t.cost.fresh],
    ];
    const rects = parts
      .filter(([, v]) => v > 0)
      .map(([cls, v]) => {
        const h = (v / top) * ph;
        y -= h;
        return `<rect class="${cls}" x="${x}" y="${y.toFixed(2)}" width="${Math.max(0.5, bw - 0.3).toFixed(2)}" height="${h.toFixed(2)}"/>`;
      })
      .join('');
    bars.push(`<g><title>${e(title)}</title>${rects}</g>`);
  });
  const axis = `<g class="axis"><line x1="${ml}" x2="${ml + pw}" y1="${mt + ph}" y2="${mt + ph}"/><text x="${ml - 8}" y="${mt + 4}" text-anchor="end">${e(shortNumber(top))}</text><text class="unit" x="${ml - 8}" y="${mt + 16}" text-anchor="end">tokens</text><text x="${ml - 8}" y="${mt + ph}" text-anchor="end">0</text><text x="${ml + pw / 2}" y="${H - 6}" text-anchor="middle">model call</text></g>`;
  const chart = `<svg class="cost-chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="Input tokens per model call (tokens): cached, written, fresh">${axis}${bars.join('')}</svg>`;
  const rows = cost.alternatives
    .map((a) => {
      const t = a.totals;
      const read = t.inputTokens > 0 ? percent(t.cachedTokens / t.inputTokens) : '–';
      const cells = a.fits
        ? `<td>${formatInt(t.inputTokens)}</td><td>${formatInt(t.cachedTokens)} (${read})</td><td>${formatInt(t.writtenTokens)}</td><td>${formatInt(t.freshTokens)}</td><td>${usd(t.price)}</td>`
        : '<td colspan="5">–</td>';
      // What was kept stands beside the price, so a policy cannot look cheap by forgetting.
      const k = a.kept;
      const of = (part: number, whole: number) => (whole > 0 ? percent(part / whole) : '–');
      const kept = `<td>${of(k.accepted, k.requests)}</td><td>${of(k.taskInView, k.accepted)}</td><td>${of(k.latestUserInView, k.accepted)}</td><td>${of(k.factsKept, k.factsLeftOut)}</td>`;
      const mark = a.unusable ? ` <strong class="unusable">not ranked: ${e(a.unusable)}</strong>` : '';
      return `<tr><th scope="row">${e(a.name)}</th>${cells}${kept}<td class="muted">${e(a.note)}${mark}</td></tr>`;
    })
    .join('');
  const priced = cost.pricing
    ? `priced at ${e(cost.model)}'s rates (${e(cost.pricing)})`
    : `${e(cost.model)} has no prices in the catalog: tokens only`;
  return `<section class="card cost-card" aria-labelledby="cost-title">
<div class="chart-head"><h2 id="cost-title">Billed input per model call, in tokens</h2></div>
<p class="muted">By the provider's caching rules, ${priced}; one call every ${formatInt(cost.turnSeconds)} s.</p>
<ul class="legend"><li><i class="sw cost-cached"></i>Read from cache</li><li><i class="sw cost-written"></i>Written to cache</li><li><i class="sw cost-fresh"></i>Fresh input</li></ul>
${chart}
<table class="cost-table"><thead><tr><th></th><th>input tokens</th><th>cached</th><th>written</th><th>fresh</th><th>price</th><th>views the provider takes</th><th>task in view</th><th>latest user turn in view</th><th>facts kept of what left</th><th></th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">Beside each price, what the views kept: the share the provider would take (valid by its rules, within the budget), the share of those holding the task (the first user turn) and the latest user turn, and of the ids, numbers, dates and paths said in the messages the last view left out, the share it still shows. A policy whose views are refused or drop the task or the latest user turn (on more than ${percent(1 - USABLE_SHARE)} of calls) is marked, not ranked.</p>
</section>`;
}

function legendLine(cls: string, label: string): string {
  return `<li><svg width="22" height="10" aria-hidden="true"><line class="${cls}" x1="1" y1="5" x2="21" y2="5"/></svg>${e(label)}</li>`;
}

/**
 * The report page for `report`. Every string that comes from the conversation or the command
 * line is escaped for HTML here, and the data the script reads is embedded with `scriptJson`,
 * so no message can add markup or script to the page.
 */
export function renderReportHtml(report: ReplayReport, options: ReportHtmlOptions = {}): string {
  const previews = new Previews(report.messages);
  const turnOf = new Map(report.turns.map((t) => [t.turn, t]));
  const scriptHash = sha256(REPORT_SCRIPT);
  const styleHash = sha256(REPORT_STYLE);
  const csp = `default-src 'none'; script-src 'sha256-${scriptHash}'; style-src 'sha256-${styleHash}'; img-src data:; base-uri 'none'; form-action 'none'`;
  const budgetFrom =
    report.budget.source === 'option' ? 'set with --max-tokens' : `from ${report.model}'s window`;
  const generated = report.generatedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');

  const list =
    report.compactions.length > 0
      ? `<ol class="compactions">${report.compactions.map((c) => compactionItem(c, turnOf.get(c.turn), previews)).join('\n')}</ol>`
      : `<p class="empty">No compaction was needed: every request stayed under the trigger (${formatInt(report.turns[0]?.trigger ?? 0)} tokens).</p>`;
  const server = report.serverCompactions ?? [];
  const serverList =
    server.length > 0
      ? `<p class="muted">The provider compacted on its server ${plural(server.length, 'time')}: ${server.map(serverCompactionItem).join('; ')}. Views start at its last compaction; the stored history stays whole.</p>`
      : '';
  const warnings =
    report.warnings.length > 0
      ? `<section class="card warnings"><h2>Warnings</h2><ul>${report.warnings.map((w) => `<li>${e(w)}</li>`).join('')}</ul></section>`
      : '';

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="contextkit${options.version ? ` ${e(options.version)}` : ''}">
<title>contextkit replay · ${e(report.source)}</title>
<style>${REPORT_STYLE}</style>
</head>
<body data-rendered="false">
<main>
<header class="page">
<div class="eyebrow">contextkit replay</div>
<h1>${e(report.source)}</h1>
<div class="meta">
<span>Model <b>${e(report.model)}</b></span>
<span>Counts <b>${e(report.counter.label)}</b></span>
<span>Strategy <b>${e(report.strategy)}</b></span>
<span>Budget <b>${formatInt(report.budget.tokens)}</b> ${e(budgetFrom)}</span>
<span>Format <b>${e(conversationFormatLabel(report.format))}</b></span>
<span>Generated <b>${e(generated)}</b></span>
</div>
</header>
${totalsCards(report)}
<section class="card chart-card" aria-labelledby="chart-title">
<div class="chart-head">
<h2 id="chart-title">Tokens per model call</h2>
<div id="scale-controls" class="segmented" role="group" aria-label="Vertical scale"><button type="button" data-scale="budget" aria-pressed="true">Fit the budget</button><button type="button" data-scale="all" aria-pressed="false">Whole history</button></div>
</div>
<ul class="legend">
<li><i class="sw stored"></i>Stored history</li>
<li><i class="sw sent"></i>Sent to the model</li>
${legendLine('line-budget', 'Budget')}
${legendLine('line-trigger', 'Compaction trigger')}
${legendLine('line-target', 'Target after compaction')}
<li><svg width="14" height="14" aria-hidden="true"><circle class="legend-badge" cx="7" cy="7" r="6"/></svg>Compaction (click for its receipt)</li>
</ul>
<p id="chart-note" class="chart-note" hidden></p>
<div id="chart" class="chart"><noscript>The chart needs JavaScript. The totals above and the compaction receipts below do not.</noscript></div>
<div id="tooltip" class="tooltip" role="status" hidden></div>
<ul class="legend strip-legend">
<li><b>Cache</b> (does each request start with the previous one, byte for byte?):</li>
<li><i class="sw kept"></i>prefix kept</li>
<li><i class="sw compacted"></i>reset by a compaction</li>
<li><i class="sw broken"></i>changed without compaction</li>
<li><i class="sw none"></i>nothing to compare</li>
</ul>
</section>
${costSection(report)}
<section class="card list" aria-labelledby="list-title">
<header><h2 id="list-title">Compactions · ${formatInt(report.compactions.length)}</h2><span class="muted">what each one cleared, summarized, dropped and truncated, by message number (seq)</span></header>
${serverList}
${list}
</section>
${warnings}
<footer>Written by contextkit${options.version ? ` ${e(options.version)}` : ''} replay. This page is self-contained: it loads nothing from the network.</footer>
</main>
<script type="application/json" id="report-data">${scriptJson(report)}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`;
}
