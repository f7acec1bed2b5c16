import { beforeAll, describe, expect, it } from 'vitest';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { eventually } from '../helpers/eventually.js';
import { createProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The ClickHouse interface's byte bound holds as the answer flows (docs/clickhouse-interface.md,
 * "Result size"): it is counted on the engine's output as it passes, not per block after the
 * block has arrived, so a block far wider than the bound is refused without being held.
 */

const CAP = 1024 * 1024;
const server = useTestServer({ workers: false, env: { CLICKHOUSE_INTERFACE_MAX_BYTES: '1MiB' } });
let cred: TestClickhouseCredential;
let base: string;

beforeAll(async () => {
  const own = await createProject(server, { plan: 'pro' });
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
});

/** An answer read as it comes, never held: its status, exception code and bytes, and this process's peak RSS meanwhile. */
async function readStreaming(
  query: string,
): Promise<{ status: number; code: string | null; bytes: number; tail: string; peakRssGrowth: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const auth = `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
    const response = await fetch(`${base}/?${new URLSearchParams({ query })}`, { headers: { authorization: auth } });
    let bytes = 0;
    let tail = '';
    const reader = response.body?.getReader();
    for (;;) {
      const piece = await reader?.read();
      if (!piece || piece.done) break;
      bytes += piece.value.byteLength;
      tail = (tail + Buffer.from(piece.value).toString('latin1')).slice(-2000);
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    return {
      status: response.status,
      code: response.headers.get('x-clickhouse-exception-code'),
      bytes,
      tail,
      peakRssGrowth: peak - before,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** The bytes of the answer's data: what precedes ClickHouse's framed mid-stream exception. */
function dataBytes(answer: { bytes: number; tail: string }): number {
  const at = answer.tail.indexOf('\r\n__exception__\r\n');
  return at === -1 ? answer.bytes : answer.bytes - (answer.tail.length - at);
}

describe('the byte bound, as bytes flow', () => {
  it('a single block far wider than the bound is refused in ClickHouse’s form, without the process holding the block', async () => {
    // One block of the engine's default size (65,409 rows) of this query is 60,000 rows of 4 KB:
    // 240 MB of output, 240 times the bound.
    const blockBytes = 60_000 * 4_001;
    // The same statement once over a few rows first: what the first query of a process costs
    // (the engine's caches, the client's) is not the block's.
    expect((await readStreaming("SELECT repeat('x', 4000) AS wide FROM numbers(10)")).status).toBe(200);
    expect((await readStreaming("SELECT repeat('x', 40) AS wide FROM numbers(60000)")).status).toBe(200);
    const answer = await readStreaming("SELECT repeat('x', 4000) AS wide FROM numbers(60000)");
    if (answer.status === 200) expect(answer.tail).toMatch(/__exception__\r\n$/);
    else expect([answer.status, answer.code]).toEqual([500, '396']);
    expect(answer.tail).toMatch(/Code: 396\. DB::Exception: Limit for result exceeded, max bytes: 1\.00 MiB\. \(TOO_MANY_ROWS_OR_BYTES\)/);
    // Not one byte past the bound goes out.
    expect(dataBytes(answer)).toBeLessThanOrEqual(CAP);
    // The process (the service and chDB run in this one) did not grow by anything like the block.
    expect(answer.peakRssGrowth, `grew ${Math.round(answer.peakRssGrowth / 2 ** 20)} MiB`).toBeLessThan(blockBytes / 4);
  });

  it('an export that passes the bound is stopped in the engine: the lane is free for the next query at once', async () => {
    // 20 GB of output if it went on; embedded chDB runs one interface query at a time.
    const answer = await readStreaming("SELECT number, repeat('x', 4000) FROM numbers(5000000)");
    expect(answer.tail).toMatch(/\(TOO_MANY_ROWS_OR_BYTES\)/);
    expect(dataBytes(answer)).toBeLessThanOrEqual(CAP);
    const started = Date.now();
    await eventually('the next query is answered', 20_000, async () => {
      const r = await chRequest(base, { query: 'SELECT 42' }, { auth: cred });
      return r.text === '42\n';
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('an answer under the bound is whole, byte for byte as the engine writes it', async () => {
    const r = await chRequest(base, { query: 'SELECT number FROM numbers(100000)' }, { auth: cred });
    const expected = Array.from({ length: 100_000 }, (_, i) => `${i}\n`).join('');
    expect([r.status, r.headers.get('x-clickhouse-exception-code'), r.bytes.length]).toEqual([200, null, Buffer.byteLength(expected)]);
    expect(r.text === expected).toBe(true);
  });

  it('an answer of exactly the bound passes; one byte more is refused', async () => {
    // TSV of a string of n bytes is n + 1 bytes (the line break): 1,024 rows of 1 KiB.
    const exact = await chRequest(base, { query: "SELECT repeat('y', 1023) FROM numbers(1024)" }, { auth: cred });
    expect([exact.status, exact.bytes.length], exact.text.slice(0, 300)).toEqual([200, CAP]);
    const over = await readStreaming("SELECT repeat('y', 1023) FROM numbers(1025)");
    expect(over.tail).toMatch(/\(TOO_MANY_ROWS_OR_BYTES\)/);
    expect(dataBytes(over)).toBeLessThanOrEqual(CAP);
  });
});
