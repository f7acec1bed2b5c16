import { Transform, type TransformCallback } from 'node:stream';
import { compress as lz4Compress, decompress as lz4Decompress } from 'lz4-wasm-nodejs';
import { CH, chError } from './ch-errors.js';
import { cityHash128 } from './cityhash102.js';

/*
 * ClickHouse's own compressed block format, which the HTTP interface speaks with `compress=1`
 * (the answer) and `decompress=1` (the request body), and which JDBC drivers ask for by default.
 * Each block is:
 *   16 bytes  CityHash128 v1.0.2 of the rest of the block (low 64 bits, then high, little-endian)
 *    1 byte   method: 0x82 LZ4, 0x02 none (0x90 ZSTD and others are not read here)
 *    4 bytes  compressed size, these 9 header bytes included (UInt32 LE)
 *    4 bytes  uncompressed size (UInt32 LE)
 *    …        the LZ4 block (raw, no frame)
 * Proven against Debian's clickhouse-compressor (test/api/clickhouse-native-compression.test.ts).
 */

const CHECKSUM_BYTES = 16;
const HEADER_BYTES = 9;
const METHOD_LZ4 = 0x82;
const METHOD_NONE = 0x02;
/** Bytes of output per block, as a server's CompressedWriteBuffer (DBMS_DEFAULT_BUFFER_SIZE, 1 MiB). */
export const NATIVE_BLOCK_BYTES = 1024 * 1024;

/** One block of `data` (at most 4 GiB), LZ4-compressed and checksummed. */
export async function compressBlock(data: Uint8Array): Promise<Buffer> {
  // lz4-wasm-nodejs (lz4_flex in WebAssembly: no native binary, so it loads wherever Node runs,
  // the production image too) writes a size-prepended block: its first 4 bytes are the input's length.
  const packed = Buffer.from(lz4Compress(data)).subarray(4);
  const block = Buffer.allocUnsafe(CHECKSUM_BYTES + HEADER_BYTES + packed.length);
  block[CHECKSUM_BYTES] = METHOD_LZ4;
  block.writeUInt32LE(HEADER_BYTES + packed.length, CHECKSUM_BYTES + 1);
  block.writeUInt32LE(data.byteLength, CHECKSUM_BYTES + 5);
  packed.copy(block, CHECKSUM_BYTES + HEADER_BYTES);
  const [low, high] = cityHash128(block.subarray(CHECKSUM_BYTES));
  block.writeBigUInt64LE(low, 0);
  block.writeBigUInt64LE(high, 8);
  return block;
}

/**
 * The answer of `compress=1`: the bytes written to it leave as compressed blocks of up to
 * NATIVE_BLOCK_BYTES, each sent once it is full and the last at the end, as a server's
 * CompressedWriteBuffer does.
 */
export function nativeCompressor(): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  const take = (bytes: number): Buffer => {
    const all = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, heldBytes);
    const block = all.subarray(0, bytes);
    const rest = all.subarray(bytes);
    held = rest.length > 0 ? [rest] : [];
    heldBytes = rest.length;
    return block;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      held.push(chunk);
      heldBytes += chunk.length;
      void (async () => {
        while (heldBytes >= NATIVE_BLOCK_BYTES) this.push(await compressBlock(take(NATIVE_BLOCK_BYTES)));
      })().then(() => done(), done);
    },
    flush(done: TransformCallback) {
      void (async () => {
        if (heldBytes > 0) this.push(await compressBlock(take(heldBytes)));
      })().then(() => done(), done);
    },
  });
}

/**
 * The content of a body in compressed blocks (`decompress=1`), of `maxBytes` at most:
 * CHECKSUM_DOESNT_MATCH for a damaged block, UNKNOWN_COMPRESSION_METHOD for one not in LZ4 or
 * stored, CANNOT_DECOMPRESS for a cut or malformed one, and a syntax error past the bound (the
 * query size's, which the caller gives).
 */
export async function decompressBlocks(body: Buffer, maxBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  let at = 0;
  while (at < body.length) {
    if (body.length - at < CHECKSUM_BYTES + HEADER_BYTES) {
      throw chError(CH.CANNOT_DECOMPRESS, 'Cannot decompress: the last compressed block is cut short');
    }
    const method = body[at + CHECKSUM_BYTES] as number;
    const compressedSize = body.readUInt32LE(at + CHECKSUM_BYTES + 1);
    const size = body.readUInt32LE(at + CHECKSUM_BYTES + 5);
    if (compressedSize < HEADER_BYTES || at + CHECKSUM_BYTES + compressedSize > body.length) {
      throw chError(CH.CANNOT_DECOMPRESS, `Cannot decompress: a compressed block claims ${compressedSize} bytes, more than the body holds`);
    }
    const framed = body.subarray(at + CHECKSUM_BYTES, at + CHECKSUM_BYTES + compressedSize);
    const [low, high] = cityHash128(framed);
    if (body.readBigUInt64LE(at) !== low || body.readBigUInt64LE(at + 8) !== high) {
      throw chError(CH.CHECKSUM_DOESNT_MATCH, "Checksum doesn't match: corrupted data of a compressed block");
    }
    total += size;
    if (total > maxBytes) throw chError(CH.SYNTAX_ERROR, `Max query size exceeded: the query is larger than ${maxBytes} bytes`);
    const payload = framed.subarray(HEADER_BYTES);
    if (method === METHOD_NONE) {
      if (payload.length !== size) throw chError(CH.CANNOT_DECOMPRESS, 'Cannot decompress: a stored block has the wrong size');
      parts.push(payload);
    } else if (method === METHOD_LZ4) {
      parts.push(await lz4Block(payload, size));
    } else {
      throw chError(
        CH.UNKNOWN_COMPRESSION_METHOD,
        `Unknown compression method: 0x${method.toString(16)}; this interface reads LZ4 (0x82) and uncompressed (0x02) blocks`,
      );
    }
    at += CHECKSUM_BYTES + compressedSize;
  }
  return Buffer.concat(parts, total);
}

/** One raw LZ4 block of `size` bytes decompressed; lz4-wasm-nodejs reads it with its size prepended. */
async function lz4Block(payload: Buffer, size: number): Promise<Buffer> {
  const prepended = Buffer.allocUnsafe(4 + payload.length);
  prepended.writeUInt32LE(size, 0);
  payload.copy(prepended, 4);
  let out: Buffer;
  try {
    out = Buffer.from(lz4Decompress(prepended));
  } catch (error) {
    throw chError(CH.CANNOT_DECOMPRESS, `Cannot decompress an LZ4 block: ${(error as Error).message}`);
  }
  if (out.length !== size) throw chError(CH.CANNOT_DECOMPRESS, 'Cannot decompress: an LZ4 block has the wrong size');
  return out;
}
