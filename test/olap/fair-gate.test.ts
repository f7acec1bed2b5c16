import { describe, expect, it } from 'vitest';
import { FairGate, QueryGateBusy } from '../../src/olap/readonly/query-gate.js';

/*
 * The project queries' lane (issue 37): turns shared fairly between accounts, and a turn given
 * back past its deadline when the engine has not let go of its query.
 */

const gate = (extra: Partial<ConstructorParameters<typeof FairGate>[0]> = {}) =>
  new FairGate({ maxRunning: 2, perAccountRunning: 1, maxWaiting: 8, retryAfterSeconds: 1, maxAbandoned: 1, ...extra });
const far = () => Date.now() + 60_000;
const never = () => new Promise<void>(() => {});
const settled = async <T>(promise: Promise<T>, ms = 50) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

describe('FairGate', () => {
  it('one account never takes every turn: another account’s query runs at once beside it', async () => {
    const lane = gate();
    await lane.enter('heavy', far(), 'q');
    const second = lane.enter('heavy', far(), 'q');
    expect(await settled(second)).toBe(false); // its own share is one turn
    expect(await settled(lane.enter('light', far(), 'q'))).toBe(true);
  });

  it('a freed turn goes to the accounts in turn, not to the one with the most waiting', async () => {
    const lane = gate({ maxRunning: 1, perAccountRunning: 1 });
    const first = await lane.enter('a', far(), 'q');
    const order: string[] = [];
    // Each, once admitted, ends its turn at once.
    const admitted = (name: string) => (release: (until: Promise<void>, giveUpAt: number) => void) => {
      order.push(name);
      release(Promise.resolve(), far());
    };
    const waits = [
      lane.enter('a', far(), 'q').then(admitted('a2')),
      lane.enter('a', far(), 'q').then(admitted('a3')),
      lane.enter('b', far(), 'q').then(admitted('b1')),
    ];
    first(Promise.resolve(), far());
    await Promise.all(waits);
    expect(order).toEqual(['a2', 'b1', 'a3']);
  });

  it('a turn whose query the engine does not let go of is given back after its deadline, once', async () => {
    const lane = gate({ maxRunning: 1, perAccountRunning: 1 });
    (await lane.enter('a', far(), 'q'))(never(), Date.now() + 200);
    const next = lane.enter('b', far(), 'q');
    expect(await settled(next)).toBe(false);
    expect(await settled(next, 2_000)).toBe(true);
    expect(lane.abandoned).toBe(1);
    // A second one held by the engine keeps its turn: one abandoned query at a time.
    (await next)(never(), Date.now() + 100);
    expect(await settled(lane.enter('c', far(), 'q'), 1_000)).toBe(false);
  });

  it('an account holds at most half of the waiting places; past them, a refusal at once', async () => {
    const lane = gate({ maxRunning: 1, maxWaiting: 4 });
    await lane.enter('a', far(), 'q');
    void lane.enter('a', far(), 'q');
    void lane.enter('a', far(), 'q');
    await expect(lane.enter('a', far(), 'q')).rejects.toBeInstanceOf(QueryGateBusy);
    void lane.enter('b', far(), 'q');
  });
});
