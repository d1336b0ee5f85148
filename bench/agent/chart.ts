/**
 * The agent benchmark's picture: for every cell (budget, result size, format), one bar per
 * contender, in two panels: tasks finished (of the session's tasks), and billed input as a share
 * of the full history's. Reads at a glance which contender keeps working and at what price.
 */
import { escapeHtml } from '../../src/report/escape-html.js';

export interface Bars {
  /** The cells, in order, each with one value per series (NaN: not run). */
  groups: { label: string; values: number[] }[];
  series: string[];
}

const COLORS = ['#98a2b3', '#1f6feb', '#0b3d91', '#e8590c', '#b7791f', '#2f9e44'];
const W = 920;
const PANEL_H = 210;
const M = { left: 56, right: 12, top: 28, bottom: 34 };

function panel(title: string, bars: Bars, y0: number, max: number, show: (v: number) => string): string {
  const pw = W - M.left - M.right;
  const ph = PANEL_H - M.top - M.bottom;
  const out: string[] = [
    `<text x="${M.left + pw / 2}" y="${y0 + 16}" text-anchor="middle" class="title">${escapeHtml(title)}</text>`,
  ];
  const y = (v: number) => y0 + M.top + (1 - Math.min(v, max) / max) * ph;
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    out.push(
      `<line x1="${M.left}" x2="${M.left + pw}" y1="${y(v)}" y2="${y(v)}" class="grid"/>`,
      `<text x="${M.left - 6}" y="${y(v) + 4}" text-anchor="end">${escapeHtml(show(v))}</text>`,
    );
  }
  const gw = pw / bars.groups.length;
  const bw = (gw * 0.8) / bars.series.length;
  bars.groups.forEach((g, gi) => {
    const gx = M.left + gi * gw + gw * 0.1;
    g.values.forEach((v, si) => {
      if (!Number.isFinite(v)) return;
      const x = gx + si * bw;
      const top = y(v);
      out.push(
        `<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${(bw - 1).toFixed(1)}" height="${(y0 + M.top + ph - top).toFixed(1)}" fill="${COLORS[si % COLORS.length]}"><title>${escapeHtml(`${bars.series[si]}, ${g.label}: ${show(v)}`)}</title></rect>`,
      );
    });
    out.push(
      `<text x="${(M.left + gi * gw + gw / 2).toFixed(1)}" y="${y0 + M.top + ph + 16}" text-anchor="middle">${escapeHtml(g.label)}</text>`,
    );
  });
  out.push(
    `<line x1="${M.left}" x2="${M.left + pw}" y1="${y0 + M.top + ph}" y2="${y0 + M.top + ph}" class="axis"/>`,
  );
  return out.join('');
}

/** One panel: its title, its bars, and how its axis reads. */
export interface Panel {
  title: string;
  bars: Bars;
  /** The axis maximum (NaN: from the data). */
  max: number;
  show(v: number): string;
}

/** Panels of grouped bars, one above the other, with one legend. */
export function agentSvg(panels: readonly Panel[]): string {
  const series = panels[0]?.bars.series ?? [];
  const legendY = PANEL_H * panels.length + 8;
  const legend = series
    .map((s, i) => {
      const x = M.left + i * 170;
      return `<rect x="${x}" y="${legendY}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/><text x="${x + 14}" y="${legendY + 9}">${escapeHtml(s)}</text>`;
    })
    .join('');
  const style =
    'text{font:11px system-ui,sans-serif;fill:#333}.title{font-weight:600;font-size:12px}' +
    '.grid{stroke:#e4e7ec}.axis{stroke:#667085}';
  const h = legendY + 20;
  const drawn = panels.map((p, i) => {
    const values = p.bars.groups.flatMap((g) => g.values.filter(Number.isFinite));
    const max = Number.isFinite(p.max) ? p.max : Math.max(0.1, Math.ceil(Math.max(0, ...values) * 10) / 10);
    return panel(p.title, p.bars, i * PANEL_H, max, p.show);
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${h}" width="${W}" height="${h}">` +
    `<style>${style}</style><rect width="100%" height="100%" fill="#fff"/>` +
    drawn.join('') +
    legend +
    '</svg>'
  );
}
