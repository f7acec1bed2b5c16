import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { parse as parseLegacy } from 'node:url';
import type Koa from 'koa';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
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
export function createHttpServer(app: Koa<AppState>, timeouts: Config['http'], logger?: Logger): Server {
  const server = createServer(
    {
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: timeouts.headersTimeoutMs,
      // How often Node looks for requests past those timeouts. Its default, 30 s, would let a slow
      // client keep its connection up to 30 s longer than configured.
      connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    guardedListener(refusingUnreadableTargets(app.callback()), logger, 'API'),
  );
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  answerClientErrors(server);
  return server;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * A target outside the origin form (`http://[::1/`, `//`) that the URL parser cannot read is
 * answered 400 before Koa sees it: Koa's ctx.path throws on it, before any middleware of ours
 * could answer in the SPEC form (it was a 500). `*` and readable absolute targets go on.
 */
function refusingUnreadableTargets(listener: Listener): Listener {
  return (req, res) => {
    const target = req.url ?? '/';
    if (!readableTarget(target)) {
      const body = JSON.stringify(errorBodyOf('the request target cannot be read: send a path such as /api/v1/…'));
      res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    return listener(req, res);
  };
}

/**
 * Whether Koa can read a target's path: the origin form, `*`, or the absolute form of an http(s)
 * URL. Any other scheme (`queryuserhttp://`) parses as a URL but gives Koa a null path, which its
 * middleware then read as a string (a 500 found by the fuzz of test/api/hostile-requests.test.ts).
 */
function readableTarget(target: string): boolean {
  if (target === '*' || (target.startsWith('/') && !target.startsWith('//'))) return true;
  try {
    // `//…` is read by Koa (parseurl) with Node's legacy parser, which gives a null path for some
    // (`//clickhouse#user[@&`, another 500 the fuzz found): both parsers must read it.
    if (target.startsWith('//')) return Boolean(new URL(target, 'http://x')) && parseLegacy(target).pathname !== null;
    return /^https?:$/.test(new URL(target).protocol);
  } catch {
    return false;
  }
}

/**
 * The last line of defence of a port (docs/operations.md, "No request ends the process"): an error
 * a request's listener throws, at once or from the promise it returns, is answered for that
 * request (400 for a target the URL parser cannot read, else 500; the connection is cut when the
 * answer had begun) and logged, and the process goes on. Without it, one such error reaches
 * Node's uncaughtException (or unhandledRejection) and ends the process with every port.
 */
export function guardedListener(listener: Listener, logger: Logger | undefined, port: string): Listener {
  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
    const badTarget = error instanceof TypeError && (error as NodeJS.ErrnoException).code === 'ERR_INVALID_URL';
    const status = badTarget || error instanceof URIError ? 400 : 500;
    logger?.error({ err: error, port, method: req.method, url: String(req.url).slice(0, 200), status }, 'request handler threw');
    try {
      if (res.headersSent || res.writableEnded) {
        res.destroy();
        return;
      }
      const body = JSON.stringify(errorBodyOf(status === 400 ? 'the request target cannot be read' : 'internal server error'));
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    } catch {
      res.destroy();
    }
  };
  return (req, res) => {
    try {
      const answer = listener(req, res);
      if (answer instanceof Promise) answer.catch((error: unknown) => fail(req, res, error));
    } catch (error) {
      fail(req, res, error);
    }
  };
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
