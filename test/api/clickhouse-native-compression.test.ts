import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { compressBlock, decompressBlocks } from '../../src/api/clickhouse/ch-native-compression.js';
import { type ChAnswer, chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * ClickHouse's native compression (compress=1, decompress=1), which JDBC drivers ask for by
 * default, checked against an implementation nobody here wrote: Debian's clickhouse-compressor
 * (package clickhouse-tools, installed by .ci/run) must read what the interface writes, and the
 * interface must read what it writes.
 */

const COMPRESSOR = ['/usr/bin/clickhouse-compressor', '/usr/bin/clickhouse'].find((path) => existsSync(path));
const compressorArgs = (args: string[]) => (COMPRESSOR?.endsWith('/clickhouse') ? ['compressor', ...args] : args);
/**
 * clickhouse-compressor over `input`: compresses, or with `--decompress` reads compressed blocks.
 * Asynchronous: the service under test runs in this process, and a blocked event loop would let
 * its keep-alive timers close connections under the next request.
 */
function clickhouseCompressor(input: Buffer, args: string[] = []): Promise<Buffer> {
  if (!COMPRESSOR) throw new Error('clickhouse-compressor is not installed (apt-get install clickhouse-tools; .ci/run does)');
  return new Promise((resolve, reject) => {
    const child = spawn(COMPRESSOR, compressorArgs(args), { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (status) =>
      status === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`clickhouse-compressor exited ${status}: ${Buffer.concat(err)}`)),
    );
    child.stdin.end(input);
  });
}

const server = useTestServer({ workers: false });
let own: TestProject;
let cred: TestClickhouseCredential;
let base: string;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  await seedAnalytics(server, own.id, 'own');
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
});

const code = (r: ChAnswer) => r.headers.get('x-clickhouse-exception-code');

describe('the block format, against clickhouse-compressor', () => {
  it('it reads our blocks, and we read its blocks, at every length class of CityHash128 v1.0.2', async () => {
    // Lengths around the hash's branches (8, 16, 128 bytes of block) and LZ4's minimum match sizes.
    for (const length of [1, 2, 5, 7, 8, 12, 16, 17, 100, 118, 119, 120, 200, 1000, 65_536, 1_048_576 + 3]) {
      const text = Buffer.from(Array.from({ length }, (_, i) => `${i % 97},`).join('')).subarray(0, length);
      const noise = Buffer.from(Array.from({ length }, (_, i) => (i * 2_654_435_761) >>> 24));
      for (const data of [text, noise]) {
        const ours = await compressBlock(data);
        expect((await clickhouseCompressor(ours, ['--decompress'])).equals(data), `ours, ${length} bytes`).toBe(true);
        const theirs = await clickhouseCompressor(data);
        expect((await decompressBlocks(theirs, 16 * 1024 * 1024)).equals(data), `theirs, ${length} bytes`).toBe(true);
      }
    }
  });

  it('refuses a damaged block, an unknown method and a cut body in ClickHouse’s codes', async () => {
    const block = await compressBlock(Buffer.from('SELECT 1'));
    const damaged = Buffer.from(block);
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] as number) ^ 1;
    await expect(decompressBlocks(damaged, 1024)).rejects.toMatchObject({ code: 40 });
    const zstd = await clickhouseCompressor(Buffer.from('SELECT 1'), ['--zstd']);
    await expect(decompressBlocks(zstd, 1024)).rejects.toMatchObject({ code: 89 });
    await expect(decompressBlocks(block.subarray(0, 20), 1024)).rejects.toMatchObject({ code: 271 });
  });
});

describe('compress=1 and decompress=1 over HTTP', () => {
  it('compress=1: the answer is in compressed blocks that clickhouse-compressor reads, streamed or small', async () => {
    for (const query of ['SELECT 1', 'SELECT number, toString(number) AS s FROM numbers(300000) FORMAT TabSeparated']) {
      const plain = await chRequest(base, { query }, { auth: cred });
      const packed = await chRequest(base, { query, compress: '1' }, { auth: cred });
      expect(packed.status).toBe(200);
      expect(packed.bytes.equals(plain.bytes)).toBe(false);
      expect((await clickhouseCompressor(packed.bytes, ['--decompress'])).equals(plain.bytes), query).toBe(true);
    }
  });

  it('compress=1 inside HTTP compression, as a server layers them', async () => {
    const query = 'SELECT number FROM numbers(1000) FORMAT JSONEachRow';
    const r = await fetch(`${base}/?${new URLSearchParams({ query, compress: '1', enable_http_compression: '1' })}`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`,
        'accept-encoding': 'gzip',
      },
    });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    // fetch undoes the gzip; the blocks are left.
    const blocks = Buffer.from(await r.arrayBuffer());
    expect((await clickhouseCompressor(blocks, ['--decompress'])).toString().split('\n')[999]).toBe('{"number":999}');
  });

  it('decompress=1: a body that clickhouse-compressor compressed is read as the query', async () => {
    const body = await clickhouseCompressor(Buffer.from('SELECT count() FROM events'));
    const r = await chRequest(base, { decompress: '1' }, { auth: cred, body });
    expect([r.status, r.text]).toEqual([200, '3\n']);
    const joined = await chRequest(
      base,
      { query: 'SELECT', decompress: '1' },
      { auth: cred, body: await clickhouseCompressor(Buffer.from('41 + 1')) },
    );
    expect(joined.text).toBe('42\n');
  });

  it('a damaged compressed body is CHECKSUM_DOESNT_MATCH; errors after authentication come compressed with compress=1, as a server writes them', async () => {
    const body = Buffer.from(await clickhouseCompressor(Buffer.from('SELECT 1')));
    body[body.length - 1] = (body[body.length - 1] as number) ^ 1;
    const damaged = await chRequest(base, { decompress: '1' }, { auth: cred, body });
    expect([damaged.status, code(damaged)]).toEqual([500, '40']);
    expect(damaged.text).toMatch(/^Code: 40\. DB::Exception: Checksum doesn't match/);

    const refused = await chRequest(base, { query: 'SELECT * FROM system.settings', compress: '1' }, { auth: cred });
    expect(code(refused)).toBe('497');
    expect((await clickhouseCompressor(refused.bytes, ['--decompress'])).toString()).toMatch(/^Code: 497\. DB::Exception: /);
    const unknown = await chRequest(base, { query: 'SELECT 1', compress: '1' }, { auth: { ...cred, password: 'wrong' } });
    expect(code(unknown)).toBe('516');
    expect(unknown.text).toMatch(/^Code: 516\. /);
  });
});
