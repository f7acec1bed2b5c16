/**
 * UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Written here rather than
 * imported because the SDK has no runtime dependencies. Ids made in the same millisecond stay in
 * order (RFC 9562 method 3: the 12-bit `rand_a` field is a counter seeded at random each
 * millisecond), so a user's events sort in tracking order by eventId too.
 */
let lastMs = -1;
let counter = 0;

function randomBytes(count: number): Uint8Array {
  const bytes = new Uint8Array(count);
  crypto.getRandomValues(bytes);
  return bytes;
}

export function uuidv7(now: number = Date.now()): string {
  let ms = now;
  if (ms > lastMs) {
    lastMs = ms;
    // Seeded below 0x800, so at least 2,048 ids fit in one millisecond before it borrows the next.
    counter = (randomBytes(2)[0] as number) << 3;
  } else {
    ms = lastMs;
    counter++;
    if (counter > 0xfff) {
      // The counter ran out: borrow the next millisecond rather than repeat or go backwards.
      lastMs = ++ms;
      counter = 0;
    }
  }
  const bytes = randomBytes(16);
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(ms / 2 ** (8 * (5 - i))) & 0xff;
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  let hex = '';
  for (const byte of bytes) hex += (byte + 0x100).toString(16).slice(1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
