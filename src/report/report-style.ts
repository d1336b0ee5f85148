/**
 * The replay report's stylesheet, inlined into the page so the file opens anywhere with no
 * network. Colors are CSS variables with a dark set under `prefers-color-scheme: dark`; the
 * chart's SVG elements take their colors from classes, so one drawing serves both modes.
 */
export const REPORT_STYLE = `
:root {
  color-scheme: light dark;
  --bg: #f5f6f8; --card: #ffffff; --ink: #1b2230; --muted: #5d6878; --faint: #8a94a3;
  --line: #e2e6ec; --grid: #edf0f4; --hover: #f0f3f8; --chip: #eef1f6; --code: #f3f4f7;
  --stored: #8393a8; --stored-fill: rgba(131, 147, 168, 0.16);
  --sent: #2563eb; --sent-fill: rgba(37, 99, 235, 0.10);
  --budget: #dc2626; --trigger: #d97706; --target: #16a34a; --compaction: #7c3aed;
  --compaction-soft: rgba(124, 58, 237, 0.12);
  --kept: #34b26a; --reset: #f0a23b; --broken: #e5484d; --none: #d5dae2;
  --shadow: 0 1px 2px rgba(16, 24, 40, 0.05), 0 1px 3px rgba(16, 24, 40, 0.06);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0e1116; --card: #161a21; --ink: #e5e8ee; --muted: #a0a9b7; --faint: #6f7a8a;
    --line: #283039; --grid: #1f252e; --hover: #1d232c; --chip: #222935; --code: #1c222b;
    --stored: #8895a8; --stored-fill: rgba(136, 149, 168, 0.14);
    --sent: #5b9cff; --sent-fill: rgba(91, 156, 255, 0.13);
    --budget: #f26d6d; --trigger: #f4b143; --target: #4fd17f; --compaction: #a98bff;
    --compaction-soft: rgba(169, 139, 255, 0.16);
    --kept: #3fbf74; --reset: #e39b36; --broken: #f05b5f; --none: #353d49;
    --shadow: none;
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
  -webkit-font-smoothing: antialiased;
}
main { max-width: 1160px; margin: 0 auto; padding: 28px 24px 48px; }
h1, h2, h3 { margin: 0; font-weight: 650; letter-spacing: -0.01em; }
h1 { font-size: 22px; word-break: break-all; }
h2 { font-size: 16px; }
h3 { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); font-weight: 600; }
code, .mono { font-family: ui-monospace, 'SF Mono', Menlo, Consolas, 'Liberation Mono', monospace; font-size: 12.5px; }
.num { font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.eyebrow { font-size: 12px; font-weight: 600; letter-spacing: 0.08em; text-transform: uppercase; color: var(--compaction); margin-bottom: 4px; }
header.page { margin-bottom: 20px; }
.meta { display: flex; flex-wrap: wrap; gap: 6px 18px; margin-top: 8px; color: var(--muted); font-size: 13px; }
.meta b { color: var(--ink); font-weight: 600; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; box-shadow: var(--shadow); }
.totals { display: grid; grid-template-columns: repeat(6, minmax(0, 1fr)); gap: 12px; margin-bottom: 16px; }
.stat { padding: 14px 16px; }
.stat .label { font-size: 12px; color: var(--muted); font-weight: 550; }
.stat .value { font-size: 24px; font-weight: 650; letter-spacing: -0.02em; margin-top: 2px; font-variant-numeric: tabular-nums; }
.stat .value small { font-size: 14px; font-weight: 550; color: var(--muted); margin-left: 4px; }
.stat .sub { font-size: 12px; color: var(--muted); margin-top: 2px; }
.stat.good .value { color: var(--kept); }
.stat.warn .value { color: var(--broken); }
.chart-card { padding: 16px 18px 12px; margin: 0 0 16px; position: relative; }
.chart-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 10px 16px; margin-bottom: 6px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12.5px; color: var(--muted); margin: 0; padding: 0; list-style: none; }
.legend li { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
.legend svg { display: block; }
.segmented { display: inline-flex; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.segmented button {
  font: inherit; font-size: 12.5px; padding: 4px 10px; border: 0; background: transparent; color: var(--muted); cursor: pointer;
}
.segmented button + button { border-left: 1px solid var(--line); }
.segmented button[aria-pressed='true'] { background: var(--chip); color: var(--ink); font-weight: 600; }
.chart { position: relative; min-height: 200px; }
.chart svg { display: block; width: 100%; height: auto; overflow: visible; }
.chart noscript { display: block; padding: 60px 0; text-align: center; color: var(--muted); }
.chart-note { font-size: 12.5px; color: var(--muted); margin: 2px 0 4px; }
.grid line { stroke: var(--grid); stroke-width: 1; }
.axis line, .axis path { stroke: var(--line); }
.axis text, .tick-label { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
.axis-title { fill: var(--muted); font-size: 11.5px; font-weight: 550; }
.area-stored { fill: var(--stored-fill); stroke: none; }
.line-stored { fill: none; stroke: var(--stored); stroke-width: 1.5; stroke-linejoin: round; }
.area-sent { fill: var(--sent-fill); stroke: none; }
.line-sent { fill: none; stroke: var(--sent); stroke-width: 2; stroke-linejoin: round; }
.line-budget { fill: none; stroke: var(--budget); stroke-width: 1.5; }
.line-trigger { fill: none; stroke: var(--trigger); stroke-width: 1.5; stroke-dasharray: 6 4; }
.line-target { fill: none; stroke: var(--target); stroke-width: 1.5; stroke-dasharray: 2 3; }
.ref-label { font-size: 11px; font-weight: 600; paint-order: stroke; stroke: var(--card); stroke-width: 3px; stroke-linejoin: round; }
.ref-label.budget { fill: var(--budget); }
.ref-label.trigger { fill: var(--trigger); }
.ref-label.target { fill: var(--target); }
.marker { cursor: pointer; outline: none; }
.marker .guide { stroke: var(--compaction); stroke-width: 1; stroke-dasharray: 2 3; opacity: 0.45; }
.marker .drop { stroke: var(--compaction); stroke-width: 2.5; stroke-linecap: round; }
.marker .before { fill: var(--card); stroke: var(--compaction); stroke-width: 2; }
.marker .before-off { fill: none; stroke: var(--compaction); stroke-width: 2.5; stroke-linecap: round; stroke-linejoin: round; }
.marker .badge { fill: var(--compaction); stroke: var(--card); stroke-width: 2; }
.marker .badge-text { fill: #fff; font-size: 10.5px; font-weight: 700; text-anchor: middle; dominant-baseline: central; pointer-events: none; }
.marker .hit { fill: transparent; }
.marker:hover .guide, .marker:focus-visible .guide, .marker.selected .guide { opacity: 1; stroke-dasharray: none; }
.marker:focus-visible .badge, .marker.selected .badge { stroke: var(--ink); }
.marker.selected .badge { r: 11; }
.overflow-mark { stroke: var(--broken); stroke-width: 2.5; stroke-linecap: round; }
.strip-label { fill: var(--muted); font-size: 11px; font-weight: 550; text-anchor: end; dominant-baseline: central; }
.strip .kept { fill: var(--kept); }
.strip .compacted { fill: var(--reset); }
.strip .broken { fill: var(--broken); }
.strip .none { fill: var(--none); }
.crosshair { stroke: var(--ink); stroke-width: 1; opacity: 0.35; pointer-events: none; }
.dot-sent { fill: var(--sent); stroke: var(--card); stroke-width: 2; pointer-events: none; }
.dot-stored { fill: var(--stored); stroke: var(--card); stroke-width: 2; pointer-events: none; }
.overlay { fill: transparent; cursor: crosshair; }
.tooltip {
  position: absolute; z-index: 5; pointer-events: none; min-width: 190px; max-width: 280px;
  background: var(--card); color: var(--ink); border: 1px solid var(--line); border-radius: 10px;
  box-shadow: 0 8px 24px rgba(16, 24, 40, 0.16); padding: 9px 11px; font-size: 12.5px; line-height: 1.45;
}
.tooltip[hidden] { display: none; }
.tooltip .tt-title { font-weight: 650; margin-bottom: 4px; }
.tooltip .tt-row { display: flex; justify-content: space-between; gap: 14px; }
.tooltip .tt-row span:first-child { color: var(--muted); display: inline-flex; align-items: center; gap: 6px; }
.tooltip .tt-row span:last-child { font-variant-numeric: tabular-nums; font-weight: 550; }
.tooltip .tt-note { margin-top: 5px; padding-top: 5px; border-top: 1px solid var(--line); color: var(--muted); }
.sw { display: inline-block; width: 14px; height: 3px; border-radius: 2px; }
.sw.sent { background: var(--sent); } .sw.stored { background: var(--stored); }
.sw.kept { background: var(--kept); height: 8px; } .sw.compacted { background: var(--reset); height: 8px; }
.sw.broken { background: var(--broken); height: 8px; } .sw.none { background: var(--none); height: 8px; }
.sw.cost-cached { background: var(--kept); height: 8px; } .sw.cost-written { background: var(--reset); height: 8px; }
.sw.cost-fresh { background: var(--broken); height: 8px; }
.cost-chart { width: 100%; height: auto; display: block; margin: 8px 0; }
.cost-chart .cost-cached { fill: var(--kept); } .cost-chart .cost-written { fill: var(--reset); }
.cost-chart .cost-fresh { fill: var(--broken); }
.cost-chart .axis line { stroke: currentColor; opacity: 0.4; } .cost-chart .axis text { fill: currentColor; font-size: 11px; }
.cost-table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
.cost-table th, .cost-table td { text-align: right; padding: 4px 8px; border-top: 1px solid var(--none); }
.cost-table th[scope="row"], .cost-table td.muted { text-align: left; }
.cost-table .unusable { color: var(--broken); font-weight: 600; }
section.list { padding: 16px 18px 8px; margin-bottom: 16px; }
section.list > header { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 12px; margin-bottom: 10px; }
.compactions { list-style: none; margin: 0; padding: 0; }
.compactions > li { border-top: 1px solid var(--line); }
.compactions > li:first-child { border-top: 0; }
details.compaction > summary {
  list-style: none; cursor: pointer; display: grid; align-items: center; gap: 4px 14px; padding: 10px 8px; border-radius: 8px;
  grid-template-columns: 28px 92px minmax(150px, 1fr) minmax(150px, 1.2fr) auto;
}
details.compaction > summary::-webkit-details-marker { display: none; }
details.compaction > summary:hover { background: var(--hover); }
details.compaction > summary:focus-visible { outline: 2px solid var(--compaction); outline-offset: 1px; }
details.compaction.selected > summary { background: var(--compaction-soft); }
.badge-num {
  display: inline-grid; place-items: center; width: 24px; height: 24px; border-radius: 50%;
  background: var(--compaction); color: #fff; font-size: 11.5px; font-weight: 700;
}
.turn { font-weight: 600; }
.turn small { display: block; font-weight: 450; color: var(--muted); font-size: 11.5px; }
.tokens-cell { display: flex; flex-direction: column; gap: 4px; }
.bar { display: block; width: 100%; max-width: 260px; height: 6px; }
.bar .bar-bg { fill: var(--chip); }
.bar .bar-cut { fill: var(--compaction); opacity: 0.35; }
.bar .bar-after { fill: var(--sent); }
.legend-badge { fill: var(--compaction); }
.strip-legend { margin-top: 6px; }
.strip-legend b { color: var(--ink); font-weight: 600; }
.actions { display: flex; flex-wrap: wrap; gap: 4px 6px; }
.pill { display: inline-block; font-size: 11.5px; padding: 1px 8px; border-radius: 999px; background: var(--chip); color: var(--muted); white-space: nowrap; }
.pill.strong { color: var(--ink); }
.pill.reason { background: var(--compaction-soft); color: var(--compaction); font-weight: 600; }
.chev { color: var(--faint); transition: transform 0.15s; }
details[open] > summary .chev { transform: rotate(90deg); }
.receipt { padding: 4px 8px 16px 50px; display: grid; gap: 14px; }
.receipt dl { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 8px 16px; margin: 0; }
.receipt dt { font-size: 11.5px; color: var(--muted); }
.receipt dd { margin: 0; font-weight: 550; font-variant-numeric: tabular-nums; }
.receipt section { display: grid; gap: 6px; }
.receipt p { margin: 0; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; }
.chip { font-family: ui-monospace, 'SF Mono', Menlo, Consolas, monospace; font-size: 11.5px; padding: 1px 7px; border-radius: 6px; background: var(--chip); border: 1px solid var(--line); white-space: nowrap; cursor: help; }
table.rows { border-collapse: collapse; font-size: 12.5px; width: 100%; max-width: 860px; }
table.rows th { text-align: left; font-weight: 550; color: var(--muted); font-size: 11.5px; padding: 2px 10px 4px 0; }
table.rows td { padding: 3px 10px 3px 0; border-top: 1px solid var(--line); vertical-align: top; }
table.rows td.r, table.rows th.r { text-align: right; font-variant-numeric: tabular-nums; }
ul.facts { margin: 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px; }
ul.facts li code { display: inline-block; max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; background: var(--code); border: 1px solid var(--line); border-radius: 6px; padding: 1px 6px; vertical-align: bottom; }
.empty { padding: 14px 8px; color: var(--muted); }
.warnings { padding: 12px 18px; margin-bottom: 16px; border-color: var(--trigger); }
.warnings ul { margin: 6px 0 0; padding-left: 18px; }
footer { color: var(--faint); font-size: 12px; text-align: center; margin-top: 24px; }
@media (max-width: 1020px) { .totals { grid-template-columns: repeat(3, minmax(0, 1fr)); } }
@media (max-width: 560px) { .totals { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
@media (max-width: 760px) {
  main { padding: 18px 12px 36px; }
  details.compaction > summary { grid-template-columns: 28px 1fr auto; }
  details.compaction > summary .tokens-cell, details.compaction > summary .actions { grid-column: 2 / -1; }
  .receipt { padding-left: 8px; }
}
@media print {
  body { background: #fff; }
  .card { box-shadow: none; }
  details.compaction .receipt { display: grid; }
}
`;
