/**
 * A value as JSON that can sit inside a `<script type="application/json">` element: `<`, `>` and
 * `&` become `\u003c`, `\u003e` and `\u0026`, so no string in the data can close the element
 * (`</script>`) or open a comment (`<!--`), and U+2028/U+2029 are escaped for old parsers.
 * `JSON.parse` of the element's text gives the value back unchanged.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
