import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { syncDirectory } from './fsync.js';

/**
 * How long a client eventId is remembered once its event is in ClickHouse: a retry within this
 * window is answered with the stored event. At least 24 hours (docs/ingestion.md); kept in hourly
 * files, so between 25 and 26 hours.
 */
export const SHIPPED_ID_WINDOW_HOURS = 25;
const HASH_BYTES = 6;
const HOUR_MS = 3_600_000;

/**
 * A client eventId accepted into the log and not yet shipped: the event first accepted under it,
 * as the JSON written to the log (half the memory of the object; parsed only for a retry), and
 * when it is durable.
 */
export type Claim = { json: string; durable: Promise<unknown> };

/** 48 bits of sha1 of the key: a number, so millions fit in a Set cheaply. */
function keyHash(key: string): number {
  return createHash('sha1').update(key).digest().readUIntLE(0, HASH_BYTES);
}

const hourOf = (ms: number) => Math.floor(ms / HOUR_MS);

/**
 * The client eventIds the log has seen recently, so that a retry is recognised without asking
 * ClickHouse for every ordinary event:
 * - events in the log, not yet shipped: in memory with the event itself (rebuilt from the log
 *   on start), so the answer to a retry needs no lookup at all;
 * - events shipped within the window: a 48-bit hash of each, durable in hourly files under
 *   `client-ids/`. A hit means "probably stored": only then is ClickHouse asked for the event.
 *   A miss is certain (no false negatives), so a new eventId never waits for ClickHouse.
 */
export class ClientIdIndex {
  readonly #claims = new Map<string, Claim>();
  readonly #shipped = new Map<number, Set<number>>();

  private constructor(private readonly dir: string) {}

  static async open(dir: string, now = Date.now()): Promise<ClientIdIndex> {
    await mkdir(dir, { recursive: true });
    const index = new ClientIdIndex(dir);
    const oldest = hourOf(now) - SHIPPED_ID_WINDOW_HOURS;
    for (const name of await readdir(dir)) {
      const match = /^(\d+)\.ids$/.exec(name);
      if (!match) continue;
      const hour = Number(match[1]);
      if (hour < oldest) {
        await rm(path.join(dir, name), { force: true });
        continue;
      }
      const bytes = await readFile(path.join(dir, name));
      const set = new Set<number>();
      // A torn last entry (shorter than HASH_BYTES) is ignored: its event is still checked
      // against ClickHouse when shipped, so at worst a retry is answered as a new event.
      for (let offset = 0; offset + HASH_BYTES <= bytes.length; offset += HASH_BYTES) set.add(bytes.readUIntLE(offset, HASH_BYTES));
      index.#shipped.set(hour, set);
    }
    return index;
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

  /** Whether the key was shipped within the window (a 48-bit hash: rarely a false positive). */
  maybeShipped(key: string): boolean {
    const hash = keyHash(key);
    for (const set of this.#shipped.values()) if (set.has(hash)) return true;
    return false;
  }

  /** Client ids not yet shipped, held in memory. */
  get pendingCount(): number {
    return this.#claims.size;
  }

  /**
   * Records keys whose events are now in ClickHouse: durable in this hour's file first, then
   * their claims are dropped (a retry from now on finds the hash and looks the event up).
   */
  async markShipped(keys: string[], now = Date.now()): Promise<void> {
    if (keys.length === 0) return;
    const hour = hourOf(now);
    const buffer = Buffer.allocUnsafe(keys.length * HASH_BYTES);
    const hashes = keys.map((key) => keyHash(key));
    for (const [i, hash] of hashes.entries()) buffer.writeUIntLE(hash, i * HASH_BYTES, HASH_BYTES);
    const handle = await open(path.join(this.dir, `${hour}.ids`), 'a');
    try {
      await handle.write(buffer);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    let set = this.#shipped.get(hour);
    if (!set) {
      await syncDirectory(this.dir); // the new hour's file itself must survive a machine crash
      set = new Set();
      this.#shipped.set(hour, set);
      await this.#expire(hour);
    }
    for (const hash of hashes) set.add(hash);
    for (const key of keys) this.#claims.delete(key);
  }

  async #expire(currentHour: number): Promise<void> {
    for (const hour of [...this.#shipped.keys()]) {
      if (hour >= currentHour - SHIPPED_ID_WINDOW_HOURS) continue;
      this.#shipped.delete(hour);
      await rm(path.join(this.dir, `${hour}.ids`), { force: true });
    }
  }
}
