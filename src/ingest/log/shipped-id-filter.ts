import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { BITS_SET, BLOCK_WORDS, bitsOf, blockOf, bucketOf, ID_BUCKETS } from '../id-filter.js';
import { syncDirectory } from './fsync.js';

const MAGIC = 0x31424449; // "IDB1"
const HEADER_BYTES = 16;
const HASH_BYTES = 8;
/**
 * A start replays a bucket's journal (up to half a filter: 27 M ids at 10,000 ids/s). Applied in
 * the order written, each id is a random access into a filter of hundreds of MB: 0.77 µs an id on
 * this VM, 12 s for 15.6 M ids. Applied in block order, after a counting sort on the top bits of
 * the hash (which pick the block), the accesses move through the filter once.
 */
const REPLAY_PARTITION_BITS = 12;

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
 * snapshots and replays at most that half-filter of journal, in block order: seconds for a full window at
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
    // The snapshots are read all at once (on libuv's pool: the copying and page faults of GBs
    // use both cores), the journals then replayed one bucket at a time.
    const buckets = [...new Set([...snapshots.keys(), ...journals.keys()])];
    const read = await Promise.all(
      buckets.map((bucket) => {
        const name = snapshots.get(bucket);
        return name === undefined ? undefined : readSnapshot(path.join(dir, name));
      }),
    );
    for (const [i, bucket] of buckets.entries()) {
      const snapshot = read[i];
      const covered = snapshot?.covered ?? -1;
      let state: Bucket | undefined = snapshot && { words: snapshot.words, blocks: snapshot.blocks, seq: covered + 1, journalBytes: 0 };
      // Journals only: the bucket is rebuilt at the current size (the hashes do not depend on it).
      state ??= { words: new Uint32Array(blocks * BLOCK_WORDS), blocks, seq: 0, journalBytes: 0 };
      const replay: Uint32Array[] = [];
      for (const { seq, name } of (journals.get(bucket) ?? []).sort((x, y) => x.seq - y.seq)) {
        if (seq <= covered) {
          await rm(path.join(dir, name), { force: true });
          continue;
        }
        const bytes = await readFile(path.join(dir, name));
        // A torn last entry (a crash mid-append) is ignored: its ids were never reported recorded.
        // Read as 32-bit words in the platform's order, as add() wrote them.
        const whole = bytes.length - (bytes.length % HASH_BYTES);
        replay.push(new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + whole)));
        state.journalBytes += bytes.length;
        // New ids go to a journal of their own, never after a possibly torn entry.
        state.seq = Math.max(state.seq, seq + 1);
      }
      filter.#replay(state, replay);
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

  /** Sets the ids of journals (pairs of hash halves) in block order (REPLAY_PARTITION_BITS). */
  #replay(bucket: Bucket, journals: Uint32Array[]): void {
    const shift = 32 - REPLAY_PARTITION_BITS;
    const starts = new Uint32Array((1 << REPLAY_PARTITION_BITS) + 1);
    let ids = 0;
    for (const hashes of journals) {
      for (let i = 0; i + 1 < hashes.length; i += 2) {
        const next = ((hashes[i] as number) >>> shift) + 1;
        starts[next] = (starts[next] as number) + 1;
      }
      ids += hashes.length >>> 1;
    }
    for (let p = 1; p < starts.length; p++) starts[p] = (starts[p] as number) + (starts[p - 1] as number);
    const sorted = new Uint32Array(ids * 2);
    for (const hashes of journals) {
      for (let i = 0; i + 1 < hashes.length; i += 2) {
        const a = hashes[i] as number;
        const partition = a >>> shift;
        const at = starts[partition] as number;
        starts[partition] = at + 1;
        sorted[2 * at] = a;
        sorted[2 * at + 1] = hashes[i + 1] as number;
      }
    }
    for (let i = 0; i + 1 < sorted.length; i += 2) this.#set(bucket, sorted[i] as number, sorted[i + 1] as number);
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

/**
 * A snapshot's filter, read straight into its typed array (no second copy of a filter of
 * hundreds of MB), or undefined when the file is not a whole snapshot.
 */
async function readSnapshot(file: string): Promise<{ words: Uint32Array; blocks: number; covered: number } | undefined> {
  const handle = await open(file, 'r');
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    const { size } = await handle.stat();
    if (size < HEADER_BYTES || (await handle.read(header, 0, HEADER_BYTES, 0)).bytesRead !== HEADER_BYTES) return undefined;
    if (header.readUInt32LE(0) !== MAGIC) return undefined;
    const blocks = header.readUInt32LE(4);
    if (size !== HEADER_BYTES + blocks * BLOCK_WORDS * 4) return undefined;
    // Not zero-filled first: every byte is read from the file below (or the snapshot is refused).
    const bytes = Buffer.allocUnsafeSlow(blocks * BLOCK_WORDS * 4);
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, blocks * BLOCK_WORDS);
    // At most 1 GiB a read (the limit of one read call).
    for (let offset = 0; offset < bytes.length; ) {
      const { bytesRead } = await handle.read(bytes, offset, Math.min(bytes.length - offset, 2 ** 30), HEADER_BYTES + offset);
      if (bytesRead === 0) return undefined;
      offset += bytesRead;
    }
    return { words, blocks, covered: header.readUInt32LE(8) };
  } finally {
    await handle.close();
  }
}
