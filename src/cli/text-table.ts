import { escapeField } from './terminal-safe.js';

/**
 * Rows as aligned columns for the terminal: numbers right-aligned, words left-aligned, two
 * spaces between columns, indented. The last left-aligned column is not padded, so previews do
 * not drag trailing spaces. Cells come from data (ids, tool names, previews): their control
 * characters are escaped (see `escapeField`), so a cell is one line and cannot steer the terminal.
 */
export function textTable(
  rows: readonly (readonly string[])[],
  align: readonly ('left' | 'right')[],
  indent = '  ',
): string[] {
  const widths: number[] = [];
  rows = rows.map((row) => row.map(escapeField));
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) => {
    const cells = row.map((cell, i) => {
      const width = widths[i] ?? 0;
      if (align[i] === 'right') return cell.padStart(width);
      return i === row.length - 1 ? cell : cell.padEnd(width);
    });
    return indent + cells.join('  ');
  });
}
