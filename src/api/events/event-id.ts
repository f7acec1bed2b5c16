import { randomFillSync } from 'node:crypto';
import { V7Generator } from 'uuidv7';

/**
 * Random 32-bit words from the CSPRNG, drawn 4 KiB at a time. uuidv7's default source refills
 * 32 bytes through Web Crypto's getRandomValues every few ids, whose argument checks cost more
 * than the bytes: on POST /events/track it was about 8 µs per request in the profile
 * (BENCHMARKS.md, "Issue 31: request cost"). The words are as random as before, only fetched in
 * larger draws.
 */
class PooledRandom {
  readonly #words = new Uint32Array(1024);
  #next = this.#words.length;

  nextUint32(): number {
    if (this.#next === this.#words.length) {
      randomFillSync(this.#words);
      this.#next = 0;
    }
    return this.#words[this.#next++] as number;
  }
}

const generator = new V7Generator(new PooledRandom());

/** A server-assigned event id: a UUIDv7 (time-ordered, as the SDK's own ids). */
export function newEventId(): string {
  return generator.generate().toString();
}
