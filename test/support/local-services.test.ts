import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pingRedis, queryPostgres } from './local-services.js';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** A TCP server on 127.0.0.1 that answers the first bytes it reads with `reply` (or never). */
async function serve(reply: string | undefined): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.once('data', () => {
      if (reply !== undefined) socket.write(reply);
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A port nothing listens on: one a server had and gave back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('the local service probes of the global setup', () => {
  it('take a Redis that answers PONG, and say why not for one that wants a password or is not there', async () => {
    expect(await pingRedis(`redis://127.0.0.1:${await serve('+PONG\r\n')}`)).toBeUndefined();
    expect(await pingRedis(`redis://127.0.0.1:${await serve('-NOAUTH Authentication required.\r\n')}`)).toBe(
      'it answered "-NOAUTH Authentication required."',
    );
    expect(await pingRedis(`redis://127.0.0.1:${await closedPort()}`)).toBe('ECONNREFUSED');
  });

  it('give up on a server that never answers, and on a PostgreSQL that is not there', async () => {
    expect(await pingRedis(`redis://127.0.0.1:${await serve(undefined)}`)).toMatch(
      /^no answer within \d+ ms$/,
    );
    expect(await queryPostgres(`postgres://postgres@127.0.0.1:${await closedPort()}/test`)).toMatch(
      /ECONNREFUSED/,
    );
  });
});
