/**
 * The geometry shared by both memories of recently stored eventIds (the embedded log's
 * ShippedIdFilter and BullMQ mode's Redis filter): time buckets of blocked Bloom filters.
 *
 * - An id is remembered in the bucket of the time it was recorded (4 hours wide); the filters of
 *   the current bucket and of the 6 before it are consulted, so an id is remembered for at least
 *   24 and at most 28 hours: the idempotency window (docs/ingestion.md, "Idempotency window").
 * - Each bucket is a blocked Bloom filter: an id sets BITS_SET bits inside one 512-bit block (one
 *   cache line, or one short Redis string range), so a check costs one memory miss per bucket.
 *   At its capacity a bucket holds BITS_PER_ID bits (3 bytes) per id; a bucket answers "maybe"
 *   for an id it never saw about once in 16,000 (the 7 together: once in 2,400, measured), which
 *   costs one ClickHouse lookup that finds nothing, never a wrong answer. Past its capacity the
 *   filter only answers "maybe" more often. (20 bits and 14 bits set measured 4 times more.)
 * - Sized by the expected rate (IDEMPOTENCY_IDS_PER_SECOND): memory is fixed by the capacity,
 *   whatever the traffic.
 */
export const IDEMPOTENCY_WINDOW_HOURS = 24;
export const ID_BUCKET_MS = 4 * 3_600_000;
/** The current bucket and the 6 before it: 24 to 28 hours. */
export const ID_BUCKETS = 7;
/** How far back a lookup in ClickHouse's event_ids goes: the longest an id is remembered, plus margin. */
export const ID_LOOKBACK_MS = ID_BUCKETS * ID_BUCKET_MS + 3_600_000;

export const BLOCK_BITS = 512;
export const BLOCK_WORDS = BLOCK_BITS / 32;
const BITS_PER_ID = 24;
export const BITS_SET = 11;

export const bucketOf = (ms: number) => Math.floor(ms / ID_BUCKET_MS);

/** Blocks of one bucket's filter for this rate of new ids. */
export function blocksPerBucket(idsPerSecond: number): number {
  const ids = Math.max(1, idsPerSecond) * (ID_BUCKET_MS / 1000);
  return Math.max(64, Math.ceil((ids * BITS_PER_ID) / BLOCK_BITS));
}

/**
 * A 64-bit hash of a `project:eventId` key as two 32-bit halves (murmur3's mixing, two seeds):
 * fast, and stored as is (8 bytes) by the embedded filter's journal. Not keyed: a client that
 * crafts colliding ids only makes its own retries' checks go to ClickHouse more often.
 */
export function idHash(key: string): [number, number] {
  return [murmur32(key, SEED_A), murmur32(key, SEED_B)];
}

const SEED_A = 0x9747b28c;
const SEED_B = 0x1b873593;

/**
 * idHash(eventKey(projectId, eventId)) written into `out[at]` and `out[at + 1]`, without building
 * the key or an array: both seeds in one pass over the characters (their per-character mix does
 * not depend on the seed). Ingestion hashes every client eventId with it (log/log-sink.ts).
 */
export function idHashOf(projectId: string, eventId: string, out: Uint32Array, at: number): void {
  let a = SEED_A;
  let b = SEED_B;
  for (let i = 0; i < projectId.length; i++) {
    const k = murmurK(projectId.charCodeAt(i));
    a = murmurH(a, k);
    b = murmurH(b, k);
  }
  const colon = murmurK(58); // ':' of eventKey
  a = murmurH(a, colon);
  b = murmurH(b, colon);
  for (let i = 0; i < eventId.length; i++) {
    const k = murmurK(eventId.charCodeAt(i));
    a = murmurH(a, k);
    b = murmurH(b, k);
  }
  const length = projectId.length + 1 + eventId.length;
  out[at] = murmurFinal(a, length);
  out[at + 1] = murmurFinal(b, length);
}

function murmurK(code: number): number {
  const k = Math.imul(code, 0xcc9e2d51);
  return Math.imul((k << 15) | (k >>> 17), 0x1b873593);
}

function murmurH(h: number, k: number): number {
  const x = h ^ k;
  return (Math.imul((x << 13) | (x >>> 19), 5) + 0xe6546b64) | 0;
}

function murmurFinal(h: number, length: number): number {
  let x = h ^ length;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** MurmurHash3 (x86, 32-bit) of a string's UTF-16 code units, each one a block. */
function murmur32(key: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < key.length; i++) h = murmurH(h, murmurK(key.charCodeAt(i)));
  return murmurFinal(h, key.length);
}

/** The block of a bucket with `blocks` blocks that holds the id's bits (from the first half). */
export const blockOf = (a: number, blocks: number) => Math.floor((a / 0x1_0000_0000) * blocks);

/**
 * The BITS_SET bit positions (0-511) inside the block: each from its own mix of both halves, so
 * the positions of different ids are independent (an arithmetic progression inside the block
 * measured 10 times more false hits).
 */
export function bitsOf(a: number, b: number, out: Uint16Array = new Uint16Array(BITS_SET)): Uint16Array {
  let h = (b ^ Math.imul(a, 0x9e3779b1)) | 0;
  for (let i = 0; i < BITS_SET; i++) {
    h = (h + 0x6d2b79f5) | 0;
    let x = Math.imul(h ^ (h >>> 15), h | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    out[i] = (x ^ (x >>> 14)) & (BLOCK_BITS - 1);
  }
  return out;
}
