/**
 * A whole number with thousands separators (`12,345`): token counts are read at a glance. A regex
 * rather than `Intl.NumberFormat`, which costs more than the rest of a placeholder and depends on
 * the ICU data a runtime ships.
 */
export function formatInt(n: number): string {
  const whole = String(Math.round(Math.abs(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 && Math.round(n) !== 0 ? `-${whole}` : whole;
}
