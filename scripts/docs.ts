/**
 * `npm run docs`: writes docs/api.md, the API reference of every public entry point, from the doc
 * comments in the source, and exits 1 listing every export that has none (so CI keeps the
 * reference complete). `npm run docs -- --check` writes nothing and exits 1 when docs/api.md is
 * not what it would write, so CI fails on a stale reference. Uses the TypeScript compiler
 * already installed; no generator to download.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

interface EntryPoint {
  /** The import path users write. */
  specifier: string;
  file: string;
}

/** The public entry points: package.json `exports`, mapped to their sources by tsup.config.ts. */
export async function entryPoints(): Promise<EntryPoint[]> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { import?: string }>;
  };
  const config = (await import('../tsup.config.js')).default as { entry: Record<string, string> };
  const out: EntryPoint[] = [];
  for (const [key, value] of Object.entries(pkg.exports)) {
    if (key === './package.json' || typeof value === 'string' || !value.import) continue;
    const built = value.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '');
    const file = config.entry[built];
    if (!file) throw new Error(`tsup.config.ts has no entry ${built} (package.json exports ${key})`);
    out.push({ specifier: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, file: join(root, file) });
  }
  return out;
}

export interface Documented {
  name: string;
  kind: string;
  signature: string;
  doc: string;
  source: string;
  /** An interface's fields, a class's public methods and properties: `name: type` and its doc. */
  members: Array<{ name: string; type: string; doc: string }>;
}

/** Longest type shown for a member; longer ones are cut with an ellipsis. */
const MEMBER_TYPE_CHARS = 160;

/** The members a user reaches: an interface's properties, a class's public instance members. */
function membersOf(checker: ts.TypeChecker, symbol: ts.Symbol, declaration: ts.Declaration): Documented['members'] {
  const isClass = (symbol.flags & ts.SymbolFlags.Class) !== 0;
  if (!isClass && (symbol.flags & ts.SymbolFlags.Interface) === 0) return [];
  const type = checker.getDeclaredTypeOfSymbol(symbol);
  const out: Documented['members'] = [];
  for (const member of checker.getPropertiesOfType(type)) {
    const decl = member.declarations?.[0];
    if (!decl) continue;
    if (member.name.startsWith('#') || member.name.startsWith('_')) continue;
    const flags = ts.getCombinedModifierFlags(decl);
    if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    let text = checker
      .typeToString(checker.getTypeOfSymbolAtLocation(member, declaration), undefined, ts.TypeFormatFlags.NoTruncation)
      .replace(/\s+/g, ' ');
    if (text.length > MEMBER_TYPE_CHARS) text = `${text.slice(0, MEMBER_TYPE_CHARS - 1)}…`;
    const optional = (member.flags & ts.SymbolFlags.Optional) !== 0 ? '?' : '';
    const doc = ts.displayPartsToString(member.getDocumentationComment(checker)).trim().replace(/\s*\n\s*/g, ' ');
    out.push({ name: `${member.name}${optional}`, type: text, doc });
  }
  return out;
}

function kindOf(symbol: ts.Symbol): string {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) return 'const';
  return 'export';
}

/** The documented exports of one entry point, and the names of those with no doc comment. */
export function documentEntry(
  program: ts.Program,
  entry: EntryPoint,
): { items: Documented[]; undocumented: string[] } {
  const checker = program.getTypeChecker();
  const sourceFile = program.getSourceFile(entry.file);
  if (!sourceFile) throw new Error(`not in the program: ${entry.file}`);
  const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
  if (!moduleSymbol) return { items: [], undocumented: [] };
  const items: Documented[] = [];
  const undocumented: string[] = [];
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declaration = symbol.declarations?.[0];
    if (!declaration) continue;
    const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
    const source = relative(root, declaration.getSourceFile().fileName);
    if (!doc) {
      undocumented.push(`${exported.name} (${source})`);
      continue;
    }
    let signature = '';
    if (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable)) {
      const type = checker.getTypeOfSymbolAtLocation(symbol, declaration);
      signature = checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
    }
    const members = membersOf(checker, symbol, declaration);
    items.push({ name: exported.name, kind: kindOf(symbol), signature, doc, source, members });
  }
  items.sort((a, b) => a.name.localeCompare(b.name));
  return { items, undocumented };
}

function render(sections: Array<{ entry: EntryPoint; items: Documented[] }>): string {
  const lines = [
    '# API reference',
    '',
    'Generated by `npm run docs` from the doc comments in `src/`; do not edit by hand.',
    '',
  ];
  for (const { entry, items } of sections) {
    lines.push(`## \`${entry.specifier}\``, '');
    for (const item of items) {
      lines.push(`### ${item.name}`, '', `*${item.kind}*, defined in \`${item.source}\` (in the repository)`, '');
      if (item.signature && item.signature.length < 400) lines.push('```ts', item.signature, '```', '');
      lines.push(item.doc, '');
      if (item.members.length > 0) {
        lines.push(item.kind === 'class' ? 'Members:' : 'Fields:', '');
        for (const m of item.members) {
          lines.push(`- \`${m.name}\`: \`${m.type.replace(/`/g, "'")}\`${m.doc ? ` — ${m.doc}` : ''}`);
        }
        lines.push('');
      }
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * Every public entry point's documented exports, and `specifier: name (file)` for each export
 * that has no doc comment.
 */
export async function documentAll(): Promise<{
  entries: EntryPoint[];
  sections: Array<{ entry: EntryPoint; items: Documented[] }>;
  missing: string[];
}> {
  const entries = await entryPoints();
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const sections: Array<{ entry: EntryPoint; items: Documented[] }> = [];
  const missing: string[] = [];
  for (const entry of entries) {
    const { items, undocumented } = documentEntry(program, entry);
    sections.push({ entry, items });
    for (const name of undocumented) missing.push(`${entry.specifier}: ${name}`);
  }
  return { entries, sections, missing };
}

/**
 * Where `committed` (the file as it is, or undefined when absent) differs from `generated`: the
 * first line that differs, with both versions, or undefined when they are the same.
 */
export function staleness(committed: string | undefined, generated: string): string | undefined {
  if (committed === generated) return undefined;
  if (committed === undefined) return 'it does not exist';
  const a = committed.split('\n');
  const b = generated.split('\n');
  let line = 0;
  while (line < a.length && line < b.length && a[line] === b[line]) line++;
  const show = (text: string | undefined) =>
    text === undefined ? '(end of file)' : JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
  return `line ${line + 1} is ${show(a[line])} where the source gives ${show(b[line])}`;
}

async function main(check: boolean): Promise<void> {
  const { entries, sections, missing } = await documentAll();
  const path = join(root, 'docs', 'api.md');
  const text = render(sections);
  const count = sections.reduce((n, s) => n + s.items.length, 0);
  if (missing.length > 0) {
    process.stderr.write(`docs: ${missing.length} exports have no doc comment:\n  ${missing.join('\n  ')}\n`);
    process.exitCode = 1;
  }
  if (check) {
    const stale = staleness(existsSync(path) ? readFileSync(path, 'utf8') : undefined, text);
    if (stale === undefined) {
      process.stdout.write(`docs: docs/api.md is up to date (${count} exports)\n`);
      return;
    }
    process.stderr.write(`docs: docs/api.md is out of date: ${stale}; run npm run docs and commit it\n`);
    process.exitCode = 1;
    return;
  }
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(path, text);
  if (missing.length === 0)
    process.stdout.write(`docs: wrote docs/api.md (${count} exports from ${entries.length} entry points)\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const unknown = process.argv.slice(2).filter((arg) => arg !== '--check');
  if (unknown.length > 0) {
    process.stderr.write(`docs: unknown argument ${unknown.join(' ')} (the one option is --check)\n`);
    process.exitCode = 2;
  } else await main(process.argv.includes('--check'));
}
