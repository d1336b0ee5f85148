// Moves TypeScript modules with `git mv` and re-points every relative import of them (and the
// moved modules' own relative imports) across src/, test/, bench/, examples/ and scripts/.
// Usage: node scripts/move-module.mjs old.ts new.ts [old2.ts new2.ts ...]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) throw new Error('usage: move-module.mjs old new [old new ...]');
const moves = new Map();
for (let i = 0; i < args.length; i += 2) moves.set(resolve(args[i]), resolve(args[i + 1]));

const files = [];
for (const top of ['src', 'test', 'bench', 'examples', 'scripts']) {
  if (!existsSync(top)) continue;
  (function walk(dir) {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|tsx|mts|mjs|js)$/.test(name)) files.push(resolve(path));
    }
  })(top);
}

const SPEC = /((?:from|import|mock|importActual|importOriginal)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;
function specifierFor(fromFile, target, original) {
  let rel = relative(dirname(fromFile), target).replace(/\\/g, '/');
  if (!rel.startsWith('.')) rel = `./${rel}`;
  const ext = original.match(/\.(js|ts)$/)?.[0] ?? '';
  return rel.replace(/\.ts$/, ext);
}

for (const file of files) {
  const newFile = moves.get(file) ?? file;
  const text = readFileSync(file, 'utf8');
  const out = text.replace(SPEC, (all, lead, quote, spec) => {
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    const movedTo = moves.get(target);
    if (movedTo === undefined && newFile === file) return all;
    const finalTarget = movedTo ?? target;
    if (!existsSync(target) && movedTo === undefined) return all;
    return `${lead}${quote}${specifierFor(newFile, finalTarget, spec)}${quote}`;
  });
  if (out !== text) writeFileSync(file, out);
}
for (const [from, to] of moves) {
  mkdirSync(dirname(to), { recursive: true });
  execFileSync('git', ['mv', from, to]);
}
