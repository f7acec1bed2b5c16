import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { BITS_SET, BLOCK_WORDS, bitsOf, blockOf, bucketOf, ID_BUCKETS } from '../id-filter.js';
import { syncDirectory } from './fsync.js';

const MAGIC = 0x31424449; // "IDB1"
const HEADER_BYTES = 16;
const HASH_BYTES = 8;

type Bucket = {
  /** The filter: `blocks` blocks of 16 words. */
  words: Uint32Array;
  blocks: number;
  /** The journal that records this bucket's new ids (`<bucket>-<seq>.ids`); older ones are in the snapshot. */
  seq: number;
  journalBytes: number;
};

/**
 * The eventIds shipped within the idempotency window, on disk and in memory, at 3 bytes per id
 * at capacity (id-filter.ts): per 4-hour bucket one blocked Bloom filter in a typed array (off
 * the JS heap, so no V8 limit applies).
 *
 * Durable before an id is reported recorded: its 8-byte hash is appended to the bucket's journal
 * (fsync'd). The filter itself is written as a snapshot (`<bucket>.bloom`) when the journal has
 * grown to half the filter's size and when the bucket ends; the journals it covers are then
 * removed. So on disk it takes the filters plus at most half of one, and a start reads the
 * snapshots and replays at most that half-filter of journal: seconds for a full window at
 * 10,000 ids/s (BENCHMARKS.md).
 */
export class ShippedIdFilter {
  readonly #buckets = new Map<number, Bucket>();
  readonly #bits = new Uint16Array(BITS_SET);

  private constructor(
    private readonly dir: string,
    private readonly blocks: number,
  ) {}

  static async open(dir: string, blocks: number, now = Date.now()): Promise<ShippedIdFilter> {
    await mkdir(dir, { recursive: true });
    const filter = new ShippedIdFilter(dir, blocks);
    const oldest = bucketOf(now) - ID_BUCKETS + 1;
    const snapshots = new Map<number, string>();
    const journals = new Map<number, { seq: number; name: string }[]>();
    for (const name of await readdir(dir)) {
      const snapshot = /^(\d+)\.bloom$/.exec(name);
      const journal = /^(\d+)-(\d+)\.ids$/.exec(name);
      const bucket = Number((snapshot ?? journal)?.[1] ?? Number.NaN);
      // Anything else (a snapshot's temporary file, the 48-bit hourly files of the earlier
      // format) is not read; the writer's bounded check still stores each event once.
      if (!(bucket >= oldest)) {
        await rm(path.join(dir, name), { force: true });
        continue;
      }
      if (snapshot) snapshots.set(bucket, name);
      else if (journal) journals.set(bucket, [...(journals.get(bucket) ?? []), { seq: Number(journal[2]), name }]);
    }
    for (const bucket of new Set([...snapshots.keys(), ...journals.keys()])) {
      let covered = -1;
      let state: Bucket | undefined;
      const snapshotName = snapshots.get(bucket);
      if (snapshotName) {
        const bytes = await readFile(path.join(dir, snapshotName));
        if (bytes.length >= HEADER_BYTES && bytes.readUInt32LE(0) === MAGIC) {
          const blocksInFile = bytes.readUInt32LE(4);
          if (bytes.length === HEADER_BYTES + blocksInFile * BLOCK_WORDS * 4) {
            covered = bytes.readUInt32LE(8);
            // A copy aligned for the typed array (readFile's buffer may share a pool).
            const words = new Uint32Array(blocksInFile * BLOCK_WORDS);
            new Uint8Array(words.buffer).set(bytes.subarray(HEADER_BYTES));
            state = { words, blocks: blocksInFile, seq: covered + 1, journalBytes: 0 };
          }
        }
      }
      // Journals only: the bucket is rebuilt at the current size (the hashes do not depend on it).
      state ??= { words: new Uint32Array(blocks * BLOCK_WORDS), blocks, seq: 0, journalBytes: 0 };
      for (const { seq, name } of (journals.get(bucket) ?? []).sort((x, y) => x.seq - y.seq)) {
        if (seq <= covered) {
          await rm(path.join(dir, name), { force: true });
          continue;
        }
        const bytes = await readFile(path.join(dir, name));
        // A torn last entry (a crash mid-append) is ignored: its ids were never reported recorded.
        for (let offset = 0; offset + HASH_BYTES <= bytes.length; offset += HASH_BYTES) {
          filter.#set(state, bytes.readUInt32LE(offset), bytes.readUInt32LE(offset + 4));
        }
        state.journalBytes += bytes.length;
        // New ids go to a journal of their own, never after a possibly torn entry.
        state.seq = Math.max(state.seq, seq + 1);
      }
      filter.#buckets.set(bucket, state);
    }
    return filter;
  }

  /** Whether the id may have been recorded within the window (never false for one that was). */
  mayContain(a: number, b: number): boolean {
    const bits = bitsOf(a, b, this.#bits);
    for (const bucket of this.#buckets.values()) {
      const base = blockOf(a, bucket.blocks) * BLOCK_WORDS;
      let all = true;
      for (let i = 0; i < BITS_SET; i++) {
        const bit = bits[i] as number;
        if (((bucket.words[base + (bit >>> 5)] as number) & (1 << (bit & 31))) === 0) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
    return false;
  }

  /**
   * Records ids (pairs of hash halves: a0, b0, a1, b1, …) in the current bucket, durable when
   * this resolves. Called by one shipper at a time.
   */
  async add(hashes: Uint32Array, now = Date.now()): Promise<void> {
    if (hashes.length === 0) return;
    const current = bucketOf(now);
    let bucket = this.#buckets.get(current);
    if (!bucket) {
      await this.#closeBucketsBefore(current);
      bucket = { words: new Uint32Array(this.blocks * BLOCK_WORDS), blocks: this.blocks, seq: 0, journalBytes: 0 };
      this.#buckets.set(current, bucket);
    }
    const journal = path.join(this.dir, `${current}-${bucket.seq}.ids`);
    const created = bucket.journalBytes === 0;
    const handle = await open(journal, 'a');
    try {
      await handle.write(new Uint8Array(hashes.buffer, hashes.byteOffset, hashes.byteLength));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    if (created) await syncDirectory(this.dir); // the new journal itself must survive a machine crash
    bucket.journalBytes += hashes.byteLength;
    for (let i = 0; i + 1 < hashes.length; i += 2) this.#set(bucket, hashes[i] as number, hashes[i + 1] as number);
    if (bucket.journalBytes * 2 >= bucket.words.byteLength) await this.#snapshot(current, bucket);
  }

  /** Bytes of memory the filters take. */
  get bytes(): number {
    let total = 0;
    for (const bucket of this.#buckets.values()) total += bucket.words.byteLength;
    return total;
  }

  #set(bucket: Bucket, a: number, b: number): void {
    const base = blockOf(a, bucket.blocks) * BLOCK_WORDS;
    const bits = bitsOf(a, b, this.#bits);
    for (let i = 0; i < BITS_SET; i++) {
      const bit = bits[i] as number;
      const word = base + (bit >>> 5);
      bucket.words[word] = (bucket.words[word] as number) | (1 << (bit & 31));
    }
  }

  /** Snapshots the buckets that just ended (so their journals go) and forgets those past the window. */
  async #closeBucketsBefore(current: number): Promise<void> {
    for (const [number, bucket] of [...this.#buckets]) {
      if (number <= current - ID_BUCKETS) {
        this.#buckets.delete(number);
        for (const name of await readdir(this.dir)) {
          if (name === `${number}.bloom` || name.startsWith(`${number}-`)) await rm(path.join(this.dir, name), { force: true });
        }
      } else if (bucket.journalBytes > 0) {
        await this.#snapshot(number, bucket);
      }
    }
  }

  /**
   * Writes the bucket's filter, which holds every id of its journals so far, then removes those
   * journals; new ids go to the next journal. Written to a temporary file and renamed, so a crash
   * leaves the previous snapshot and the journals, never a torn filter.
   */
  async #snapshot(number: number, bucket: Bucket): Promise<void> {
    const covered = bucket.seq;
    bucket.seq += 1;
    bucket.journalBytes = 0;
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(bucket.blocks, 4);
    header.writeUInt32LE(covered, 8);
    const temporary = path.join(this.dir, `${number}.bloom.tmp`);
    const handle = await open(temporary, 'w');
    try {
      // Bits set while this is written only make the snapshot a superset: they are journaled too.
      await handle.writev([header, new Uint8Array(bucket.words.buffer, bucket.words.byteOffset, bucket.words.byteLength)]);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path.join(this.dir, `${number}.bloom`));
    await syncDirectory(this.dir);
    for (let seq = 0; seq <= covered; seq++) await rm(path.join(this.dir, `${number}-${seq}.ids`), { force: true });
  }
}
