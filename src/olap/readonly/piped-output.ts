import { execFile } from 'node:child_process';
import { closeSync, constants, open, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addAbortSignal } from 'node:stream';
import { promisify } from 'node:util';

const openFd = promisify(open);
const run = promisify(execFile);

/** A named pipe in a directory of its own (mode 0700), removed with it. */
export type NamedPipe = { path: string; remove(): Promise<void> };

/**
 * A new named pipe (FIFO) in a private temporary directory. Node has no mkfifo of its own, so
 * the system's `mkfifo` makes it; throws if there is none (the caller then streams otherwise).
 */
export async function createNamedPipe(): Promise<NamedPipe> {
  const dir = await mkdtemp(path.join(tmpdir(), 'feedback-ch-out-'));
  const fifo = path.join(dir, 'out');
  try {
    await run('mkfifo', ['-m', '600', fifo]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return { path: fifo, remove: () => rm(dir, { recursive: true, force: true }) };
}

export type PipedQuery = {
  pipe: NamedPipe;
  /** Starts the statement that writes its whole output into `pipe.path`; settles when it has finished. */
  start: () => Promise<unknown>;
  /** Stops the statement in the engine (it notices between blocks); resolves once asked. */
  cancel: () => Promise<void>;
  /** Output bytes at most: the piece that would pass it is not yielded, `tooLarge` is thrown instead. */
  maxBytes: number;
  tooLarge: () => Error;
  /** Aborted when the reader has gone or the time is up: the statement is cancelled. */
  signal?: AbortSignal | undefined;
  /** Receives the promise that settles once the engine is done and the pipe is removed. */
  onSettled?: (settled: Promise<void>) => void;
};

/**
 * Yields the output of a statement that writes into a named pipe (embedded chDB's `INTO OUTFILE`),
 * as the engine writes it. The engine formats and writes at its own speed; the pipe's kernel
 * buffer and the socket's stream bound what is held, and a reader that does not read holds the
 * engine's write (backpressure). Bytes are counted as they pass, so `maxBytes` holds exactly,
 * whatever the size of the engine's blocks.
 *
 * The engine ignores a write to a pipe nobody reads (measured: it goes on to the end of the
 * query), so leaving early, the signal and the bound cancel the statement in the engine and go on
 * draining the pipe until it has stopped: a writer blocked on a full pipe, or one not yet past
 * opening it, is released. An error of the statement is thrown after the output it wrote.
 */
export async function* pipedOutput(query: PipedQuery): AsyncGenerator<Uint8Array> {
  const { pipe } = query;
  // Opened before the statement starts, and without waiting for a writer: the engine's open of
  // the pipe then never waits for us either.
  let fd: number;
  try {
    fd = await openFd(pipe.path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    await pipe.remove();
    throw error;
  }
  const reader = new Socket({ fd, readable: true, writable: false });
  if (query.signal) addAbortSignal(query.signal, reader);
  const done = query.start();
  let failure: unknown;
  const finished = done.then(
    () => undefined,
    (error: unknown) => {
      failure = error;
    },
  );
  // Once the statement has finished, a writer of our own opens and closes the pipe: the reader
  // then sees its end even when the engine failed before it opened it.
  void finished.then(() => knock(pipe.path, constants.O_WRONLY));

  let ended = false;
  let sent = 0;
  try {
    for await (const piece of reader as AsyncIterable<Buffer>) {
      sent += piece.byteLength;
      if (sent > query.maxBytes) throw query.tooLarge();
      yield piece;
    }
    ended = true;
    // The end of the output is not the end of the statement: the engine may open the file again
    // (below), so the pipe keeps a reader until the statement has finished.
    await drainUntil(pipe.path, finished);
    if (failure !== undefined) throw failure;
  } finally {
    reader.destroy();
    const settled = ended ? finished.then(() => pipe.remove()) : stop(query, finished);
    query.onSettled?.(settled);
  }
}

/** Cancels the statement and drains the pipe until the engine has let go of it; then removes it. */
async function stop(query: PipedQuery, finished: Promise<void>): Promise<void> {
  try {
    await query.cancel().catch(() => {});
    await drainUntil(query.pipe.path, finished);
  } finally {
    await query.pipe.remove();
  }
}

/**
 * Reads and discards what is written into the pipe until `finished` settles, opening it again
 * each time a writer has closed it. Why (issue 37): when the engine cannot make the output format
 * (Template without its template, Protobuf, any format it refuses for the columns), it opens the
 * INTO OUTFILE file a second time, after the first open has been closed with nothing written
 * (measured with strace: two opens, zero bytes, then the error). An open of a FIFO for writing
 * waits until the FIFO has a reader; the reader had seen the end of the first writer and gone, so
 * the engine's thread waited in that open forever, its query never finished, and its lane was
 * never given back: every later interface query waited behind it, and a stop hung on it. A reader
 * that stays until the statement has finished lets every such open through.
 */
async function drainUntil(fifo: string, finished: Promise<void>): Promise<void> {
  let done = false;
  void finished.then(() => {
    done = true;
  });
  while (!done) {
    let fd: number;
    try {
      fd = await openFd(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      await finished; // the pipe is gone: nothing can wait on it any more
      return;
    }
    const drain = new Socket({ fd, readable: true, writable: false });
    drain.on('error', () => {});
    const closed = new Promise<void>((resolve) => drain.once('close', () => resolve()));
    drain.resume();
    await Promise.race([finished, closed]);
    drain.destroy();
  }
}

/** Opens the pipe without waiting and closes it at once; a pipe with no peer (ENXIO) is left alone. */
function knock(fifo: string, mode: number): void {
  try {
    closeSync(openSync(fifo, mode | constants.O_NONBLOCK));
  } catch {
    // Nobody reads any more (ENXIO), or the pipe is already gone: there is nothing to release.
  }
}
