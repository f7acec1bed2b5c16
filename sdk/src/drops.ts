/** Why the SDK gave up on events. Every drop is counted (`stats().droppedBy`) and reported to `onError`. */
export type DropCode =
  /** The queue reached `maxQueueBytes` (or `maxQueueSize`): the oldest events made room for the newest. */
  | 'QUEUE_FULL'
  /** Storage (localStorage, AsyncStorage) could not hold the queue: the oldest events that did not fit. */
  | 'STORAGE_FULL'
  /** One event alone is over the service's body limit (413): no smaller batch can carry it. */
  | 'EVENT_TOO_LARGE'
  /** The service refused the batch in a way no retry can fix (a wrong key: 401, 403; a 400). */
  | 'REFUSED'
  /** The service rejected these events for their content (also passed to `onRejected`). */
  | 'REJECTED'
  /** track() after shutdown(). */
  | 'CLIENT_CLOSED'
  /** shutdown(), or the end of a Node process, came before the service answered; nothing kept them. */
  | 'SHUTDOWN_TIMEOUT';

const CODES: DropCode[] = ['QUEUE_FULL', 'STORAGE_FULL', 'EVENT_TOO_LARGE', 'REFUSED', 'REJECTED', 'CLIENT_CLOSED', 'SHUTDOWN_TIMEOUT'];

export type DropCounts = Record<DropCode, number>;

/** Events the SDK dropped: passed to `onError`, so an app can tell a loss from a retry. */
export class FeedbackDropError extends Error {
  override readonly name = 'FeedbackDropError';
  constructor(
    readonly code: DropCode,
    /** How many events. */
    readonly count: number,
    /** Their eventIds (as track() returned them). */
    readonly eventIds: string[],
    /** What caused it, when the service said something (a FeedbackApiError). */
    override readonly cause?: unknown,
  ) {
    super(`${count} event${count === 1 ? '' : 's'} dropped: ${code}`);
  }
}

export function zeroCounts(): DropCounts {
  return Object.fromEntries(CODES.map((code) => [code, 0])) as DropCounts;
}

/**
 * Counts every dropped event and reports it: to `onError` as one FeedbackDropError per reason and
 * turn of the event loop (a burst past the bound is one report, not one per event), and once per
 * client with console.warn, so a drop is never silent even without an `onError`.
 */
export class DropReporter {
  readonly counts: DropCounts = zeroCounts();
  private pending = new Map<DropCode, { eventIds: string[]; cause: unknown }>();
  private warned = false;

  constructor(
    private readonly onError: (error: unknown) => void,
    private readonly debug: (message: string, details?: unknown) => void,
  ) {}

  get total(): number {
    return CODES.reduce((sum, code) => sum + this.counts[code], 0);
  }

  /** Adds counts restored from storage (drops of an earlier run, already reported then). */
  restore(stored: unknown): void {
    if (!stored || typeof stored !== 'object') return;
    for (const code of CODES) this.counts[code] += Number((stored as Record<string, unknown>)[code]) || 0;
  }

  drop(code: DropCode, eventIds: string[], cause?: unknown): void {
    if (eventIds.length === 0) return;
    this.counts[code] += eventIds.length;
    const pending = this.pending.get(code);
    if (pending) {
      pending.eventIds.push(...eventIds);
      pending.cause ??= cause;
      return;
    }
    if (this.pending.size === 0) Promise.resolve().then(() => this.report());
    this.pending.set(code, { eventIds: [...eventIds], cause });
  }

  private report(): void {
    const reports = [...this.pending];
    this.pending = new Map();
    for (const [code, { eventIds, cause }] of reports) {
      const error = new FeedbackDropError(code, eventIds.length, eventIds, cause);
      this.debug(error.message, error);
      if (!this.warned) {
        this.warned = true;
        console.warn(
          `[feedback] ${error.message}. Every dropped event is counted in stats().dropped and passed to onError as a FeedbackDropError; this warning is written once.`,
        );
      }
      try {
        this.onError(error);
      } catch {
        // An app's onError that throws must not stop the queue.
      }
    }
  }
}
