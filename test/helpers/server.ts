import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createSql, type Sql } from '../../src/oltp/db.js';

export type HttpResponse<T = any> = { status: number; body: T; headers: Headers };

export type RequestOptions = {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
  apiKey?: string;
  bearer?: string;
  userId?: string;
};

export type TestServer = {
  url: string;
  sql: Sql;
  operatorToken: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>;
  close(): Promise<void>;
};

/**
 * The real app on an ephemeral port against the run's test database. Requests go over HTTP,
 * exactly as a client's would.
 */
export async function startTestServer(): Promise<TestServer> {
  const sql = createSql(inject('databaseUrl'), { max: 20 });
  const operatorToken = `fbo_test_${randomBytes(16).toString('hex')}`;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const app = buildApp({ sql, logger, operatorToken });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
    if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
    if (options.userId !== undefined) headers['x-user-id'] = options.userId;
    let body: string | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text, the test will say what it expected
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  return {
    url,
    sql,
    operatorToken,
    request,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sql.end({ timeout: 5 });
    },
  };
}
