import type { Redis } from 'ioredis';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import type { Telemetry } from '../core/telemetry.js';
import type { TrackerGateway } from '../core/trackers.js';
import type { EventSink } from '../ingest/event-sink.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import type { Sql } from '../oltp/db.js';
import type { ProjectKeyCache } from '../oltp/projects.cache.js';
import type { EndpointLookupCache } from '../oltp/saved-query-endpoints.cache.js';
import type { DeliveryQueue } from '../workers/notify/deliveries.queue.js';
import type { ClickhouseHandler } from './clickhouse/ch-handler.js';
import type { LiveFeed } from './live/live-feed.js';
import type { RateLimits } from './middleware/rate-limit.js';

/** What the HTTP layer needs, built once at start-up (src/runtime/services.ts) or by a test. */
export type ApiDeps = {
  sql: Sql;
  /** API-key lookups (X-API-Key routes), remembered in process; routes that change a project or plan forget it. */
  projectKeys: ProjectKeyCache;
  /** Lookups of published saved queries (GET /q/:id), remembered in process; the routes that change an endpoint forget it. */
  endpointLookups: EndpointLookupCache;
  clickhouse: ClickHouseClient;
  /** Present when events go through the Redis queue; readiness then checks it. */
  redis?: Redis | undefined;
  eventSink: EventSink;
  /** The parsed configuration (the API reads the delivery policy from it). */
  config: Config;
  /** With Redis: where a retried delivery is queued. */
  deliveryQueue?: DeliveryQueue | undefined;
  logger: Logger;
  /** Prometheus metrics of the process; requests are counted and timed when present. */
  telemetry?: Telemetry | undefined;
  operatorToken: string;
  /** Request budgets (Redis-backed with REDIS_URL), built once per process by src/runtime/services.ts. */
  rateLimits: RateLimits;
  /** Where acknowledged events reach the live view's streams; absent: one in memory (a single process). */
  liveFeed?: LiveFeed | undefined;
  /**
   * The ClickHouse interface's handler, when the process also serves it on its own port (runtime/api-process.ts),
   * so both places share one lane; absent: the app makes its own for /clickhouse.
   */
  clickhouseInterface?: ClickhouseHandler | undefined;
  /** Seals tracker tokens and webhook secrets before they are stored, opens them for a call. */
  secretBox: SecretBox;
  /** GitHub and Linear calls (discovery, creating and linking issues), behind the SSRF guard. */
  trackers: TrackerGateway;
  /** Set `stopping` on shutdown: from then on new requests get a 503 and store nothing. */
  lifecycle?: { stopping: boolean } | undefined;
};
