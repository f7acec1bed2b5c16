import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverReadonlyEngine } from '../../src/olap/readonly/readonly-session.js';
import { eventually } from '../helpers/eventually.js';
import { stopWhenDone } from '../helpers/lifecycle.js';

/*
 * The byte bound of a streamed read on a ClickHouse server (CLICKHOUSE_URL): counted on the
 * server's answer as it arrives, and the request is closed past it, so the server stops the query
 * (cancel_http_readonly_queries_on_client_close). There is no ClickHouse server on this machine:
 * the listener below answers as a server answers an endless export, 64 KiB at a time, and records
 * what the service sent and whether the service let go.
 */

const CAP = 1024 * 1024;
let listener: Server;
let url: string;
const seen: { url: URL; closed: boolean }[] = [];

beforeAll(async () => {
  listener = createServer((req: IncomingMessage, res) => {
    const request = { url: new URL(req.url ?? '/', 'http://x'), closed: false };
    seen.push(request);
    req.resume();
    res.writeHead(200, { 'Content-Type': 'text/tab-separated-values; charset=UTF-8', 'X-ClickHouse-Format': 'TabSeparated' });
    const piece = Buffer.alloc(64 * 1024, 'x');
    const write = () => {
      while (!res.destroyed && res.write(piece)) {}
    };
    res.on('drain', write);
    res.on('close', () => (request.closed = true));
    write();
  }).listen(0, '127.0.0.1');
  await once(listener, 'listening');
  url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  stopWhenDone(() => {
    listener.closeAllConnections();
    return new Promise((resolve) => listener.close(resolve));
  });
});

describe('a streamed read on a ClickHouse server', () => {
  it('stops at the byte bound with ClickHouse’s 396, not a byte past it, and closes the request', async () => {
    const client = createClient({ url });
    try {
      const engine = serverReadonlyEngine(client);
      const session = await engine.open({ timeoutMs: 10_000, maxResultRows: 1000, maxThreads: 0, maxResultBytes: CAP }, {});
      let bytes = 0;
      const read = (async () => {
        for await (const piece of session.stream('SELECT 1', 'TabSeparated')) bytes += piece.byteLength;
      })();
      await expect(read).rejects.toThrow(
        /^Code: 396\. DB::Exception: Limit for result exceeded, max bytes: 1\.00 MiB\. \(TOO_MANY_ROWS_OR_BYTES\)$/,
      );
      expect(bytes).toBeLessThanOrEqual(CAP);
      expect(bytes).toBeGreaterThan(CAP - 64 * 1024);
      await session.idle();
      const request = seen.at(-1);
      // The bound also travels to the server, which applies it to its blocks.
      expect(request?.url.searchParams.get('max_result_bytes')).toBe(String(CAP));
      expect(request?.url.searchParams.get('cancel_http_readonly_queries_on_client_close')).toBe('1');
      await eventually('the service closes the request', 5_000, async () => request?.closed === true);
    } finally {
      await client.close();
    }
  });
});
