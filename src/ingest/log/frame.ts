import { crc32 } from 'node:zlib';

/**
 * One record of the ingest log: the events of one group commit (every request whose events were
 * made durable by one write, O_DSYNC).
 *
 *   offset 0  u32  payload length in bytes
 *   offset 4  u32  crc32 of bytes 8 .. end (position, time, count and payload)
 *   offset 8  u64  log position of this frame (where its first byte sits in the log stream)
 *   offset 16 f64  append time (ms since the epoch): the shipper measures visibility lag from it
 *   offset 24 u32  number of events
 *   offset 28      payload: one line per event, each followed by "\n": the JSONEachRow row of its
 *                  insert (log-lines.ts), or in logs of older versions the event's JSON
 *
 * The position inside the checksum lets recovery tell a frame from stale bytes of an earlier,
 * failed write at another place; the length and checksum let it detect a torn tail.
 */
export const FRAME_HEADER_BYTES = 28;
/** Larger than any frame the service writes; a header claiming more is damage, not data. */
export const MAX_FRAME_PAYLOAD_BYTES = 256 * 1024 * 1024;

export type Frame = {
  position: number;
  appendedAt: number;
  count: number;
  /** The newline-separated lines, one per event (log-lines.ts). */
  payload: Buffer;
  /** Header plus payload. */
  bytes: number;
};

/** The header of a frame whose payload is `parts` (already newline-terminated documents). */
export function encodeFrameHeader(position: number, appendedAt: number, count: number, parts: Buffer[]): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  let length = 0;
  for (const part of parts) length += part.length;
  header.writeUInt32LE(length, 0);
  header.writeBigUInt64LE(BigInt(position), 8);
  header.writeDoubleLE(appendedAt, 16);
  header.writeUInt32LE(count, 24);
  let crc = crc32(header.subarray(8, FRAME_HEADER_BYTES));
  for (const part of parts) crc = crc32(part, crc);
  header.writeUInt32LE(crc, 4);
  return header;
}

export type DecodeResult =
  | { kind: 'frame'; frame: Frame }
  /** Not enough bytes left for the frame the header announces (or for a header): a torn tail. */
  | { kind: 'short' }
  /** The bytes are not a frame written at this position: a torn or damaged tail. */
  | { kind: 'bad'; why: string };

/** Decodes the frame at `offset` of `buffer`, expected at log position `position`. */
export function decodeFrame(buffer: Buffer, offset: number, position: number): DecodeResult {
  if (buffer.length - offset < FRAME_HEADER_BYTES) return { kind: 'short' };
  const length = buffer.readUInt32LE(offset);
  if (length > MAX_FRAME_PAYLOAD_BYTES) return { kind: 'bad', why: `length ${length} out of range` };
  const end = offset + FRAME_HEADER_BYTES + length;
  if (end > buffer.length) return { kind: 'short' };
  const expectedCrc = buffer.readUInt32LE(offset + 4);
  if (crc32(buffer.subarray(offset + 8, end)) !== expectedCrc) return { kind: 'bad', why: 'checksum mismatch' };
  const framePosition = Number(buffer.readBigUInt64LE(offset + 8));
  if (framePosition !== position) return { kind: 'bad', why: `frame of position ${framePosition} found at ${position}` };
  return {
    kind: 'frame',
    frame: {
      position,
      appendedAt: buffer.readDoubleLE(offset + 16),
      count: buffer.readUInt32LE(offset + 24),
      payload: buffer.subarray(offset + FRAME_HEADER_BYTES, end),
      bytes: FRAME_HEADER_BYTES + length,
    },
  };
}

/** The JSON documents of a payload. */
export function* payloadDocuments(payload: Buffer): Generator<string> {
  let start = 0;
  for (;;) {
    const newline = payload.indexOf(10, start);
    if (newline < 0) return;
    yield payload.toString('utf8', start, newline);
    start = newline + 1;
  }
}
