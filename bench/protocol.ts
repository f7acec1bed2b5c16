/**
 * The IPC protocol between the benchmark (bench/ingest.ts, the parent) and the servers it forks
 * (bench/server.ts, bench/bare-server.ts). The parent asks; the child answers with the same id.
 */

/** One event as an SDK sends it in a /events/batch body (camelCase, as SPEC 4.9). */
export type SdkEvent = {
  eventName: string;
  userId: string;
  properties?: Record<string, unknown>;
  timestamp?: string;
  eventId?: string;
};

export type ControlRequest =
  /** Rows of `events` for one project, counted by the process that owns chDB. */
  | { op: 'count'; projectId: string }
  /** The event ids (as text) of one project visible in ClickHouse: the visibility-lag probe. */
  | { op: 'ids'; projectId: string }
  /** Event-loop delay of the server since the last reset (monitorEventLoopDelay); `reset` starts anew. */
  | { op: 'loop'; reset: boolean }
  /** Waits (bounded) until ClickHouse runs no merge, so one phase's merges do not bill the next. */
  | { op: 'quiesce'; timeoutMs: number }
  /**
   * The raw ClickHouse figure: `total` rows made from `templates` (cycled) exactly as the API
   * would make them, then written with insertEvents in batches of `batchSize`, `concurrency` at a
   * time. Only the inserts are timed.
   */
  | { op: 'rawInsert'; projectId: string; templates: SdkEvent[][]; total: number; batchSize: number; concurrency: number }
  /**
   * Analysis only: with `noop` the API's event sink answers at once and stores nothing, so a
   * measurement shows what the request path alone (auth, limits, validation, logging) costs.
   */
  | { op: 'sink'; noop: boolean }
  /**
   * How many EventWriter writes (ClickHouse inserts of the shipper or the queue worker) and events
   * since the last reset: the insert size the pipeline reached. `reset` starts anew.
   */
  | { op: 'writes'; reset: boolean }
  /** Flush, stop the workers, delete the queue's Redis keys, close every client, exit. */
  | { op: 'shutdown' };

export type ControlMessage = ControlRequest & { id: number };

export type ControlReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** The first message of a child: the port it serves HTTP on. */
export type ReadyMessage = { ready: true; port: number };

export type RawInsertResult = { rows: number; batches: number; ms: number; visible: number };
export type WriterStats = { writes: number; events: number };
/** Event-loop delay since the last reset, and the time spent in GC pauses (perf_hooks `gc` entries; absent in older servers). */
export type LoopDelay = { p50Ms: number; p99Ms: number; maxMs: number; gcMs?: number };
