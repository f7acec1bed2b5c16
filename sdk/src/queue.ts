import type { DropReporter } from './drops.js';
import type { StorageAdapter } from './storage.js';

/** One tracked event as queued and as sent in a batch (the fields of POST /events/track). */
export type QueuedEvent = {
  eventId: string;
  eventName: string;
  userId: string;
  properties?: Record<string, unknown>;
  /** When it was tracked, by the device's clock; the server corrects the clock with the batch's sentAt. */
  timestamp: string;
};

type Stored = { events: QueuedEvent[]; droppedBy: Record<string, number>; dropped?: number };

export type QueueBounds = {
  /** The queue's size at most, counted as the length of each event's JSON. */
  maxBytes: number;
  /** Events at most (no bound unless set). */
  maxCount: number;
};

/** The size an event takes in the queue: its JSON's length (what storage and the batch carry). */
const sizes = new WeakMap<QueuedEvent, number>();
function sizeOf(event: QueuedEvent): number {
  let size = sizes.get(event);
  if (size === undefined) {
    size = JSON.stringify(event).length;
    sizes.set(event, size);
  }
  return size;
}

/** A full storage: localStorage's QuotaExceededError (Chromium, WebKit; Firefox's older name), or a legacy code. */
export function isQuotaError(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED' || code === 22 || code === 1014;
}

/**
 * The events not yet acknowledged, oldest first, bounded by bytes (and, with storage, by what the
 * storage holds): past the bound the oldest are dropped and reported. It is written to storage
 * after every change, coalesced to one write per turn of the event loop, so a burst of track()
 * calls costs one write while a reload right after still finds every event.
 */
export class EventQueue {
  private events: QueuedEvent[] = [];
  private bytes = 0;
  private writeScheduled = false;

  constructor(
    /** None: the queue lives in memory only (Node's default), and nothing is copied anywhere. */
    private readonly storage: StorageAdapter | undefined,
    private readonly key: string,
    private readonly bounds: QueueBounds,
    private readonly drops: DropReporter,
    private readonly onStorageError: (error: unknown) => void,
  ) {}

  /** Reads the stored queue; events tracked meanwhile stay after the stored ones. */
  async restore(): Promise<void> {
    if (!this.storage) return;
    let stored: Partial<Stored> | undefined;
    try {
      const text = await this.storage.getItem(this.key);
      stored = text ? (JSON.parse(text) as Partial<Stored>) : undefined;
    } catch (error) {
      this.onStorageError(error);
    }
    if (!stored) return;
    const tracked = new Set(this.events.map((event) => event.eventId));
    const restored = (Array.isArray(stored.events) ? stored.events : []).filter((event) => !tracked.has(event.eventId));
    this.events = restored.concat(this.events);
    for (const event of restored) this.bytes += sizeOf(event);
    // Counts of an earlier run (and, from before `droppedBy`, the queue-full count alone).
    this.drops.restore(stored.droppedBy ?? { QUEUE_FULL: stored.dropped });
    this.trim();
  }

  get length(): number {
    return this.events.length;
  }

  /** The events' size (the length of their JSON). */
  get size(): number {
    return this.bytes;
  }

  push(event: QueuedEvent): void {
    this.events.push(event);
    this.bytes += sizeOf(event);
    this.trim();
    this.scheduleWrite();
  }

  /** The oldest `count` events, left in the queue until removed. */
  head(count: number): QueuedEvent[] {
    return this.events.slice(0, count);
  }

  /** Removes events that were answered (delivered, duplicate or rejected) or given up on. */
  remove(done: QueuedEvent[]): void {
    // The usual case: the batch is still the head of the queue (nothing was dropped meanwhile).
    const atHead = done.every((event, i) => this.events[i] === event);
    if (atHead) {
      this.events.splice(0, done.length);
      for (const event of done) this.bytes -= sizeOf(event);
    } else {
      const ids = new Set(done.map((event) => event.eventId));
      this.events = this.events.filter((event) => !ids.has(event.eventId));
      this.bytes = 0;
      for (const event of this.events) this.bytes += sizeOf(event);
    }
    this.scheduleWrite();
  }

  /** Empties the queue, answering what it held (shutdown without storage: nothing keeps them). */
  takeAll(): QueuedEvent[] {
    const all = this.events;
    this.events = [];
    this.bytes = 0;
    this.scheduleWrite();
    return all;
  }

  /** Drops the oldest events past the bounds (the newest event is always kept). */
  private trim(): void {
    let excess = 0;
    let bytes = this.bytes;
    while (excess < this.events.length - 1 && (bytes > this.bounds.maxBytes || this.events.length - excess > this.bounds.maxCount)) {
      bytes -= sizeOf(this.events[excess] as QueuedEvent);
      excess++;
    }
    if (excess === 0) return;
    const dropped = this.events.splice(0, excess);
    this.bytes = bytes;
    this.drops.drop(
      'QUEUE_FULL',
      dropped.map((event) => event.eventId),
    );
  }

  private scheduleWrite(): void {
    if (this.writeScheduled || !this.storage) return;
    this.writeScheduled = true;
    Promise.resolve().then(() => this.write());
  }

  private serialize(events: QueuedEvent[]): string {
    const stored: Stored = { events, droppedBy: this.drops.counts };
    return JSON.stringify(stored);
  }

  /** Writes now (also called when the page is hidden, when there may be no later turn). */
  write(): void {
    this.writeScheduled = false;
    if (!this.storage) return;
    try {
      const pending = this.storage.setItem(this.key, this.serialize(this.events));
      if (pending) pending.catch((error) => this.writeFailed(error));
    } catch (error) {
      this.writeFailed(error);
    }
  }

  /**
   * A full storage bounds the queue: the newest events that fit are kept and the oldest are
   * dropped (reported as STORAGE_FULL), so what a reload finds is what will be sent. When not even
   * one event fits (the page's other data fills it), the queue stays in memory, bounded by bytes.
   */
  private async writeFailed(error: unknown): Promise<void> {
    if (!isQuotaError(error)) {
      this.onStorageError(error); // storage broken, not full: the events stay in memory and are sent from there
      return;
    }
    const events = this.events.slice();
    const fits = async (count: number) => {
      try {
        await this.storage?.setItem(this.key, this.serialize(events.slice(events.length - count)));
        return true;
      } catch (failure) {
        if (!isQuotaError(failure)) throw failure;
        return false;
      }
    };
    try {
      // The largest count of newest events that fits (the whole queue did not).
      let low = 0;
      let high = events.length;
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        if (await fits(middle)) low = middle;
        else high = middle;
      }
      if (low === 0 || !(await fits(low))) {
        this.onStorageError(error);
        return;
      }
      // Events tracked meanwhile (an async storage) stay: the write remove() schedules checks them.
      const dropped = events.slice(0, events.length - low);
      this.remove(dropped);
      this.drops.drop(
        'STORAGE_FULL',
        dropped.map((event) => event.eventId),
        error,
      );
    } catch (failure) {
      this.onStorageError(failure);
    }
  }
}
