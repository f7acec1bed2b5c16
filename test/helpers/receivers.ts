import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { stopWhenDone } from './lifecycle.js';

/** `close` once, and by itself when the test (or, started in a hook, the file) is done. */
function closedWhenDone(close: () => Promise<void>): () => Promise<void> {
  let closed: Promise<void> | undefined;
  const once = () => {
    closed ??= close();
    return closed;
  };
  stopWhenDone(once);
  return once;
}

/**
 * Real receivers for notification tests: an SMTP server (smtp-server, messages parsed with
 * mailparser) and plain node:http servers, each on an ephemeral port of 127.0.0.1. Each closes
 * when the test that started it finishes, or, started in a hook, after the file.
 */

export type SmtpReceiver = {
  url: string;
  messages: ParsedMail[];
  /** Messages addressed to `address`. */
  to(address: string): ParsedMail[];
  close(): Promise<void>;
};

/**
 * `answerDelayMs`: a slow server, waiting that long before answering MAIL FROM and again before
 * accepting the message (a message counts once accepted).
 */
export async function startSmtpReceiver(options: { answerDelayMs?: number } = {}): Promise<SmtpReceiver> {
  const messages: ParsedMail[] = [];
  const delay = options.answerDelayMs ?? 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      if (delay > 0) setTimeout(() => callback(), delay);
      else callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then(async (mail) => {
          if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
          messages.push(mail);
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) =>
      messages.filter((m) => {
        const to = Array.isArray(m.to) ? m.to : m.to ? [m.to] : [];
        return to.some((entry) => entry.value.some((v) => v.address?.toLowerCase() === address.toLowerCase()));
      }),
    close: closedWhenDone(() => new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}

export type ReceivedRequest = { method: string; path: string; headers: IncomingHttpHeaders; raw: string; body: any; at: number };

/** What a receiver answers to the n-th request (0-based): a status, or 'hang' (never answers). */
export type Behaviour = (index: number, request: ReceivedRequest) => number | 'hang';

export type HttpReceiver = {
  url: string;
  /** Every request received, answered or not. */
  requests: ReceivedRequest[];
  /** Requests answered 2xx. */
  accepted: ReceivedRequest[];
  behave(behaviour: Behaviour): void;
  close(): Promise<void>;
};

export async function startHttpReceiver(behaviour: Behaviour = () => 200): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const accepted: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let current = behaviour;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep the text
      }
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        at: performance.now(),
      };
      const answer = current(requests.length, request);
      requests.push(request);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (answer >= 200 && answer < 300) accepted.push(request);
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'receiver error');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    accepted,
    behave(next) {
      current = next;
    },
    close: closedWhenDone(async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }),
  };
}
