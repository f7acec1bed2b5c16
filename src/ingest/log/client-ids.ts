import { idHashOf } from '../id-filter.js';
import { ShippedIdFilter } from './shipped-id-filter.js';

/**
 * The client eventIds one request claimed, together: when its events are durable, and the ids'
 * hashes (idHashOf), two words per event of the request at its index, made once when the request
 * checked them (so shipping them costs no second hashing). Claims rebuilt from the log at start
 * have no hashes.
 */
export type ClaimGroup = { durable: Promise<unknown>; hashes: Uint32Array | undefined };

/**
 * A client eventId accepted into the log and not yet shipped: the event first accepted under it,
 * as the line written to the log (log-lines.ts; half the memory of the object; parsed only for a
 * retry), the request that claimed it, and its index in that request.
 */
export type Claim = { json: string; group: ClaimGroup; slot: number };

/** A client eventId: the project's id and the eventId, the two halves of eventKey. */
export type ClientId = { projectId: string; eventId: string };

/**
 * The client eventIds the log has seen recently, so that a retry is recognised without asking
 * ClickHouse for every ordinary event:
 * - events in the log, not yet shipped: in memory with the event itself (rebuilt from the log
 *   on start), so the answer to a retry needs no lookup at all;
 * - events shipped within the idempotency window (24 to 28 hours): in a ShippedIdFilter under
 *   `client-ids/`, 3 bytes per id. A hit means "probably stored": only then is ClickHouse asked
 *   for the event, and only a stored event found there is answered as a duplicate. A miss is
 *   certain (no false negatives), so a new eventId never waits for ClickHouse.
 *
 * Claims are kept by project, then by eventId: the strings the request parsed are the keys as
 * they are (V8 keeps a string's hash with it), where a `project:eventId` key was built, copied
 * flat and hashed again for every event.
 */
export class ClientIdIndex {
  readonly #claims = new Map<string, Map<string, Claim>>();
  #pending = 0;

  private constructor(private readonly shipped: ShippedIdFilter) {}

  /** `blocks`: the size of a new bucket's filter (blocksPerBucket of IDEMPOTENCY_IDS_PER_SECOND). */
  static async open(dir: string, blocks: number, now = Date.now()): Promise<ClientIdIndex> {
    return new ClientIdIndex(await ShippedIdFilter.open(dir, blocks, now));
  }

  claim(projectId: string, eventId: string): Claim | undefined {
    return this.#claims.get(projectId)?.get(eventId);
  }

  setClaim(projectId: string, eventId: string, claim: Claim): void {
    let project = this.#claims.get(projectId);
    if (project === undefined) {
      project = new Map();
      this.#claims.set(projectId, project);
    }
    const before = project.size;
    project.set(eventId, claim);
    this.#pending += project.size - before;
  }

  /** Forgets a claim whose events were not made durable (only if it is still that claim). */
  releaseClaim(projectId: string, eventId: string, claim: Claim): void {
    const project = this.#claims.get(projectId);
    if (project?.get(eventId) === claim) this.#forget(projectId, project, eventId);
  }

  /** Whether the id (its idHash halves) may have been shipped within the window (never false for one that was). */
  maybeShipped(a: number, b: number): boolean {
    return this.shipped.mayContain(a, b);
  }

  /** Bytes of memory the shipped ids' filters take. */
  get shippedBytes(): number {
    return this.shipped.bytes;
  }

  /** Client ids not yet shipped, held in memory. */
  get pendingCount(): number {
    return this.#pending;
  }

  /**
   * Records ids whose events are now in ClickHouse: durable in the filter's journal first, then
   * their claims are dropped (a retry from now on finds the filter's hit and looks the event up).
   */
  async markShipped(ids: readonly ClientId[], now = Date.now()): Promise<void> {
    if (ids.length === 0) return;
    const hashes = new Uint32Array(ids.length * 2);
    for (let i = 0; i < ids.length; i++) {
      const { projectId, eventId } = ids[i] as ClientId;
      const claim = this.claim(projectId, eventId);
      const made = claim?.group.hashes;
      if (claim !== undefined && made !== undefined) {
        hashes[2 * i] = made[2 * claim.slot] as number;
        hashes[2 * i + 1] = made[2 * claim.slot + 1] as number;
      } else {
        idHashOf(projectId, eventId, hashes, 2 * i);
      }
    }
    await this.shipped.add(hashes, now);
    for (const { projectId, eventId } of ids) {
      const project = this.#claims.get(projectId);
      if (project?.has(eventId)) this.#forget(projectId, project, eventId);
    }
  }

  #forget(projectId: string, project: Map<string, Claim>, eventId: string): void {
    project.delete(eventId);
    this.#pending--;
    if (project.size === 0) this.#claims.delete(projectId);
  }
}
