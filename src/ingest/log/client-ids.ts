import { idHash } from '../id-filter.js';
import { ShippedIdFilter } from './shipped-id-filter.js';

/**
 * A client eventId accepted into the log and not yet shipped: the event first accepted under it,
 * as the line written to the log (log-lines.ts; half the memory of the object; parsed only for a
 * retry), when
 * it is durable, and the id's hash when the request computed it (so shipping it costs no second
 * hashing; a claim rebuilt from the log at start has none).
 */
export type Claim = { json: string; durable: Promise<unknown>; hash?: IdHash };

/** idHash of an event key: its two 32-bit halves. */
export type IdHash = [number, number];

/**
 * The client eventIds the log has seen recently, so that a retry is recognised without asking
 * ClickHouse for every ordinary event:
 * - events in the log, not yet shipped: in memory with the event itself (rebuilt from the log
 *   on start), so the answer to a retry needs no lookup at all;
 * - events shipped within the idempotency window (24 to 28 hours): in a ShippedIdFilter under
 *   `client-ids/`, 3 bytes per id. A hit means "probably stored": only then is ClickHouse asked
 *   for the event, and only a stored event found there is answered as a duplicate. A miss is
 *   certain (no false negatives), so a new eventId never waits for ClickHouse.
 */
export class ClientIdIndex {
  readonly #claims = new Map<string, Claim>();

  private constructor(private readonly shipped: ShippedIdFilter) {}

  /** `blocks`: the size of a new bucket's filter (blocksPerBucket of IDEMPOTENCY_IDS_PER_SECOND). */
  static async open(dir: string, blocks: number, now = Date.now()): Promise<ClientIdIndex> {
    return new ClientIdIndex(await ShippedIdFilter.open(dir, blocks, now));
  }

  claim(key: string): Claim | undefined {
    return this.#claims.get(key);
  }

  setClaim(key: string, claim: Claim): void {
    this.#claims.set(key, claim);
  }

  /** Forgets a claim whose events were not made durable (only if it is still that claim). */
  releaseClaim(key: string, claim: Claim): void {
    if (this.#claims.get(key) === claim) this.#claims.delete(key);
  }

  /** Whether the id (its idHash) may have been shipped within the window (never false for one that was). */
  maybeShipped([a, b]: IdHash): boolean {
    return this.shipped.mayContain(a, b);
  }

  /** Bytes of memory the shipped ids' filters take. */
  get shippedBytes(): number {
    return this.shipped.bytes;
  }

  /** Client ids not yet shipped, held in memory. */
  get pendingCount(): number {
    return this.#claims.size;
  }

  /**
   * Records keys whose events are now in ClickHouse: durable in the filter's journal first, then
   * their claims are dropped (a retry from now on finds the filter's hit and looks the event up).
   */
  async markShipped(keys: string[], now = Date.now()): Promise<void> {
    if (keys.length === 0) return;
    const hashes = new Uint32Array(keys.length * 2);
    keys.forEach((key, i) => {
      const [a, b] = this.#claims.get(key)?.hash ?? idHash(key);
      hashes[2 * i] = a;
      hashes[2 * i + 1] = b;
    });
    await this.shipped.add(hashes, now);
    for (const key of keys) this.#claims.delete(key);
  }
}
