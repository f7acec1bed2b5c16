import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventKey } from '../../src/core/event.js';
import { idHash, idHashOf } from '../../src/ingest/id-filter.js';
import { type ClaimGroup, ClientIdIndex } from '../../src/ingest/log/client-ids.js';
import { makeDataDir } from '../helpers/process.js';

/*
 * A request's client eventIds are hashed in one pass without building their keys, and claimed
 * under their project and eventId (log/client-ids.ts). The hash must stay the one the filters on
 * disk and in Redis already hold (idHash of `project:eventId`).
 */

describe('client eventId claims', () => {
  it('idHashOf is idHash of the event key, for any characters', () => {
    const out = new Uint32Array(4);
    const cases: [string, string][] = [
      ...Array.from({ length: 200 }, (): [string, string] => [randomUUID(), randomUUID()]),
      ['', ''],
      ['p', 'é€😀'],
      ['projekt-ü', 'x:y'],
    ];
    for (const [projectId, eventId] of cases) {
      idHashOf(projectId, eventId, out, 2);
      expect([out[2], out[3]]).toEqual(idHash(eventKey(projectId, eventId)));
    }
  });

  it('claims by project and eventId, releases only its own claim, and marks shipped with the request’s hashes', async () => {
    const index = await ClientIdIndex.open(await makeDataDir(), 64);
    const [p1, p2] = [randomUUID(), randomUUID()];
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const hashes = new Uint32Array(ids.length * 2);
    for (const [i, id] of ids.entries()) idHashOf(p1, id, hashes, 2 * i);
    const group: ClaimGroup = { durable: Promise.resolve(), hashes };
    const claims = ids.map((_id, slot) => ({ json: `line ${slot}`, group, slot }));
    for (const [i, id] of ids.entries()) index.setClaim(p1, id, claims[i] as (typeof claims)[number]);
    // The same eventId in another project is another id; a claim rebuilt at start has no hashes.
    const rebuilt = { json: 'rebuilt', group: { durable: Promise.resolve(), hashes: undefined }, slot: -1 };
    index.setClaim(p2, ids[0] as string, rebuilt);
    expect(index.pendingCount).toBe(4);
    expect(index.claim(p1, ids[1] as string)).toBe(claims[1]);
    expect(index.claim(p2, ids[0] as string)).toBe(rebuilt);
    expect(index.claim(p2, ids[1] as string)).toBeUndefined();

    index.releaseClaim(p1, ids[2] as string, rebuilt); // not its claim: kept
    expect(index.claim(p1, ids[2] as string)).toBe(claims[2]);
    index.releaseClaim(p1, ids[2] as string, claims[2] as (typeof claims)[number]);
    expect(index.claim(p1, ids[2] as string)).toBeUndefined();
    expect(index.pendingCount).toBe(3);

    for (const [projectId, eventId] of [
      [p1, ids[0]],
      [p2, ids[0]],
    ] as [string, string][]) {
      const [a, b] = idHash(eventKey(projectId, eventId));
      expect(index.maybeShipped(a, b)).toBe(false);
    }
    await index.markShipped([
      { projectId: p1, eventId: ids[0] as string },
      { projectId: p1, eventId: ids[1] as string },
      { projectId: p2, eventId: ids[0] as string },
    ]);
    expect(index.pendingCount).toBe(0);
    for (const [projectId, eventId] of [
      [p1, ids[0]],
      [p1, ids[1]],
      [p2, ids[0]],
    ] as [string, string][]) {
      expect(index.claim(projectId, eventId)).toBeUndefined();
      const [a, b] = idHash(eventKey(projectId, eventId));
      expect(index.maybeShipped(a, b)).toBe(true);
    }
  });
});
