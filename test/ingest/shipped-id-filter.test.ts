import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bucketOf, ID_BUCKET_MS, ID_BUCKETS, idHash } from '../../src/ingest/id-filter.js';
import { ShippedIdFilter } from '../../src/ingest/log/shipped-id-filter.js';

/*
 * The embedded log's memory of shipped eventIds (src/ingest/log/shipped-id-filter.ts) on disk:
 * what a restart finds again, what it ignores, and that the journal a start replays stays small.
 */
const hashesOf = (keys: string[]) => {
  const hashes = new Uint32Array(keys.length * 2);
  keys.forEach((key, i) => {
    const [a, b] = idHash(key);
    hashes[2 * i] = a;
    hashes[2 * i + 1] = b;
  });
  return hashes;
};
const contains = (filter: ShippedIdFilter, key: string) => filter.mayContain(...idHash(key));
const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `project:${prefix}-${i}`);

describe('ShippedIdFilter on disk', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'shipped-ids-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a restart finds every recorded id again, from snapshots and journals, and ignores a torn last entry', async () => {
    const now = Date.now();
    const filter = await ShippedIdFilter.open(dir, 64, now);
    const earlier = keys('earlier', 100); // a 64-block filter snapshots at 256 ids
    const current = keys('current', 100);
    await filter.add(hashesOf(earlier), now - ID_BUCKET_MS); // a bucket that then ends: snapshotted
    await filter.add(hashesOf(current), now);
    const names = await readdir(dir);
    expect(names).toContain(`${bucketOf(now - ID_BUCKET_MS)}.bloom`);
    expect(names.some((name) => name.startsWith(`${bucketOf(now)}-`) && name.endsWith('.ids'))).toBe(true);
    // A crash in the middle of an append leaves a partial entry behind.
    const journal = names.find((name) => name.startsWith(`${bucketOf(now)}-`)) as string;
    await appendFile(path.join(dir, journal), Buffer.from([1, 2, 3]));

    const reopened = await ShippedIdFilter.open(dir, 64, now);
    for (const key of [...earlier, ...current]) expect(contains(reopened, key)).toBe(true);
    const unseen = keys('never', 2000).filter((key) => contains(reopened, key)).length;
    expect(unseen).toBeLessThan(20);
    // New ids after the restart go to a journal of their own, never after the torn entry.
    await reopened.add(hashesOf(keys('after', 10)), now);
    const after = await ShippedIdFilter.open(dir, 64, now);
    for (const key of keys('after', 10)) expect(contains(after, key)).toBe(true);
  });

  it('forgets a bucket once it is past the window, on disk too', async () => {
    const now = Date.now();
    const old = now - ID_BUCKETS * ID_BUCKET_MS;
    const filter = await ShippedIdFilter.open(dir, 64, old);
    await filter.add(hashesOf(keys('old', 100)), old);
    await filter.add(hashesOf(keys('new', 100)), now);
    expect((await readdir(dir)).some((name) => name.startsWith(`${bucketOf(old)}`))).toBe(false);
    const reopened = await ShippedIdFilter.open(dir, 64, now);
    expect(keys('old', 100).filter((key) => contains(reopened, key)).length).toBeLessThan(5);
    for (const key of keys('new', 100)) expect(contains(reopened, key)).toBe(true);
  });

  it('a start replays a journal of millions of ids (in block order) and finds every one of them', async () => {
    const now = Date.now();
    // 2 M blocks (128 MB): its journal is snapshotted at 64 MB, so 3 M ids (24 MB) stay in it.
    const filter = await ShippedIdFilter.open(dir, 2_000_000, now);
    const hashes = new Uint32Array(3_000_000 * 2);
    for (let i = 0; i < hashes.length; i++) hashes[i] = (Math.random() * 2 ** 32) >>> 0;
    await filter.add(hashes.subarray(0, 2_000_000), now);
    await filter.add(hashes.subarray(2_000_000), now);
    expect((await readdir(dir)).filter((name) => name.endsWith('.bloom'))).toEqual([]);
    const reopened = await ShippedIdFilter.open(dir, 2_000_000, now);
    let missing = 0;
    for (let i = 0; i < hashes.length; i += 2) if (!reopened.mayContain(hashes[i] as number, hashes[i + 1] as number)) missing++;
    expect(missing).toBe(0);
    expect(keys('never', 2000).filter((key) => contains(reopened, key)).length).toBeLessThan(5);
  }, 60_000);
});
