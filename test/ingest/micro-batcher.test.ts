import { describe, expect, it } from 'vitest';
import { MicroBatcher } from '../../src/ingest/micro-batcher.js';
import { sleep } from '../helpers/eventually.js';

// The pauses in this file are the simulated time of a flush and the pacing of arrivals: what the
// batcher's timing is tested against, not waits for something to happen.

/** A batcher whose flushes take `flushMs` and are recorded with their start time. */
function recordingBatcher(options: {
  maxItems?: number;
  maxDelayMs?: number;
  minFlushIntervalMs?: number;
  maxWaiting?: number;
  flushMs?: number;
}) {
  const flushes: { at: number; items: number[] }[] = [];
  const started = performance.now();
  const batcher = new MicroBatcher<number, number>({
    maxItems: options.maxItems ?? 1_000,
    maxDelayMs: options.maxDelayMs ?? 2,
    maxConcurrentFlushes: 1,
    minFlushIntervalMs: options.minFlushIntervalMs,
    maxWaiting: options.maxWaiting,
    flush: async (items) => {
      flushes.push({ at: performance.now() - started, items });
      await sleep(options.flushMs ?? 1);
      return items.length;
    },
  });
  return { batcher, flushes };
}

describe('MicroBatcher', () => {
  it('coalesces concurrent callers into one flush; each caller gets that flush result', async () => {
    const { batcher, flushes } = recordingBatcher({});
    const results = await Promise.all([batcher.add([1]), batcher.add([2, 3]), batcher.add([4])]);
    expect(flushes.map((f) => f.items)).toEqual([[1, 2, 3, 4]]);
    expect(results).toEqual([4, 4, 4]);
  });

  it('maxDelayMs 0: what arrives within one event-loop turn goes as one flush at the end of that turn, before any timer', async () => {
    const { batcher, flushes } = recordingBatcher({ maxDelayMs: 0 });
    let timerFired = false;
    const timer = setTimeout(() => (timerFired = true), 5);
    const first = batcher.add([1]);
    const second = batcher.add([2, 3]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes.map((f) => f.items)).toEqual([[1, 2, 3]]);
    expect(timerFired).toBe(false);
    clearTimeout(timer);
    expect(await Promise.all([first, second])).toEqual([3, 3]);
  });

  it('an idle batcher flushes after maxDelayMs, whatever minFlushIntervalMs says', async () => {
    const { batcher, flushes } = recordingBatcher({ maxDelayMs: 2, minFlushIntervalMs: 500 });
    const t0 = performance.now();
    await batcher.add([1]);
    expect(performance.now() - t0).toBeLessThan(200);
    expect(flushes).toHaveLength(1);
  });

  it('under load, flushes start at least minFlushIntervalMs apart and carry what arrived meanwhile', async () => {
    const { batcher, flushes } = recordingBatcher({ maxDelayMs: 1, minFlushIntervalMs: 40, flushMs: 1 });
    const pending: Promise<number>[] = [];
    for (let i = 0; i < 60; i++) {
      pending.push(batcher.add([i]));
      await sleep(2);
    }
    await Promise.all(pending);
    const gaps = flushes.slice(1).map((f, i) => f.at - (flushes[i]?.at ?? 0));
    // Timers may fire a little early or late; never anywhere near back to back.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(35);
    // 60 arrivals over about 120+ ms: a handful of flushes, not one per arrival.
    expect(flushes.length).toBeLessThanOrEqual(6);
    expect(flushes.flatMap((f) => f.items)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('without minFlushIntervalMs, items that waited behind a flush go at once when it ends', async () => {
    const { batcher, flushes } = recordingBatcher({ maxDelayMs: 1, flushMs: 20 });
    const first = batcher.add([1]);
    await sleep(5);
    const second = batcher.add([2]);
    await Promise.all([first, second]);
    expect(flushes.map((f) => f.items)).toEqual([[1], [2]]);
    expect((flushes[1]?.at ?? 0) - (flushes[0]?.at ?? 0)).toBeLessThan(40);
  });

  it('a full batch (maxItems) does not wait for the interval', async () => {
    const { batcher, flushes } = recordingBatcher({ maxItems: 3, maxDelayMs: 1, minFlushIntervalMs: 10_000 });
    await batcher.add([1]);
    const t0 = performance.now();
    await batcher.add([2, 3, 4]);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(flushes.map((f) => f.items)).toEqual([[1], [2, 3, 4]]);
  });

  it('drain flushes what waits at once, ignoring the interval', async () => {
    const { batcher, flushes } = recordingBatcher({ maxDelayMs: 1, minFlushIntervalMs: 10_000 });
    await batcher.add([1]);
    const waiting = batcher.add([2]);
    const t0 = performance.now();
    await batcher.drain();
    await waiting;
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(flushes.map((f) => f.items)).toEqual([[1], [2]]);
    expect(batcher.pending).toBe(0);
  });

  it('a failed flush rejects each of its callers, and the next flush still runs', async () => {
    let fail = true;
    const batcher = new MicroBatcher<number, number>({
      maxItems: 100,
      maxDelayMs: 1,
      maxConcurrentFlushes: 1,
      minFlushIntervalMs: 5,
      flush: async (items) => {
        if (fail) throw new Error('store down');
        return items.length;
      },
    });
    const failed = await Promise.allSettled([batcher.add([1]), batcher.add([2])]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batcher.add([3])).resolves.toBe(1);
  });

  it('maxWaiting: once that many callers wait, the next flush starts at once, minFlushIntervalMs or not', async () => {
    // Like the ingest worker: callers are the jobs it holds, at most maxWaiting of them.
    const { batcher, flushes } = recordingBatcher({ maxDelayMs: 1, minFlushIntervalMs: 5_000, maxWaiting: 3 });
    await batcher.add([0]); // the idle batcher's flush; the next one would wait 5 s
    const t0 = performance.now();
    const results = await Promise.all([batcher.add([1]), batcher.add([2]), batcher.add([3])]);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(flushes.map((f) => f.items)).toEqual([[0], [1, 2, 3]]);
    expect(results).toEqual([3, 3, 3]);
  });
});
