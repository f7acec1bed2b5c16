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

type Stored = { events: QueuedEvent[]; dropped: number };

/**
 * The events not yet acknowledged, oldest first, bounded: past `maxSize` the oldest are dropped
 * and counted. It is written to storage after every change, coalesced to one write per turn of
 * the event loop, so a burst of track() calls costs one write while a reload right after still
 * finds every event.
 */
export class EventQueue {
  private events: QueuedEvent[] = [];
  private writeScheduled = false;
  /** Events dropped because the queue was full, since the first start (persisted). */
  dropped = 0;

  constructor(
    /** None: the queue lives in memory only (Node's default), and nothing is copied anywhere. */
    private readonly storage: StorageAdapter | undefined,
    private readonly key: string,
    private readonly maxSize: number,
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
    this.events = (Array.isArray(stored.events) ? stored.events : []).filter((event) => !tracked.has(event.eventId)).concat(this.events);
    this.dropped += Number(stored.dropped) || 0;
    this.trim();
  }

  get length(): number {
    return this.events.length;
  }

  push(event: QueuedEvent): void {
    this.events.push(event);
    this.trim();
    this.scheduleWrite();
  }

  /** The oldest `count` events, left in the queue until removed. */
  head(count: number): QueuedEvent[] {
    return this.events.slice(0, count);
  }

  /** Removes events that were answered (delivered, duplicate or rejected). */
  remove(done: QueuedEvent[]): void {
    // The usual case: the batch is still the head of the queue (nothing was dropped meanwhile).
    const atHead = done.every((event, i) => this.events[i] === event);
    if (atHead) this.events.splice(0, done.length);
    else {
      const ids = new Set(done.map((event) => event.eventId));
      this.events = this.events.filter((event) => !ids.has(event.eventId));
    }
    this.scheduleWrite();
  }

  private trim(): void {
    const excess = this.events.length - this.maxSize;
    if (excess > 0) {
      this.events.splice(0, excess);
      this.dropped += excess;
    }
  }

  private scheduleWrite(): void {
    if (this.writeScheduled || !this.storage) return;
    this.writeScheduled = true;
    Promise.resolve().then(() => this.write());
  }

  /** Writes now (also called when the page is hidden, when there may be no later turn). */
  write(): void {
    this.writeScheduled = false;
    if (!this.storage) return;
    try {
      const stored: Stored = { events: this.events, dropped: this.dropped };
      const pending = this.storage.setItem(this.key, JSON.stringify(stored));
      if (pending) pending.catch(this.onStorageError);
    } catch (error) {
      // localStorage full: the events stay in memory and are sent from there.
      this.onStorageError(error);
    }
  }
}
