import { describe, expect, it } from 'vitest';
import { runCli } from '../test/support/run-cli.js';
import { ContextManager } from './manager.js';
import { redactUrl, redactUrlsIn } from './redact-url.js';
import { openStore } from './stores/resolve.js';

const SECRET = 's3cret';

describe('redactUrl', () => {
  it.each([
    ['postgres://app:s3cret@db/prod', 'postgres://***@db/prod'],
    ['redis://:s3cret@cache:6379/0', 'redis://***@cache:6379/0'],
    ['postgres://app:s3/cret@db/prod', 'postgres://***'],
    ['postgresql://app:pa@s3cret@db/prod', 'postgresql://***@db/prod'],
    [
      'postgres://db/prod?user=app&password=s3cret&sslmode=require',
      'postgres://db/prod?user=app&password=***&sslmode=require',
    ],
    ['redis://cache?auth_token=s3cret', 'redis://cache?auth_token=***'],
    ['mysql:app:s3cret@db', 'mysql:***@db'],
    ['file:./.contextkit', 'file:./.contextkit'],
    ['sqlite:./history.db', 'sqlite:./history.db'],
    ['app:s3cret@db', 'app:***@db'],
    ['user:s3cret@db/prod', 'user:***@db/prod'],
    ['s3cret@db', '***'],
    ['http://h/p?token=s3cret#frag', 'http://h/p?token=***#frag'],
  ])('%s → %s', (url, expected) => {
    const out = redactUrl(url);
    expect(out).toBe(expected);
    expect(out).not.toContain(SECRET);
  });

  it('redacts every URL inside a longer text', () => {
    const text = 'connect ECONNREFUSED redis://u:s3cret@h:1 and "postgres://a:s3cret@b/c" failed';
    expect(redactUrlsIn(text)).not.toContain(SECRET);
    expect(redactUrlsIn(text)).toContain('redis://***@h:1');
  });
});

describe('store URLs in errors', () => {
  const specs = [
    'postgres://app:s3cret@db.invalid/prod',
    'postgres://app:s3/cret@db.invalid/prod',
    'postgres://db.invalid/prod?password=s3cret',
    'mongodb://app:s3cret@db.invalid/prod',
    'redis://:s3cret@127.0.0.1:1',
  ];

  it.each(specs)(
    'new ContextManager({ store: %j }) does not quote the password, at once or on first use',
    async (spec) => {
      // Unknown schemes are refused by the constructor; store URLs open on first use (issue 13), so
      // their errors come from the first call.
      let message = '';
      try {
        const ctx = new ContextManager({ model: 'gpt-4o', store: spec });
        await ctx.getMessages();
      } catch (error) {
        message = (error as Error).message;
        expect(String((error as Error).stack)).not.toContain(SECRET);
      }
      expect(message).not.toBe('');
      expect(message).not.toContain(SECRET);
    },
    20_000,
  );

  it.each(['postgres://app:s3cret@127.0.0.1:1/none', 'redis://:s3cret@127.0.0.1:1', 'bogus://app:s3cret@x'])(
    'openStore(%j) fails without the password',
    async (spec) => {
      const error = (await openStore(spec).then(
        (store) => store.close().then(() => new Error('opened')),
        (e: unknown) => e,
      )) as Error;
      expect(error.message).not.toContain(SECRET);
      expect(String(error.stack)).not.toContain(SECRET);
    },
    20_000,
  );
});

describe('store URLs on the command line', () => {
  it("are redacted in the CLI's error lines", async () => {
    const env = { ...process.env, CONTEXTKIT_DEBUG: '', NO_COLOR: '1', CONTEXTKIT_STORE: '' };
    const urls = [
      'postgres://app:s3cret@127.0.0.1:1/db',
      'postgres://app:s3/cret@127.0.0.1:1/db',
      'postgres://127.0.0.1:1/db?password=s3cret',
      'bogus://app:s3cret@x',
    ];
    const runs = await Promise.all(
      urls.map((url) => runCli(['conversations', 'list', '--store', url], { env, timeoutMs: 120_000 })),
    );
    for (const run of runs) {
      expect([1, 2]).toContain(run.code);
      expect(run.stderr).toMatch(/^contextkit: /);
      expect(run.stderr).not.toContain(SECRET);
      expect(run.stderr).not.toContain('cret');
    }
  }, 240_000);
});
