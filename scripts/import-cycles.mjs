// Lists the import circles among src/ modules, type-only imports included (as madge does by
// default): a circle of types still ties the layers together.
// Usage: node scripts/import-cycles.mjs [--values] [folder-filter]   (exit 1 when a circle passes the filter)
// `--values` counts value imports only (`import type` is erased), the circles the built code has.
// `--types` is accepted and is the default.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve('src');
const withTypes = !process.argv.includes('--values');
const filter = process.argv.slice(2).find((a) => a !== '--types' && a !== '--values') ?? '';
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) files.push(path);
  }
})(root);

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'(\.[^']+)'/g;
const graph = new Map();
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const deps = new Set();
  for (const m of text.matchAll(IMPORT)) {
    if (m[2] && !withTypes) continue;
    const names = m[3].replace(/^\{|\}$/g, '');
    const specifiers = names.startsWith('{') || m[3].startsWith('{') ? names.split(',').map((s) => s.trim()).filter(Boolean) : [names];
    if (!withTypes && m[3].startsWith('{') && specifiers.every((s) => s.startsWith('type '))) continue;
    deps.add(resolve(dirname(file), m[4].replace(/\.js$/, '.ts')));
  }
  graph.set(file, [...deps].filter((d) => graph.has(d) || files.includes(d)));
}

// Tarjan's strongly connected components.
let index = 0;
const stack = [];
const info = new Map();
const circles = [];
function strong(v) {
  info.set(v, { index, low: index, on: true });
  index++;
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    if (!info.has(w)) {
      strong(w);
      info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
    } else if (info.get(w).on) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
  }
  if (info.get(v).low === info.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).on = false;
      component.push(relative(root, w));
    } while (w !== v);
    if (component.length > 1) circles.push(component.sort());
  }
}
for (const v of graph.keys()) if (!info.has(v)) strong(v);
const shown = circles.filter((c) => c.some((f) => f.includes(filter)));
for (const c of shown) console.log(`circle of ${c.length}: ${c.join(' ')}`);
console.log(`${shown.length} circle(s)${filter ? ` touching "${filter}"` : ''}`);
process.exit(shown.length > 0 ? 1 : 0);
