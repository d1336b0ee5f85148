/**
 * The frontier of one workload: each policy as a point (billed input per request, what it kept),
 * and the chart that draws them, a panel per priced model. contextkit's settings are joined by a
 * line, the peers that may be ranked are filled, and those that may not (the provider refuses
 * their views, or they drop the task or the latest user turn) are hollow and say so: a point that
 * looks cheap for forgetting is not a point to beat.
 */
import { escapeHtml } from '../../src/report/escape-html.js';
import { PRICED_MODELS, type PricedModel } from './billing.js';

/** One policy on one workload. */
export interface FrontierPoint {
  name: string;
  /** contextkit, at one of its settings. */
  ours: boolean;
  /** One of the points of the setting that moves along the frontier (joined by a line). */
  onLine?: boolean;
  /** Billed input per request at each priced model (NaN when it sent no usable view). */
  price: Record<PricedModel, number>;
  /** Facts kept (answers in view on chats), as a share. */
  kept: number;
  /** Why it may not be ranked; absent when it may. */
  unranked?: string;
  /** Whether it is held to the goal: usable on ≥ 95% of requests and the latest user turn kept. */
  usable: boolean;
}

/** A peer the goal holds us to, and the contextkit setting that meets it at each price (if any). */
export interface FrontierCheck {
  peer: string;
  model: PricedModel;
  met?: string;
  detail: string;
}

/**
 * For every usable peer and every priced model: the contextkit setting (cheapest first) billed no
 * more per request than the peer while keeping at least as much, if there is one.
 */
export function checkFrontier(
  points: readonly FrontierPoint[],
  show: (n: number) => string,
): FrontierCheck[] {
  const ours = points.filter((p) => p.ours);
  const checks: FrontierCheck[] = [];
  for (const peer of points.filter((p) => !p.ours && p.usable)) {
    for (const model of PRICED_MODELS) {
      const meeting = ours
        .filter((o) => o.price[model] <= peer.price[model] && o.kept >= peer.kept)
        .sort((a, b) => a.price[model] - b.price[model]);
      const best = meeting[0];
      const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
      // The goal holds us to every usable peer; one that drops the task is said so beside it.
      const unranked = peer.unranked ? ` (${peer.name} is not ranked: ${peer.unranked})` : '';
      checks.push({
        peer: peer.name,
        model,
        ...(best ? { met: best.name } : {}),
        detail:
          (best
            ? `${best.name} ${show(best.price[model])} and ${pct(best.kept)} vs ${peer.name} ${show(peer.price[model])} and ${pct(peer.kept)}`
            : `no setting at ≤ ${show(peer.price[model])} keeps ≥ ${pct(peer.kept)} (${ours
                .map((o) => `${o.name} ${show(o.price[model])}, ${pct(o.kept)}`)
                .join('; ')})`) + unranked,
      });
    }
  }
  return checks;
}

const W = 460;
const H = 320;
const M = { left: 64, right: 16, top: 34, bottom: 48 };

/** Round tick steps (1, 2, 5 × 10ⁿ) so an axis reads at a glance. */
function ticks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = 0; v <= max + step / 2; v += step) out.push(v);
  return out;
}

function money(v: number): string {
  return v === 0 ? '$0' : `$${v < 0.01 ? v.toFixed(4) : v.toFixed(3)}`;
}

function panel(points: readonly FrontierPoint[], model: PricedModel, dx: number): string {
  const drawn = points.filter((p) => Number.isFinite(p.price[model]) && Number.isFinite(p.kept));
  const xs = ticks(Math.max(...drawn.map((p) => p.price[model]), 1e-6) * 1.08);
  const xMax = xs[xs.length - 1]!;
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const x = (v: number) => dx + M.left + (v / xMax) * pw;
  const y = (v: number) => M.top + (1 - v) * ph;
  const out: string[] = [];
  out.push(
    `<text x="${dx + M.left + pw / 2}" y="18" text-anchor="middle" class="title">priced at ${escapeHtml(model)}</text>`,
  );
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(
      `<line x1="${dx + M.left}" x2="${dx + M.left + pw}" y1="${y(t)}" y2="${y(t)}" class="grid"/>`,
      `<text x="${dx + M.left - 6}" y="${y(t) + 4}" text-anchor="end">${t * 100}%</text>`,
    );
  }
  for (const t of xs) {
    out.push(
      `<line x1="${x(t)}" x2="${x(t)}" y1="${M.top + ph}" y2="${M.top + ph + 4}" class="axis"/>`,
      `<text x="${x(t)}" y="${M.top + ph + 16}" text-anchor="middle">${money(t)}</text>`,
    );
  }
  out.push(
    `<line x1="${dx + M.left}" x2="${dx + M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}" class="axis"/>`,
    `<line x1="${dx + M.left}" x2="${dx + M.left}" y1="${M.top}" y2="${M.top + ph}" class="axis"/>`,
    `<text x="${dx + M.left + pw / 2}" y="${H - 8}" text-anchor="middle">billed input per request (USD)</text>`,
    `<text transform="translate(${dx + 14} ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">kept</text>`,
  );
  const ours = drawn.filter((p) => p.onLine).sort((a, b) => a.price[model] - b.price[model]);
  if (ours.length > 1) {
    out.push(
      `<polyline class="ours-line" points="${ours.map((p) => `${x(p.price[model]).toFixed(1)},${y(p.kept).toFixed(1)}`).join(' ')}"/>`,
    );
  }
  // Labels nudged down until they clear those already placed, so near points stay legible.
  const placed: Array<{ x0: number; x1: number; y: number }> = [];
  for (const p of [...drawn].sort((a, b) => b.kept - a.kept)) {
    const cls = p.ours ? 'ours' : p.unranked ? 'unranked' : 'peer';
    const px = x(p.price[model]);
    const py = y(p.kept);
    const label = `${p.name}${p.unranked ? ' (not ranked)' : ''}`;
    const right = px < dx + M.left + pw * 0.6;
    const width = label.length * 5.6;
    const x0 = right ? px + 7 : px - 7 - width;
    const x1 = x0 + width;
    let ly = py - 6;
    while (placed.some((b) => b.x0 < x1 && x0 < b.x1 && Math.abs(b.y - ly) < 11)) ly += 11;
    placed.push({ x0, x1, y: ly });
    out.push(
      `<g><title>${escapeHtml(`${label}: ${money(p.price[model])} per request, ${(100 * p.kept).toFixed(1)}% kept${p.unranked ? `; ${p.unranked}` : ''}`)}</title>` +
        `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="4.5" class="${cls}"/>` +
        `<text x="${(px + (right ? 7 : -7)).toFixed(1)}" y="${ly.toFixed(1)}" text-anchor="${right ? 'start' : 'end'}" class="label ${cls}-label">${escapeHtml(label)}</text></g>`,
    );
  }
  return out.join('');
}

/** The workload's frontier as an SVG of two panels (one per priced model), readable on its own. */
export function frontierSvg(title: string, keptLabel: string, points: readonly FrontierPoint[]): string {
  const width = W * PRICED_MODELS.length;
  const style =
    'text{font:11px system-ui,sans-serif;fill:#333}.title{font-weight:600;font-size:12px}' +
    '.grid{stroke:#e4e7ec}.axis{stroke:#667085}.ours-line{fill:none;stroke:#1f6feb;stroke-width:1.5}' +
    '.ours{fill:#1f6feb}.peer{fill:#e8590c}.unranked{fill:#fff;stroke:#98a2b3;stroke-width:1.5}' +
    '.label{font-size:10px;paint-order:stroke;stroke:#fff;stroke-width:3px}.ours-label{fill:#1f4fa8}.unranked-label{fill:#98a2b3}';
  const head = `<text x="${width / 2}" y="${H + 18}" text-anchor="middle" class="title">${escapeHtml(
    `${title}: ${keptLabel} against billed input per request (up and left is better; hollow: not ranked)`,
  )}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${H + 28}" width="${width}" height="${H + 28}">` +
    `<style>${style}</style><rect width="100%" height="100%" fill="#fff"/>` +
    PRICED_MODELS.map((m, i) => panel(points, m, i * W)).join('') +
    head +
    '</svg>'
  );
}
