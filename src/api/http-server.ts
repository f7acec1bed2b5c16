import { randomUUID } from 'node:crypto';
import { createServer, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Config } from '../core/config.js';
import { errorBodyOf } from './errors.js';
import type { AppState } from './state.js';

/**
 * The API's HTTP server, with the timeouts of the config against slow and idle connections: a
 * request whose headers (`headersTimeoutMs`) or whole body (`requestTimeoutMs`) has not arrived in
 * time is answered 408 and its connection closed (slow-loris clients cannot hold sockets), and an
 * idle keep-alive connection is closed after `keepAliveTimeoutMs`.
 *
 * Requests Node refuses before Koa sees them (headers over `maxHeaderSize`, malformed HTTP,
 * the timeouts above) get the SPEC 7.1 body too, not Node's empty one (see clientErrorResponse).
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
  answerClientErrors(server);
  return server;
}

/** How long an answered client error's connection is drained before it is closed regardless. */
const CLIENT_ERROR_LINGER_MS = 2_000;

/** The refusal of a request Node's parser or timers stopped, by Node's error code. */
function refusalOf(code: string | undefined): { status: number; reason: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: `request line and headers too large: at most ${maxHeaderSize / 1024} KiB together (a long URL counts)`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'chunk extensions too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'request timeout: the headers or the body did not arrive in time' };
    default:
      return { status: 400, reason: 'malformed HTTP request' };
  }
}

/** A complete HTTP/1.1 response with the SPEC 7.1 body; the connection is closed after it. */
export function clientErrorResponse(code: string | undefined): string {
  const { status, reason } = refusalOf(code);
  const body = JSON.stringify(errorBodyOf(reason));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${randomUUID()}\r\n` +
    'Connection: close\r\n' +
    '\r\n' +
    body
  );
}

/**
 * Replaces Node's own answer to a client error (an empty 400, 408 or 431) with one carrying the
 * SPEC body. Like Node, it writes only when the connection is still writable and no response of
 * a request in flight has started on it (its bytes would corrupt that response). The connection
 * is then closed gently: FIN after the answer, while what the client still sends (the rest of a
 * long URL) is read and discarded, until it closes or CLIENT_ERROR_LINGER_MS pass. Closing at
 * once with unread bytes would make the kernel reset the connection, and a client still sending
 * would lose the answer.
 */
function answerClientErrors(server: Server): void {
  const inFlight = new WeakMap<Duplex, ServerResponse>();
  const answered = new WeakSet<Duplex>();
  server.on('request', (request, response: ServerResponse) => {
    inFlight.set(request.socket, response);
    // A keep-alive connection's earlier, finished response is not in flight any more.
    response.once('finish', () => inFlight.get(request.socket) === response && inFlight.delete(request.socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports every later chunk of an answered connection again: it is being drained.
    if (answered.has(socket)) return;
    const response = inFlight.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    socket.end(clientErrorResponse(error.code));
    // The client's FIN comes after it got ours, hence after the answer: nothing is left to send.
    socket.once('end', () => socket.destroy());
    setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
  });
}
