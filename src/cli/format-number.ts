/** A whole number with thousands separators (`12,345`): token counts are read at a glance. */
export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
