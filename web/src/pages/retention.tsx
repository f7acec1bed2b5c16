import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { DateInput } from '../components/date-input';
import { EventNameOptions, useEventNames } from '../components/event-names';
import { FilterBar } from '../components/filter-bar';
import { InsightResult } from '../components/insight-result';
import { Page } from '../components/layout';
import { PlanNarrowing } from '../components/plan-narrowing';
import { ScrollRegion } from '../components/scroll-region';
import { Empty } from '../components/states';
import { readFilters, withFilters } from '../lib/filters';
import { formatCount, formatDate, formatPercent, isoDay } from '../lib/format';
import { dayParam, intParam, textParam, toParams, useQueryState, useUrlDraft } from '../lib/url-state';
import { useResource } from '../lib/use-resource';

type RetentionRequest = Schemas['RetentionRequest'];
type RetentionResult = Schemas['RetentionResult'];
type Interval = 'day' | 'week';

const PRO_CUSTOM =
  'Cohorts over custom events are part of the Pro and Team plans; below Pro the events can be feedback_list, feedback_detail or submit_feedback.';

/**
 * The heat map's shades, lightest first, each with the text colour that reads on it at 4.5:1 or
 * better: the ramp jumps from light to dark rather than pass through shades no text reads on.
 */
const SHADES = [
  { upTo: 0, background: '#ffffff', color: '#1c2030' },
  { upTo: 0.1, background: '#eef2ff', color: '#1c2030' },
  { upTo: 0.25, background: '#d6defc', color: '#1c2030' },
  { upTo: 0.4, background: '#b3c2f7', color: '#1c2030' },
  { upTo: 0.6, background: '#3b5bdb', color: '#ffffff' },
  { upTo: 0.8, background: '#2f4ac0', color: '#ffffff' },
  { upTo: 1, background: '#1f3497', color: '#ffffff' },
] as const;

const DARKEST = SHADES[SHADES.length - 1] as (typeof SHADES)[number];
const shadeOf = (share: number) => SHADES.find((shade) => share <= shade.upTo) ?? DARKEST;

/** The form's fields as typed (the periods stay text until submitted). */
type RetentionDraft = { cohortEvent: string; returnEvent: string; interval: Interval; periods: string; from: string; to: string };

/**
 * The inputs live in the query string (`?cohort=&return=&interval=day|week&periods=&from=&to=`), so
 * a view can be shared and reloaded; a query without `from` is the empty form, nothing computed.
 */
function readQuery(params: URLSearchParams): { draft: RetentionDraft; request: RetentionRequest | null } {
  const draft: RetentionDraft = {
    cohortEvent: textParam(params, 'cohort') ?? '',
    returnEvent: textParam(params, 'return') ?? '',
    interval: params.get('interval') === 'day' ? 'day' : 'week',
    periods: String(intParam(params, 'periods', 1, 52, 8)),
    from: dayParam(params, 'from', isoDay(29)),
    to: dayParam(params, 'to', isoDay(0)),
  };
  return { draft, request: params.has('from') ? toRequest(draft) : null };
}

function toRequest(draft: RetentionDraft): RetentionRequest {
  return {
    ...(draft.cohortEvent.trim() ? { cohortEvent: draft.cohortEvent.trim() } : {}),
    ...(draft.returnEvent.trim() ? { returnEvent: draft.returnEvent.trim() } : {}),
    interval: draft.interval,
    periods: Number(draft.periods),
    dateFrom: draft.from,
    dateTo: draft.to,
  };
}

function toQuery(request: RetentionRequest): URLSearchParams {
  return toParams({
    cohort: request.cohortEvent,
    return: request.returnEvent,
    interval: request.interval,
    periods: request.periods,
    from: request.dateFrom,
    to: request.dateTo,
  });
}

/** Cohorts by first occurrence and how many came back in each later day or week (POST /insights/retention). */
export function RetentionPage() {
  const { params: routeParams } = useRoute();
  const projectId = routeParams.id ?? '';
  const { params, search, setParams } = useQueryState();
  const { draft, request: form } = readQuery(params);
  // The filter bar's list narrows the cohort and return events alike (docs/insights.md).
  const filters = readFilters(params.get('filters'));
  const request = form && filters.length > 0 ? ({ ...form, filters } as RetentionRequest) : form;
  const result = useResource(
    () =>
      request === null
        ? Promise.resolve(null)
        : unwrap(api.POST('/projects/{id}/insights/retention', { params: { path: { id: projectId } }, body: request })),
    [projectId, JSON.stringify(request)],
  );
  return (
    <Page title="Retention" projectId={projectId}>
      <RetentionForm
        projectId={projectId}
        initial={draft}
        search={search}
        busy={result.state === 'loading' && request !== null}
        onSubmit={(next) => setParams(withFilters(toQuery(next), filters))}
      />
      <FilterBar
        projectId={projectId}
        from={draft.from}
        to={draft.to}
        filters={filters}
        onChange={(next) => setParams(withFilters(params, next))}
      />
      <InsightResult
        id="retention-result"
        heading="Cohorts"
        result={result}
        asked={request !== null}
        emptyHint="Choose the events and the interval, then show the cohorts."
        loadingWhat="the cohorts"
        planHint={PRO_CUSTOM}
      >
        {(answer) => <Cohorts answer={answer} />}
      </InsightResult>
    </Page>
  );
}

function RetentionForm({
  projectId,
  initial,
  search,
  busy,
  onSubmit,
}: {
  projectId: string;
  initial: RetentionDraft;
  search: string;
  busy: boolean;
  onSubmit: (request: RetentionRequest) => void;
}) {
  // Back, forward or a pasted link change the query: the fields follow it.
  const [draft, set] = useUrlDraft(initial, search);
  const { cohortEvent, returnEvent, interval, periods, from, to } = draft;
  const names = useEventNames(projectId);
  const submit = (event: Event) => {
    event.preventDefault();
    onSubmit(toRequest(draft));
  };
  return (
    <form class="card filters" aria-label="Cohort definition" onSubmit={submit}>
      <EventNameOptions id="retention-event-names" names={names.data?.event_names} />
      <div class="field">
        <label for="cohort-event">Cohort event</label>
        <input
          id="cohort-event"
          list="retention-event-names"
          maxLength={100}
          autoComplete="off"
          placeholder="any event"
          value={cohortEvent}
          onInput={(e) => set({ cohortEvent: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for="return-event">Return event</label>
        <input
          id="return-event"
          list="retention-event-names"
          maxLength={100}
          autoComplete="off"
          placeholder="any event"
          value={returnEvent}
          onInput={(e) => set({ returnEvent: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for="retention-interval">By</label>
        <select id="retention-interval" value={interval} onChange={(e) => set({ interval: e.currentTarget.value as Interval })}>
          <option value="day">Day</option>
          <option value="week">Week</option>
        </select>
      </div>
      <div class="field">
        <label for="retention-periods">Periods</label>
        <input
          id="retention-periods"
          type="number"
          min="1"
          max="52"
          required
          class="input-short"
          value={periods}
          onInput={(e) => set({ periods: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for="retention-from">From</label>
        <DateInput id="retention-from" required value={from} onChange={(value) => set({ from: value })} />
      </div>
      <div class="field">
        <label for="retention-to">To</label>
        <DateInput id="retention-to" required value={to} onChange={(value) => set({ to: value })} />
      </div>
      <button type="submit" class="primary" disabled={busy}>
        Show cohorts
      </button>
      <p class="muted field-note">
        A user joins the cohort of their first cohort event in the range; period 0 is the cohort's size, period p counts those who did the
        return event in the p-th {interval} after.
      </p>
    </form>
  );
}

const DAY_MS = 86_400_000;

/** When period `p` of the cohort that starts on `cohortStart` ends, in ms. */
function periodEnd(cohortStart: string, p: number, interval: 'day' | 'week'): number {
  const length = interval === 'day' ? DAY_MS : 7 * DAY_MS;
  return Date.parse(`${cohortStart.slice(0, 10)}T00:00:00Z`) + (p + 1) * length;
}

/** The cohort matrix as a table, each cell shaded by its share of the cohort (the legend says how). */
function Cohorts({ answer }: { answer: RetentionResult }) {
  const unit = answer.interval === 'day' ? 'Day' : 'Week';
  const total = answer.cohorts.reduce((sum, cohort) => sum + cohort.users, 0);
  // Events are read up to the end of date_to, and none exist after now.
  const observedUntil = Math.min(Date.now(), Date.parse(`${answer.date_to}T00:00:00Z`) + DAY_MS);
  return (
    <>
      <PlanNarrowing echo={answer} what="events" />
      {total === 0 ? (
        <Empty>No user did the cohort event in this range.</Empty>
      ) : (
        <>
          <ScrollRegion label="Cohort matrix">
            <table class="data-table heatmap" data-testid="retention-matrix">
              <caption class="visually-hidden">
                Users per {answer.interval} cohort and how many came back in each later {answer.interval}; each cell gives the count and its
                share of the cohort.
              </caption>
              <thead>
                <tr>
                  <th scope="col">Cohort</th>
                  <th scope="col" class="num">
                    Users
                  </th>
                  {Array.from({ length: answer.periods + 1 }, (_, p) => (
                    <th scope="col" class="num" key={p}>
                      {unit} {p}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {answer.cohorts.map((cohort) => (
                  <tr key={cohort.cohort_start} class={cohort.users === 0 ? 'cohort-empty' : undefined}>
                    <th scope="row">{formatDate(cohort.cohort_start)}</th>
                    <td class="num">{formatCount(cohort.users)}</td>
                    {/* Nobody joined: a row of zeros would read as users who all left. */}
                    {cohort.users === 0 && (
                      <td colSpan={answer.periods + 1} class="muted">
                        No user joined this {answer.interval}.
                      </td>
                    )}
                    {cohort.users > 0 &&
                      Array.from({ length: answer.periods + 1 }, (_, p) => {
                        const count = cohort.retained[p];
                        if (count === undefined) {
                          return (
                            <td key={p} class="num heat-none">
                              <span class="visually-hidden">not measurable yet</span>
                            </td>
                          );
                        }
                        const share = count / cohort.users;
                        const shade = shadeOf(share);
                        // A period not over yet (today's, or one the window cuts) counts the users
                        // so far: hatched as the legend says, and said to screen readers.
                        const partial = periodEnd(cohort.cohort_start, p, answer.interval) > observedUntil;
                        return (
                          <td
                            key={p}
                            class={partial ? 'num heat heat-partial' : 'num heat'}
                            style={{ backgroundColor: shade.background, color: shade.color }}
                            data-period={p}
                            data-partial={partial ? 'true' : undefined}
                          >
                            <span class="heat-count">{formatCount(count)}</span>
                            <span class="heat-share">{formatPercent(share)}</span>
                            {partial && <span class="visually-hidden"> (period not over yet: so far)</span>}
                          </td>
                        );
                      })}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          <p class="heat-legend muted">
            <span>Share of the cohort:</span>
            {SHADES.slice(1).map((shade, i) => (
              <span key={shade.upTo} class="heat-key" style={{ background: shade.background, color: shade.color }}>
                {i === 0 ? 'up to ' : ''}
                {formatPercent(shade.upTo)}
              </span>
            ))}
            <span class="heat-key heat-key-hatched" aria-hidden="true">
              {'\u00a0\u00a0\u00a0'}
            </span>
            <span>Hatched cells: periods not over yet.</span>
          </p>
        </>
      )}
    </>
  );
}
