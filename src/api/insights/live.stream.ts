import { PassThrough } from 'node:stream';
import { type IngestEvent, toTrackedEvent } from '../../core/event.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { isPredefinedEvent } from '../../olap/metrics/measures.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { perApp } from '../define-route.js';
import type { ApiDeps } from '../deps.js';
import { AppError } from '../errors.js';
import { BoundedEventWriter } from '../live/bounded-stream.js';
import { LocalLiveFeed } from '../live/live-feed.js';
import type { RequestContext } from '../state.js';

/** Open streams per account in this process: the connection cap's ledger. */
class StreamSlots {
  readonly #open = new Map<string, number>();
  constructor(private readonly max: number) {}

  take(accountId: string): (() => void) | null {
    const open = this.#open.get(accountId) ?? 0;
    if (open >= this.max) return null;
    this.#open.set(accountId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(accountId) ?? 1) - 1;
      if (left > 0) this.#open.set(accountId, left);
      else this.#open.delete(accountId);
    };
  }
}

/** One SSE message: an event of the stream's project, in the SPEC 2.7 shape. */
const eventMessage = (event: IngestEvent) => `id: ${event.event_id}\nevent: event\ndata: ${JSON.stringify(toTrackedEvent(event))}\n\n`;

/** The account's open streams in this process, one ledger per app. */
const streamSlots = perApp((deps) => new StreamSlots(deps.config.live.maxConnectionsPerAccount));
/** Apps built without a feed (buildApp gives every app one): a feed of their own. */
const fallbackFeed = perApp(() => new LocalLiveFeed());

/**
 * GET /projects/:id/live (docs/insights.md, "Live view"): a Server-Sent Events stream of the
 * project's events as they are acknowledged, fed by the process's one LiveFeed. Below Pro only the
 * predefined events are sent. A comment line every heartbeat period keeps proxies from closing it;
 * `event: ready` says from when every event is seen. 429 beyond the account's open streams.
 * What a stream owes a slow client is bounded (BoundedEventWriter): past the budget its events
 * are skipped, and `event: skipped` says how many once it reads again.
 */
export async function liveStream(ctx: RequestContext, deps: ApiDeps, { project }: { project: ProjectWithPlan }): Promise<void> {
  const { config } = deps;
  const feed = deps.liveFeed ?? fallbackFeed(deps);
  const slots = streamSlots(deps);
  const release = slots.take(project.account_id);
  if (!release) {
    throw new AppError(429, `at most ${config.live.maxConnectionsPerAccount} live streams per account at once`, { 'Retry-After': '5' });
  }
  const allNames = PLAN_LIMITS[project.plan].customEventsReadable;
  const stream = new PassThrough();
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unsubscribe?.();
    release();
    stream.end();
  };
  // At shutdown the connection goes too: an idle keep-alive socket would hold the server open.
  const shutdown = () => {
    ctx.res.once('finish', () => ctx.req.socket.end());
    close();
  };
  ctx.req.on('close', close);
  stream.on('close', close);
  stream.on('error', close);

  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
  ctx.body = stream;
  // Owed to the client: this stream's buffers and those of the response and its socket.
  const owed = () => stream.writableLength + stream.readableLength + ctx.res.writableLength;
  const writer = new BoundedEventWriter(stream, owed, [stream, ctx.res]);
  stream.write(`: live events of project ${project.id}\nretry: 2000\n\n`);
  heartbeat = setInterval(() => writer.writeComment('heartbeat'), config.live.heartbeatMs);

  try {
    const stop = await feed.subscribe(
      project.id,
      (events) => {
        const visible = allNames ? events : events.filter((event) => isPredefinedEvent(event.event_name));
        if (visible.length > 0 && !closed) writer.writeEvents(visible, eventMessage);
      },
      shutdown,
    );
    if (closed) stop();
    else unsubscribe = stop;
  } catch {
    close();
    return;
  }
  if (!closed) stream.write(`event: ready\ndata: ${JSON.stringify({ event_scope: allNames ? 'all' : 'predefined_only' })}\n\n`);
}
