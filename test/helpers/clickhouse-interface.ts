import { expect } from 'vitest';
import type { TestProject } from './factories.js';
import type { TestServer } from './server.js';

/** A credential of the ClickHouse interface (docs/clickhouse-interface.md) of `project`. */
export type TestClickhouseCredential = { id: string; username: string; password: string };

export async function createClickhouseCredential(server: TestServer, project: TestProject): Promise<TestClickhouseCredential> {
  const r = await server.request('POST', `/api/v1/projects/${project.id}/clickhouse-credentials`, { bearer: project.account.adminToken });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, username: r.body.username, password: r.body.password };
}

export type ChAnswer = { status: number; headers: Headers; text: string; bytes: Buffer };

/**
 * One raw request to the interface at `base` (e.g. `${server.url}/clickhouse`), as curl would
 * send it: `search` is the URL's query string, `auth` a credential sent with HTTP Basic.
 */
export async function chRequest(
  base: string,
  search: Record<string, string>,
  options: {
    auth?: TestClickhouseCredential;
    body?: string | Buffer;
    headers?: Record<string, string>;
    method?: string;
    path?: string;
  } = {},
): Promise<ChAnswer> {
  const url = `${base}${options.path ?? '/'}?${new URLSearchParams(search)}`;
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth) headers.authorization = `Basic ${Buffer.from(`${options.auth.username}:${options.auth.password}`).toString('base64')}`;
  const response = await fetch(url, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, text: bytes.toString('utf8'), bytes };
}
