/**
 * Freezes an object graph in place. Stored messages and view messages are frozen so a caller can
 * never change stored history through a view, which lets views share objects instead of copying.
 */
export function freezeDeep<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[key]);
  }
  return value;
}
