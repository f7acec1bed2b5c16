/**
 * CityHash128 in the variant ClickHouse checks its compressed blocks with: Google's CityHash
 * v1.0.2 (ClickHouse keeps that version, contrib/cityhash102; v1.0.3 and later hash differently,
 * so a generic CityHash library does not fit). No npm package offers this variant, so it is
 * written here from the reference algorithm and proven against clickhouse-compressor
 * (test/api/clickhouse-native-compression.test.ts). 64-bit arithmetic in BigInt, wrapped to 64 bits,
 * except the loop over each 128 bytes, where nearly all the time goes: that is in 32-bit halves.
 */

const k0 = 0xc3a5c85c97cb3127n;
const k1 = 0xb492b66fbe98f273n;
const k2 = 0x9ae16a3b2f90404fn;
const k3 = 0xc949d7c7509e6557n;
const kMul = 0x9ddfea08eb382d69n;

type Pair = [bigint, bigint];

// BigInt.asUintN wraps to 64 bits about twice as fast as masking (measured on Node 20).
const add = (a: bigint, b: bigint) => BigInt.asUintN(64, a + b);
const mul = (a: bigint, b: bigint) => BigInt.asUintN(64, a * b);
const rotate = (value: bigint, shift: number) =>
  shift === 0 ? value : BigInt.asUintN(64, (value >> BigInt(shift)) | (value << BigInt(64 - shift)));
const shiftMix = (value: bigint) => value ^ (value >> 47n);

function hash128to64(low: bigint, high: bigint): bigint {
  let a = mul(low ^ high, kMul);
  a ^= a >> 47n;
  let b = mul(high ^ a, kMul);
  b ^= b >> 47n;
  return mul(b, kMul);
}
const hashLen16 = hash128to64;

function hashLen0to16(view: DataView, at: number, len: number): bigint {
  if (len > 8) {
    const a = view.getBigUint64(at, true);
    const b = view.getBigUint64(at + len - 8, true);
    // RotateByAtLeast1 rotates by len, which is 9..16 here.
    return hashLen16(a, rotate(add(b, BigInt(len)), len)) ^ b;
  }
  if (len >= 4) {
    const a = BigInt(view.getUint32(at, true));
    return hashLen16(add(BigInt(len), BigInt.asUintN(64, a << 3n)), BigInt(view.getUint32(at + len - 4, true)));
  }
  if (len > 0) {
    const a = view.getUint8(at);
    const b = view.getUint8(at + (len >> 1));
    const c = view.getUint8(at + len - 1);
    const y = BigInt((a + (b << 8)) >>> 0);
    const z = BigInt((len + (c << 2)) >>> 0);
    return mul(shiftMix(mul(y, k2) ^ mul(z, k3)), k2);
  }
  return k2;
}

function weakHashLen32WithSeeds(view: DataView, at: number, seedA: bigint, seedB: bigint): Pair {
  const w = view.getBigUint64(at, true);
  const x = view.getBigUint64(at + 8, true);
  const y = view.getBigUint64(at + 16, true);
  const z = view.getBigUint64(at + 24, true);
  let a = add(seedA, w);
  let b = rotate(add(add(seedB, a), z), 21);
  const c = a;
  a = add(add(a, x), y);
  b = add(b, rotate(a, 44));
  return [add(a, z), add(b, c)];
}

function cityMurmur(view: DataView, start: number, len: number, seedLow: bigint, seedHigh: bigint): Pair {
  let a = seedLow;
  let b = seedHigh;
  let c: bigint;
  let d: bigint;
  let at = start;
  let left = len - 16;
  if (left <= 0) {
    a = mul(shiftMix(mul(a, k1)), k1);
    c = add(mul(b, k1), hashLen0to16(view, at, len));
    d = shiftMix(add(a, len >= 8 ? view.getBigUint64(at, true) : c));
  } else {
    c = hashLen16(add(view.getBigUint64(at + len - 8, true), k1), a);
    d = hashLen16(add(b, BigInt(len)), add(c, view.getBigUint64(at + len - 16, true)));
    a = add(a, d);
    do {
      a ^= mul(shiftMix(mul(view.getBigUint64(at, true), k1)), k1);
      a = mul(a, k1);
      b ^= a;
      c ^= mul(shiftMix(mul(view.getBigUint64(at + 8, true), k1)), k1);
      c = mul(c, k1);
      d ^= c;
      at += 16;
      left -= 16;
    } while (left > 0);
  }
  a = hashLen16(a, c);
  b = hashLen16(d, b);
  return [a ^ b, hashLen16(b, a)];
}

function cityHash128WithSeed(view: DataView, start: number, length: number, seedLow: bigint, seedHigh: bigint): Pair {
  if (length < 128) return cityMurmur(view, start, length, seedLow, seedHigh);
  let len = length;
  let at = start;
  let x = seedLow;
  let y = seedHigh;
  let z = mul(BigInt(len), k1);
  const v: Pair = [0n, 0n];
  const w: Pair = [0n, 0n];
  v[0] = add(mul(rotate(y ^ k1, 49), k1), view.getBigUint64(at, true));
  v[1] = add(mul(rotate(v[0], 42), k1), view.getBigUint64(at + 8, true));
  w[0] = add(mul(rotate(add(y, z), 35), k1), x);
  w[1] = mul(rotate(add(x, view.getBigUint64(at + 88, true)), 53), k1);
  // The bulk of a block: 128 bytes a pass, in 32-bit halves (BigInt here was ~10x slower).
  const state: [number, number][] = [x, y, z, v[0], v[1], w[0], w[1]].map(split);
  at = bulk(view, at, len, state);
  len %= 128;
  [x, y, z, v[0], v[1], w[0], w[1]] = state.map(join) as [bigint, bigint, bigint, bigint, bigint, bigint, bigint];
  y = add(y, add(mul(rotate(w[0], 37), k0), z));
  x = add(x, mul(rotate(add(v[0], z), 49), k0));
  // The last 0..127 bytes, in chunks of 32 from the end.
  for (let tailDone = 0; tailDone < len; ) {
    tailDone += 32;
    y = add(mul(rotate(BigInt.asUintN(64, y - x), 42), k0), v[1]);
    w[0] = add(w[0], view.getBigUint64(at + len - tailDone + 16, true));
    x = add(mul(rotate(x, 49), k0), w[0]);
    w[0] = add(w[0], v[0]);
    const nextV = weakHashLen32WithSeeds(view, at + len - tailDone, v[0], v[1]);
    v[0] = nextV[0];
    v[1] = nextV[1];
  }
  x = hashLen16(x, v[0]);
  y = hashLen16(y, w[0]);
  return [add(hashLen16(add(x, v[1]), w[1]), y), hashLen16(add(x, w[1]), add(y, v[1]))];
}

/** CityHash128 v1.0.2 of `data`: [low 64 bits, high 64 bits], as ClickHouse writes them (low first, little-endian). */
export function cityHash128(data: Uint8Array): Pair {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const len = data.byteLength;
  if (len >= 16) return cityHash128WithSeed(view, 16, len - 16, view.getBigUint64(0, true) ^ k3, view.getBigUint64(8, true));
  if (len >= 8) {
    return cityHash128WithSeed(view, 0, 0, view.getBigUint64(0, true) ^ mul(BigInt(len), k0), view.getBigUint64(len - 8, true) ^ k1);
  }
  return cityHash128WithSeed(view, 0, len, k0, k1);
}

/*
 * The 128-byte loop in 32-bit halves: a 64-bit value is a high and a low uint32, and each step
 * below leaves its result in (H, L). Checked with the rest against clickhouse-compressor.
 */
let H = 0;
let L = 0;
const K1H = 0xb492b66f;
const K1L = 0xbe98f273;

const split = (value: bigint): [number, number] => [Number(value >> 32n), Number(value & 0xffffffffn)];
const join = ([high, low]: [number, number]): bigint => (BigInt(high) << 32n) | BigInt(low);

function add64(ah: number, al: number, bh: number, bl: number): void {
  const low = al + bl;
  L = low >>> 0;
  H = (ah + bh + (low > 0xffffffff ? 1 : 0)) >>> 0;
}

/** The low 64 bits of the product, the low halves multiplied in 16-bit pieces so no partial product loses a bit. */
function mul64(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const middle = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  L = (((middle & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  H = (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (middle >>> 16) + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** Rotate right by 0 < shift < 64. */
function rotr64(high: number, low: number, shift: number): void {
  if (shift === 32) {
    H = low;
    L = high;
  } else if (shift < 32) {
    H = ((high >>> shift) | (low << (32 - shift))) >>> 0;
    L = ((low >>> shift) | (high << (32 - shift))) >>> 0;
  } else {
    const by = shift - 32;
    H = ((low >>> by) | (high << (32 - by))) >>> 0;
    L = ((high >>> by) | (low << (32 - by))) >>> 0;
  }
}

/** WeakHashLen32WithSeeds of the 32 bytes at `at`: the pair in (W0H, W0L), (W1H, W1L). */
let W0H = 0;
let W0L = 0;
let W1H = 0;
let W1L = 0;
function weak64(view: DataView, at: number, ah0: number, al0: number, bh0: number, bl0: number): void {
  add64(ah0, al0, view.getUint32(at + 4, true), view.getUint32(at, true));
  let ah = H;
  let al = L;
  add64(bh0, bl0, ah, al);
  add64(H, L, view.getUint32(at + 28, true), view.getUint32(at + 24, true));
  rotr64(H, L, 21);
  let bh = H;
  let bl = L;
  const ch = ah;
  const cl = al;
  add64(ah, al, view.getUint32(at + 12, true), view.getUint32(at + 8, true));
  add64(H, L, view.getUint32(at + 20, true), view.getUint32(at + 16, true));
  ah = H;
  al = L;
  rotr64(ah, al, 44);
  add64(bh, bl, H, L);
  bh = H;
  bl = L;
  add64(ah, al, view.getUint32(at + 28, true), view.getUint32(at + 24, true));
  W0H = H;
  W0L = L;
  add64(bh, bl, ch, cl);
  W1H = H;
  W1L = L;
}

/**
 * CityHash128WithSeed's unrolled loop over `length` (at least 128) bytes from `start`, on the state
 * x, y, z, v.first, v.second, w.first, w.second (updated in place); answers where it stopped.
 */
function bulk(view: DataView, start: number, length: number, state: [number, number][]): number {
  let [xh, xl] = state[0] as [number, number];
  let [yh, yl] = state[1] as [number, number];
  let [zh, zl] = state[2] as [number, number];
  let [v0h, v0l] = state[3] as [number, number];
  let [v1h, v1l] = state[4] as [number, number];
  let [w0h, w0l] = state[5] as [number, number];
  let [w1h, w1l] = state[6] as [number, number];
  let at = start;
  let len = length;
  do {
    for (let half = 0; half < 2; half += 1) {
      add64(xh, xl, yh, yl);
      add64(H, L, v0h, v0l);
      add64(H, L, view.getUint32(at + 20, true), view.getUint32(at + 16, true));
      rotr64(H, L, 37);
      mul64(H, L, K1H, K1L);
      xh = (H ^ w1h) >>> 0;
      xl = (L ^ w1l) >>> 0;
      add64(yh, yl, v1h, v1l);
      add64(H, L, view.getUint32(at + 52, true), view.getUint32(at + 48, true));
      rotr64(H, L, 42);
      mul64(H, L, K1H, K1L);
      yh = (H ^ v0h) >>> 0;
      yl = (L ^ v0l) >>> 0;
      rotr64((zh ^ w0h) >>> 0, (zl ^ w0l) >>> 0, 33);
      zh = H;
      zl = L;
      mul64(v1h, v1l, K1H, K1L);
      const ah = H;
      const al = L;
      add64(xh, xl, w0h, w0l);
      weak64(view, at, ah, al, H, L);
      const nv0h = W0H;
      const nv0l = W0L;
      const nv1h = W1H;
      const nv1l = W1L;
      add64(zh, zl, w1h, w1l);
      weak64(view, at + 32, H, L, yh, yl);
      w0h = W0H;
      w0l = W0L;
      w1h = W1H;
      w1l = W1L;
      v0h = nv0h;
      v0l = nv0l;
      v1h = nv1h;
      v1l = nv1l;
      const th = zh;
      const tl = zl;
      zh = xh;
      zl = xl;
      xh = th;
      xl = tl;
      at += 64;
    }
    len -= 128;
  } while (len >= 128);
  state.splice(0, 7, [xh, xl], [yh, yl], [zh, zl], [v0h, v0l], [v1h, v1l], [w0h, w0l], [w1h, w1l]);
  return at;
}
