/**
 * CityHash128 in the variant ClickHouse checks its compressed blocks with: Google's CityHash
 * v1.0.2 (ClickHouse keeps that version, contrib/cityhash102; v1.0.3 and later hash differently,
 * so a generic CityHash library does not fit). No npm package offers this variant, so it is
 * written here from the reference algorithm and proven against clickhouse-compressor
 * (test/api/clickhouse-native-compression.test.ts). 64-bit arithmetic in BigInt, wrapped to 64 bits.
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
  const round = () => {
    x = mul(rotate(add(add(add(x, y), v[0]), view.getBigUint64(at + 16, true)), 37), k1);
    y = mul(rotate(add(add(y, v[1]), view.getBigUint64(at + 48, true)), 42), k1);
    x ^= w[1];
    y ^= v[0];
    z = rotate(z ^ w[0], 33);
    const nextV = weakHashLen32WithSeeds(view, at, mul(v[1], k1), add(x, w[0]));
    const nextW = weakHashLen32WithSeeds(view, at + 32, add(z, w[1]), y);
    v[0] = nextV[0];
    v[1] = nextV[1];
    w[0] = nextW[0];
    w[1] = nextW[1];
    [z, x] = [x, z];
    at += 64;
  };
  do {
    round();
    round();
    len -= 128;
  } while (len >= 128);
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
