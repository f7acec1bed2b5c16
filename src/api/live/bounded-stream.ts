import type { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * A live-view client owed more than this many bytes is behind: the events that arrive for it
 * meanwhile are skipped. A reading client is owed a few KB at a time; one that stopped reading
 * would otherwise be owed every later event of its project, held in the service's memory (issue
 * 33: 10 paused clients were owed about 297 MB).
 */
export const LIVE_STREAM_BEHIND_BYTES = 256 * 1024;

/**
 * The most a stream may owe at all: one delivery (one request's events, up to the batch body's
 * 5 MB) is written whole to a client that is not behind as long as it fits under this, so a large
 * batch reaches a reading client complete, and cut here otherwise.
 */
export const LIVE_STREAM_MAX_OWED_BYTES = 1024 * 1024;

/**
 * A stream that skips events writes again once what it owes has fallen to this: the client has
 * taken most of its backlog, so it reads again, and one gap per episode is easier to read than
 * many small ones.
 */
const RESUME_AT_BYTES = LIVE_STREAM_BEHIND_BYTES / 2;

/** The SSE message that tells a client how many events it did not get, where it missed them. */
export const skippedMessage = (skipped: number) => `event: skipped\ndata: ${JSON.stringify({ skipped })}\n\n`;

/**
 * The writing side of one live-view stream, bounded by the bytes owed to the client: what the
 * stream buffers plus what the HTTP response and its socket still hold (`owed`, a function so the
 * response's own buffers count too; `drains` emit 'drain' as those buffers empty).
 *
 * While the client takes what it is sent, every event is written. When it is behind (owed more
 * than LIVE_STREAM_BEHIND_BYTES), the events that arrive are dropped and counted; once it has
 * taken its backlog, the stream sends `event: skipped` with that count, then live events again.
 * Memory per stream stays under about LIVE_STREAM_MAX_OWED_BYTES, whatever the client does.
 * (A chunk passing through a PassThrough is counted on both of its sides until it moves on, so
 * `owed` errs high, never low.)
 */
export class BoundedEventWriter {
  #skipped = 0;

  constructor(
    private readonly stream: Writable,
    private readonly owed: () => number,
    drains: readonly EventEmitter[] = [stream],
  ) {
    // A client that reads again hears of its gap now, not only with the next event.
    for (const emitter of drains) emitter.on('drain', () => this.#resumeIfCaughtUp());
  }

  /** Events skipped since the client last heard of a gap. */
  get skipped(): number {
    return this.#skipped;
  }

  /**
   * Writes the messages (one per event) in order, unless the client is behind; within the most a
   * stream may owe, so the first that does not fit and every one after it are skipped (a gap is
   * always one run of events). `format` is called only for the events written.
   */
  writeEvents<T>(events: readonly T[], format: (event: T) => string): void {
    this.#resumeIfCaughtUp();
    const owed = this.owed();
    if (this.#skipped > 0 || owed > LIVE_STREAM_BEHIND_BYTES) {
      this.#skipped += events.length;
      return;
    }
    let room = LIVE_STREAM_MAX_OWED_BYTES - owed;
    let out = '';
    for (let i = 0; i < events.length; i++) {
      const message = format(events[i] as T);
      const bytes = Buffer.byteLength(message);
      if (bytes > room) {
        this.#skipped += events.length - i;
        break;
      }
      room -= bytes;
      out += message;
    }
    if (out) this.stream.write(out);
  }

  /**
   * A comment line (the heartbeat), only when the client owes nothing: one that does has bytes on
   * the way already, and a heartbeat would only add to them. Also the moment a client whose events
   * are all skipped, with none arriving, hears of its gap.
   */
  writeComment(text: string): void {
    this.#resumeIfCaughtUp();
    if (this.stream.writableEnded || this.#skipped > 0 || this.owed() > 0) return;
    this.stream.write(`: ${text}\n\n`);
  }

  #resumeIfCaughtUp(): void {
    if (this.stream.writableEnded || this.#skipped === 0 || this.owed() > RESUME_AT_BYTES) return;
    const skipped = this.#skipped;
    this.#skipped = 0;
    this.stream.write(skippedMessage(skipped));
  }
}
