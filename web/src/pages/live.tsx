import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import type { ApiFailure } from '../api/failure';
import { EventsTable } from '../components/events-table';
import { Page } from '../components/layout';
import { Sparkline } from '../components/sparkline';
import { Empty, FailureNotice } from '../components/states';
import { formatCount } from '../lib/format';
import { followLive, type LiveEvent, type LiveState } from '../lib/live-stream';

/** The newest events kept on the page: a stream left open for hours must not grow the page without end. */
const MAX_SHOWN = 100;
/** The sparkline's span, in minutes. */
const MINUTES = 30;
const MINUTE_MS = 60_000;
const PRO_LIVE = 'On Free, the live view shows the predefined events only; Pro and Team show every event name.';
/** The store is read for the last 30 minutes in pages of the feed's largest size, at most this many. */
const FILL_PAGES = 5;
const FILL_PAGE_SIZE = 1000;

/**
 * The events stored in the last `MINUTES` minutes, newest first (the metrics event feed, paged by
 * its cursor until it reaches older events), so the view opens with what arrived before the tab
 * did instead of "0 events". `complete` is false when the pages ran out first (a very busy app).
 */
async function recentEvents(projectId: string, since: number): Promise<{ events: LiveEvent[]; complete: boolean }> {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const events: LiveEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < FILL_PAGES; page++) {
    const answer = await unwrap(
      api.GET('/projects/{id}/metrics/events', {
        params: {
          path: { id: projectId },
          query: { date_from: day(since), date_to: day(Date.now()), limit: FILL_PAGE_SIZE, ...(cursor ? { cursor } : {}) },
        },
      }),
    );
    for (const event of answer.events) {
      if (Date.parse(event.created_at) < since) return { events, complete: true };
      events.push(event);
    }
    if (!answer.next_cursor) return { events, complete: true };
    cursor = answer.next_cursor;
  }
  return { events, complete: false };
}

/** Events of the project as the API acknowledges them (GET /projects/:id/live), newest first. */
export function LivePage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const [state, setState] = useState<LiveState>({ kind: 'connecting' });
  const [shown, setShown] = useState<LiveEvent[]>([]);
  const [held, setHeld] = useState<LiveEvent[]>([]);
  const [paused, setPaused] = useState(false);
  const [perMinute, setPerMinute] = useState<Map<number, number>>(new Map());
  const [received, setReceived] = useState(0);
  const [now, setNow] = useState(Date.now());
  const [attempt, setAttempt] = useState(0);
  const [stored, setStored] = useState<{ count: number; complete: boolean } | { failure: ApiFailure } | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  // Ids shown already, the stored ones and the streamed ones: an event in both is shown once.
  const seenRef = useRef(new Set<string>());

  // The last 30 minutes from the store, once, when the page opens: the stream brings what follows.
  useEffect(() => {
    let cancelled = false;
    const since = Date.now() - MINUTES * MINUTE_MS;
    recentEvents(projectId, since).then(
      ({ events, complete }) => {
        if (cancelled) return;
        const fresh = events.filter((event) => !seenRef.current.has(event.id));
        for (const event of fresh) seenRef.current.add(event.id);
        setPerMinute((counts) => {
          const next = new Map(counts);
          for (const event of fresh) {
            const minute = Math.floor(Date.parse(event.created_at) / MINUTE_MS) * MINUTE_MS;
            next.set(minute, (next.get(minute) ?? 0) + 1);
          }
          return next;
        });
        // Streamed events are newer than stored ones: they stay on top.
        setShown((list) => [...list, ...fresh].slice(0, MAX_SHOWN));
        setStored({ count: fresh.length, complete });
      },
      (failure: ApiFailure) => {
        if (!cancelled) setStored({ failure });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [projectId]);

  useEffect(() => {
    // A retried request is sent again with the same id: each id is shown once.
    const seen = seenRef.current;
    const stop = followLive(projectId, {
      onState: setState,
      onEvent: (event) => {
        if (seen.has(event.id)) return;
        seen.add(event.id);
        if (seen.size > MAX_SHOWN * 20) seen.clear();
        setReceived((n) => n + 1);
        const minute = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
        setPerMinute((counts) => new Map(counts).set(minute, (counts.get(minute) ?? 0) + 1));
        if (pausedRef.current) setHeld((list) => [event, ...list].slice(0, MAX_SHOWN));
        else setShown((list) => [event, ...list].slice(0, MAX_SHOWN));
      },
    });
    return stop;
  }, [projectId, attempt]);

  // The sparkline slides with the clock, also when nothing arrives.
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 10_000);
    return () => clearInterval(timer);
  }, []);

  const resume = () => {
    setShown((list) => [...held, ...list].slice(0, MAX_SHOWN));
    setHeld([]);
    setPaused(false);
  };

  const spark = useMemo(() => {
    const last = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const minutes = Array.from({ length: MINUTES }, (_, i) => last - (MINUTES - 1 - i) * MINUTE_MS);
    const counts = minutes.map((minute) => perMinute.get(minute) ?? 0);
    const total = counts.reduce((sum, n) => sum + n, 0);
    return {
      times: minutes.map((minute) => minute / 1000),
      counts,
      summary: `${formatCount(total)} events in the last ${MINUTES} minutes, ${formatCount(counts[counts.length - 1])} this minute.`,
      total,
    };
  }, [perMinute, now]);

  return (
    <Page
      title="Live"
      projectId={projectId}
      actions={
        state.kind !== 'refused' && (
          <button type="button" onClick={paused ? resume : () => setPaused(true)} aria-pressed={paused}>
            {paused ? 'Resume' : 'Pause'}
          </button>
        )
      }
    >
      <ConnectionState state={state} paused={paused} held={held.length} onReconnect={() => setAttempt((n) => n + 1)} />
      {state.kind === 'live' && state.eventScope === 'predefined_only' && (
        <p class="notice notice-plan" role="note">
          Only feedback_list, feedback_detail and submit_feedback are shown on your plan. The Pro and Team plans show every event name.
        </p>
      )}
      <section class="card" aria-labelledby="per-minute-heading">
        <h2 id="per-minute-heading">Events per minute</h2>
        <Sparkline times={spark.times} counts={spark.counts} summary={spark.summary} label="Events per minute, last 30 minutes" />
        <p class="muted" data-testid="live-fill">
          {stored === null && 'Reading the events stored in the last 30 minutes…'}
          {stored !== null && 'count' in stored && (
            <>
              Of these, {formatCount(stored.count)} were stored before this page opened
              {stored.complete ? '' : ` (the newest ${formatCount(FILL_PAGES * FILL_PAGE_SIZE)} only)`} and{' '}
              {formatCount(Math.max(0, spark.total - stored.count))} arrived since.
            </>
          )}
          {stored !== null &&
            'failure' in stored &&
            (stored.failure.status === 402
              ? 'Only the events received since this page opened are counted: the stored events (the raw event feed) are part of the Pro and Team plans.'
              : `Only the events received since this page opened are counted: the stored ones could not be read (${stored.failure.message}).`)}
        </p>
      </section>
      <section class="card" aria-labelledby="live-events-heading">
        <h2 id="live-events-heading">
          Newest events <span class="muted">({formatCount(received)} since this page opened)</span>
        </h2>
        {shown.length === 0 ? (
          <Empty>
            {state.kind === 'live' ? 'Waiting for events: they appear here as your apps send them.' : 'No events received yet.'}
          </Empty>
        ) : (
          <EventsTable events={shown} label="Live events" testId="live-events" projectId={projectId} />
        )}
        {shown.length >= MAX_SHOWN && (
          <p class="muted">The newest {MAX_SHOWN} events are kept here; older ones are in the metrics event feed.</p>
        )}
      </section>
    </Page>
  );
}

/** Where the stream stands, in words; a refusal keeps its own notice (sign in, plan, wait). */
function ConnectionState({
  state,
  paused,
  held,
  onReconnect,
}: {
  state: LiveState;
  paused: boolean;
  held: number;
  onReconnect: () => void;
}) {
  if (state.kind === 'refused') return <FailureNotice failure={state.failure} onRetry={onReconnect} planHint={PRO_LIVE} />;
  if (state.kind === 'reconnecting') {
    return (
      <div class="notice notice-warn" role="alert" data-testid="live-state">
        <p>
          Disconnected: {state.reason}. Reconnecting in {state.inSeconds} s; events sent meanwhile are not shown here (they are stored).
        </p>
        <button type="button" onClick={onReconnect}>
          Reconnect now
        </button>
      </div>
    );
  }
  return (
    <p class={`live-state live-${state.kind}`} role="status" data-testid="live-state">
      <span class="live-dot" aria-hidden="true" />
      {state.kind === 'connecting' && 'Connecting…'}
      {state.kind === 'live' && !paused && 'Live: new events appear at the top.'}
      {state.kind === 'live' && paused && `Paused: ${formatCount(held)} new events held back. Resume to show them.`}
    </p>
  );
}
