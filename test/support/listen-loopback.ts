/**
 * Starting a fake server on a free loopback port. Clients (fetch, the SDKs) keep connections alive
 * between requests that may be seconds apart on a loaded machine; a socket the server closed after
 * Node's default 5 s idle timeout, just as a request went out on it, would reset that request
 * (ECONNRESET). Idle connections are kept for two minutes instead; `server.close()` still ends them
 * (Node closes idle connections on close).
 */
import type { Server } from 'node:http';

/** How long a fake server keeps an idle client connection open. */
const KEEP_ALIVE_MS = 120_000;

/** Listens on 127.0.0.1 at a free port, keeping idle connections open (see the module comment). */
export async function listenLoopback(server: Server): Promise<void> {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}
