import { useMemo } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { DateInput } from '../components/date-input';
import { EventNameOptions, useEventNames } from '../components/event-names';
import { FilterBar } from '../components/filter-bar';
import { InsightResult } from '../components/insight-result';
import { Page } from '../components/layout';
import { PathsSankey } from '../components/paths-sankey';
import { PathsEdgesTable, PathsNodeDetails, PathsTopTable } from '../components/paths-tables';
import { PlanNarrowing } from '../components/plan-narrowing';
import { Empty } from '../components/states';
import { readFilters, withFilters } from '../lib/filters';
import { formatCount, isoDay } from '../lib/format';
import { flowsOf, type PathNode, type PathsResult, parseNodeId, pathNodes, usersText } from '../lib/paths-graph';
import { dayParam, intParam, textParam, toParams, useQueryState, useUrlDraft } from '../lib/url-state';
import { useResource } from '../lib/use-resource';

type PathsRequest = Schemas['PathsRequest'];
type Anchor = 'start' | 'end' | 'none';
type PathsDraft = { anchor: Anchor; event: string; depth: number; from: string; to: string; limit: string; exclude: string };

const MIN_DEPTH = 2;
const MAX_DEPTH = 6;
const PRO_CUSTOM =
  'Paths through custom events are part of the Pro and Team plans; below Pro the start, end and left-out events can be feedback_list, feedback_detail or submit_feedback.';

/**
 * The inputs live in the query string, so a view can be shared and reloaded:
 * `?start=` or `?end=` (an event), `depth=2…6`, `from=`, `to=`, `limit=1…200`, `exclude=` (repeated)
 * and `node=<step>:<name>`, the node whose flows are shown. Without a query the page shows the last
 * 30 days' paths from any event.
 */
function readQuery(params: URLSearchParams): { draft: PathsDraft; request: PathsRequest; node: string | null } {
  const start = textParam(params, 'start');
  const end = start ? undefined : textParam(params, 'end');
  const draft: PathsDraft = {
    anchor: start ? 'start' : end ? 'end' : 'none',
    event: start ?? end ?? '',
    depth: intParam(params, 'depth', MIN_DEPTH, MAX_DEPTH, 4),
    from: dayParam(params, 'from', isoDay(29)),
    to: dayParam(params, 'to', isoDay(0)),
    limit: String(intParam(params, 'limit', 1, 200, 50)),
    exclude: params
      .getAll('exclude')
      .map((name) => name.trim())
      .filter(Boolean)
      .join(', '),
  };
  return { draft, request: toRequest(draft), node: params.get('node') };
}

const excludedNames = (draft: PathsDraft) =>
  draft.exclude
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);

function toRequest(draft: PathsDraft): PathsRequest {
  const event = draft.event.trim();
  const exclude = excludedNames(draft);
  return {
    ...(draft.anchor === 'start' && event ? { startEvent: event } : {}),
    ...(draft.anchor === 'end' && event ? { endEvent: event } : {}),
    depth: draft.depth,
    dateFrom: draft.from,
    dateTo: draft.to,
    limit: Number(draft.limit),
    ...(exclude.length > 0 ? { excludeEvents: exclude } : {}),
  };
}

function toQuery(draft: PathsDraft): URLSearchParams {
  const event = draft.event.trim();
  return toParams({
    start: draft.anchor === 'start' ? event : undefined,
    end: draft.anchor === 'end' ? event : undefined,
    depth: draft.depth,
    from: draft.from,
    to: draft.to,
    limit: Number(draft.limit),
    exclude: excludedNames(draft),
  });
}

/** What users did after an event or before one, as a Sankey drawing and tables (POST /insights/paths). */
export function PathsPage() {
  const { params: routeParams } = useRoute();
  const projectId = routeParams.id ?? '';
  const { params, search, setParams } = useQueryState();
  const { draft, request: form, node } = readQuery(params);
  // The filter bar's list keeps the events that match it before paths are formed (docs/insights.md).
  const filters = readFilters(params.get('filters'));
  const request = filters.length > 0 ? ({ ...form, filters } as PathsRequest) : form;
  const result = useResource(
    () => unwrap(api.POST('/projects/{id}/insights/paths', { params: { path: { id: projectId } }, body: request })),
    [projectId, JSON.stringify(request)],
  );
  // The selected node is part of the view: kept in the query (replacing the entry, not adding one).
  const select = (id: string | null) => {
    const next = new URLSearchParams(params);
    if (id === null) next.delete('node');
    else next.set('node', id);
    setParams(next, true);
  };
  return (
    <Page title="Paths" projectId={projectId}>
      <PathsForm
        projectId={projectId}
        initial={draft}
        search={search}
        busy={result.state === 'loading'}
        onSubmit={(next) => setParams(withFilters(toQuery(next), filters))}
      />
      <FilterBar
        projectId={projectId}
        from={draft.from}
        to={draft.to}
        filters={filters}
        onChange={(next) => setParams(withFilters(params, next))}
      />
      <InsightResult id="paths-result" heading="Paths" result={result} loadingWhat="the paths" planHint={PRO_CUSTOM}>
        {(answer) => <PathsAnswer answer={answer} selected={node} onSelect={select} />}
      </InsightResult>
    </Page>
  );
}

function PathsForm({
  projectId,
  initial,
  search,
  busy,
  onSubmit,
}: {
  projectId: string;
  initial: PathsDraft;
  search: string;
  busy: boolean;
  onSubmit: (draft: PathsDraft) => void;
}) {
  // Back, forward or a pasted link change the query: the fields follow it.
  const [draft, set] = useUrlDraft(initial, search);
  const names = useEventNames(projectId);
  const submit = (event: Event) => {
    event.preventDefault();
    onSubmit(draft);
  };
  return (
    <form class="card filters paths-form" aria-label="Paths to show" onSubmit={submit}>
      <EventNameOptions id="paths-event-names" names={names.data?.event_names} />
      <div class="field">
        <label for="paths-anchor">Follow users</label>
        <select id="paths-anchor" value={draft.anchor} onChange={(e) => set({ anchor: e.currentTarget.value as Anchor })}>
          <option value="start">after an event</option>
          <option value="end">before an event</option>
          <option value="none">from their first event</option>
        </select>
      </div>
      {draft.anchor !== 'none' && (
        <div class="field">
          <label for="paths-event">{draft.anchor === 'start' ? 'Start event' : 'End event'}</label>
          <input
            id="paths-event"
            list="paths-event-names"
            required
            maxLength={100}
            autoComplete="off"
            value={draft.event}
            onInput={(e) => set({ event: e.currentTarget.value })}
          />
        </div>
      )}
      <div class="field">
        <label for="paths-depth">Steps</label>
        <select id="paths-depth" value={String(draft.depth)} onChange={(e) => set({ depth: Number(e.currentTarget.value) })}>
          {Array.from({ length: MAX_DEPTH - MIN_DEPTH + 1 }, (_, i) => MIN_DEPTH + i).map((depth) => (
            <option key={depth} value={String(depth)}>
              {depth}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="paths-from">From</label>
        <DateInput id="paths-from" required value={draft.from} onChange={(value) => set({ from: value })} />
      </div>
      <div class="field">
        <label for="paths-to">To</label>
        <DateInput id="paths-to" required value={draft.to} onChange={(value) => set({ to: value })} />
      </div>
      <div class="field">
        <label for="paths-limit">Moves listed</label>
        <input
          id="paths-limit"
          type="number"
          min="1"
          max="200"
          required
          class="input-short"
          value={draft.limit}
          onInput={(e) => set({ limit: e.currentTarget.value })}
        />
      </div>
      <div class="field field-grow">
        <label for="paths-exclude">Leave out events (comma-separated)</label>
        <input
          id="paths-exclude"
          maxLength={2000}
          autoComplete="off"
          placeholder="page_view, heartbeat"
          value={draft.exclude}
          onInput={(e) => set({ exclude: e.currentTarget.value })}
        />
      </div>
      <button type="submit" class="primary" disabled={busy}>
        Show paths
      </button>
      <p class="muted field-note">
        Each user's events in the range, in time order, from their first start event or up to their last end event; repeats in a row count
        once, and a path stops after {draft.depth} events.
      </p>
    </form>
  );
}

function PathsAnswer({
  answer,
  selected,
  onSelect,
}: {
  answer: PathsResult;
  selected: string | null;
  onSelect: (id: string | null) => void;
}) {
  const nodes = useMemo(() => pathNodes(answer), [answer]);
  const wanted = selected ? parseNodeId(selected) : null;
  const node = wanted ? nodes.find((n) => n.step === wanted.step && n.name === wanted.name) : undefined;
  const anchor = answer.start_event ?? answer.end_event;
  if (answer.users === 0) {
    return (
      <>
        <PlanNarrowing echo={answer} what="events" />
        <Empty>
          {anchor
            ? `No user did ${anchor} in this range${answer.exclude_events.length > 0 ? ' with these events left out' : ''}.`
            : 'No events in this range.'}
        </Empty>
      </>
    );
  }
  const truncated = answer.edges.length >= answer.limit;
  return (
    <>
      <PlanNarrowing echo={answer} what="events" />
      <p class="paths-summary" data-testid="paths-summary">
        {usersText(answer.users)} with a path
        {answer.start_event ? ` starting at ${answer.start_event}` : answer.end_event ? ` ending at ${answer.end_event}` : ''},{' '}
        {answer.depth} steps at most; {formatCount(answer.edges.length)} moves drawn.
        {truncated && ` Only the ${answer.limit} moves with the most users are listed: raise "Moves listed" to see more.`}
      </p>
      {answer.edges.length === 0 ? (
        <Empty>Nobody went on to another event: every path is a single event.</Empty>
      ) : (
        <figure class="paths-figure">
          <PathsSankey nodes={nodes} edges={answer.edges} selected={node?.id ?? null} onSelect={(n: PathNode) => onSelect(n.id)} />
          <figcaption class="muted">
            A column per step, a bar per event (its height the users at it), a band per move (its width the users who made it). Hover for
            the numbers; select an event, with a click or with Tab and Enter, to see where its users came from and went. On a narrow screen
            the drawing scrolls sideways.
          </figcaption>
        </figure>
      )}
      <div aria-live="polite">
        {node && <PathsNodeDetails flows={flowsOf(node, answer.edges, answer.depth)} onClose={() => onSelect(null)} />}
      </div>
      {answer.edges.length > 0 && (
        <>
          <h3>Moves</h3>
          <PathsEdgesTable edges={answer.edges} nodes={nodes} />
        </>
      )}
      <h3>Top paths</h3>
      <PathsTopTable answer={answer} />
    </>
  );
}
