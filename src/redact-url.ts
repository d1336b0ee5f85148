/**
 * Store URLs and endpoint URLs carry credentials (`postgres://app:s3cret@db/prod`,
 * `redis://:token@host`, `?password=…`). Every error, warning and CLI line that names one goes
 * through {@link redactUrl} first.
 */

const REDACTED = '***';

/** Query parameters whose values are credentials. */
const SECRET_PARAM =
  /([?&;](?:[^=&;#]*?(?:pass(?:word)?|pwd|secret|token|api[-_]?key|access[-_]?key|auth)[^=&;#]*)=)[^&;#]*/gi;

/**
 * `url` with its credentials replaced by `***`: the whole userinfo (`user:password@`, up to the
 * last `@` before the query, so a password with an unencoded `/` or `@` is covered too), the
 * values of query parameters named like `password`, `pwd`, `secret`, `token`, `key` or `auth`,
 * and, for a `scheme://` URL that does not parse, everything after `scheme://`. A string with
 * no scheme is returned as is unless it holds an `@`, when all of it is redacted.
 */
export function redactUrl(url: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*:)(\/\/)?/i.exec(url);
  if (scheme === null) return url.includes('@') ? REDACTED : url.replace(SECRET_PARAM, `$1${REDACTED}`);
  const hierarchical = scheme[2] !== undefined;
  if (hierarchical) {
    try {
      new URL(url);
    } catch {
      return `${scheme[1]}//${REDACTED}`;
    }
  }
  const start = scheme[0].length;
  const tail = url.slice(start);
  const endOfPath = tail.search(/[?#]/);
  const beforeQuery = endOfPath < 0 ? tail : tail.slice(0, endOfPath);
  const rest = endOfPath < 0 ? '' : tail.slice(endOfPath);
  const at = beforeQuery.lastIndexOf('@');
  const head = at < 0 ? beforeQuery : `${REDACTED}${beforeQuery.slice(at)}`;
  return `${scheme[0]}${head}${rest.replace(SECRET_PARAM, `$1${REDACTED}`)}`;
}

/** Every URL-looking substring of `text` (`scheme://…` up to whitespace or a quote) redacted. */
export function redactUrlsIn(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]+/gi, (m) => redactUrl(m));
}
