import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { Config } from '../config.js';
import type { AppState } from './state.js';

/**
 * The API's HTTP server, with the timeouts of the config against slow and idle connections: a
 * request whose headers (`headersTimeoutMs`) or whole body (`requestTimeoutMs`) has not arrived in
 * time is answered 408 and its connection closed (slow-loris clients cannot hold sockets), and an
 * idle keep-alive connection is closed after `keepAliveTimeoutMs`.
 */
export function createHttpServer(app: Koa<AppState>, timeouts: Config['http']): Server {
  const server = createServer(
    {
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: timeouts.headersTimeoutMs,
      // How often Node looks for requests past those timeouts. Its default, 30 s, would let a slow
      // client keep its connection up to 30 s longer than configured.
      connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    app.callback(),
  );
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  return server;
}
