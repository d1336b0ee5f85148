/**
 * Freezes an object graph in place. Stored messages and view messages are frozen so a caller can
 * never change stored history through a view, which lets views share objects instead of copying.
 */
export function freezeDeep<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Each own enumerable property, as `Object.keys` lists them, without making that list.
    const record = value as Record<string, unknown>;
    for (const key in record) if (Object.hasOwn(record, key)) freezeDeep(record[key]);
  }
  return value;
}
