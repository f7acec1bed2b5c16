import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import type { TrackerGateway } from '../core/trackers.js';
import type { EventSink } from '../ingest/event-sink.js';
import type { IngestQueue } from '../ingest/queue/ingest.queue.js';
import type { EventWriter } from '../ingest/writer/event-writer.js';
import type { FactWriter } from '../ingest/writer/fact-writer.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import type { Sql } from '../oltp/db.js';
import type { DeliveryQueue } from './notify/deliveries.queue.js';
import type { Mailer } from './notify/mailer.js';

/**
 * What the workers of a process need, built once at start-up (src/runtime/services.ts) or by a
 * test: the narrow view of the process's services that background work uses, as ApiDeps is the
 * HTTP layer's.
 */
export type WorkerDeps = {
  config: Config;
  logger: Logger;
  sql: Sql;
  /** ClickHouse, for the data-rights jobs' deletions and rollup rebuilds. */
  clickhouse: ClickHouseClient;
  /** The ingest queue with Redis; undefined without it (events and facts are written in process). */
  queue: IngestQueue | undefined;
  /** The deliveries queue with Redis; without it, a poller over the deliveries table sends. */
  deliveryQueue: DeliveryQueue | undefined;
  mailer: Mailer;
  /** Where the API hands events; in embedded mode the durable log, whose shipper the workers start. */
  eventSink: EventSink;
  eventWriter: EventWriter;
  factWriter: FactWriter;
  /** Opens the sealed tracker tokens for their calls. */
  secretBox: SecretBox;
  /** GitHub and Linear calls of the trackers' workers. */
  trackers: TrackerGateway;
};
