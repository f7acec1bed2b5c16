import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { formatCount, formatDate, formatDateTime, formatMoney, formatPercent } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { EventNameOptions, useEventNames } from './event-names';
import { PlanNarrowing } from './plan-narrowing';
import { Empty, FailureNotice, Loading } from './states';
import { type Series, TimeChart } from './time-chart';

type Impact = Schemas['ImpactResult'];
const DAY_OPTIONS = [7, 30, 90] as const;
const MAX_NAMES = 20;
const PRO_IMPACT = 'Reading the use of custom events is part of the Pro and Team plans.';

/**
 * Feature impact on a feedback item's page (GET/PUT …/feedbacks/:feedbackId/impact): link the
 * events that show the feature in use, then, once the item is completed, adoption among its
 * voters and their MRR, with a before/after chart that marks the ship date.
 */
export function FeatureImpact({ projectId, feedbackId, status }: { projectId: string; feedbackId: string; status: string }) {
  const [days, setDays] = useState<number>(30);
  const [editing, setEditing] = useState(false);
  const impact = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/feedbacks/{feedbackId}/impact', {
          params: { path: { id: projectId, feedbackId }, query: { days } },
        }),
      ),
    [projectId, feedbackId, days, status],
  );
  // No events linked to the item yet: a normal state, not a failure. The service answers it with
  // a 404 today (which Chromium logs to the console as a failed resource); an answer of 200 with
  // no event names means the same and is drawn the same way.
  const unlinked =
    (impact.state === 'failed' && impact.failure.status === 404) || (impact.state === 'ready' && impact.data.event_names.length === 0);
  // A 402 names a linked event the plan cannot read: the links can still be changed.
  const gated = impact.state === 'failed' && impact.failure.status === 402;
  const linked = impact.data?.event_names ?? [];
  // Just completed: the ship time reaches the answer once the status change is relayed (about a
  // second): ask again a few times rather than show "not shipped" until a reload.
  const awaitingShip = status === 'completed' && impact.state === 'ready' && impact.data.shipped_at === null;
  const [polls, setPolls] = useState(0);
  useEffect(() => {
    if (!awaitingShip || polls >= 15) return;
    const timer = setTimeout(() => {
      setPolls((n) => n + 1);
      impact.reload();
    }, 2000);
    return () => clearTimeout(timer);
  }, [awaitingShip, polls]);
  return (
    <section class="card impact" aria-labelledby="impact-heading" aria-busy={impact.state === 'loading'}>
      <h2 id="impact-heading">Feature impact</h2>
      {impact.state === 'loading' && !impact.data && <Loading what="the feature impact" />}
      {impact.state === 'failed' && !unlinked && <FailureNotice failure={impact.failure} onRetry={impact.reload} planHint={PRO_IMPACT} />}
      {gated && !editing && (
        <button type="button" onClick={() => setEditing(true)}>
          Change linked events
        </button>
      )}
      {(unlinked || editing) && (
        <LinkForm
          projectId={projectId}
          feedbackId={feedbackId}
          initial={linked}
          onSaved={() => {
            setEditing(false);
            impact.reload();
          }}
          onCancel={editing ? () => setEditing(false) : undefined}
        />
      )}
      {impact.data && !unlinked && !editing && (
        <>
          <p>
            Linked events: <strong data-testid="impact-events">{impact.data.event_names.join(', ')}</strong>{' '}
            <button type="button" class="link-button" onClick={() => setEditing(true)}>
              Change
            </button>
          </p>
          <ImpactAnswer impact={impact.data} days={days} onDays={setDays} />
        </>
      )}
    </section>
  );
}

function LinkForm({
  projectId,
  feedbackId,
  initial,
  onSaved,
  onCancel,
}: {
  projectId: string;
  feedbackId: string;
  initial: string[];
  onSaved: () => void;
  onCancel?: (() => void) | undefined;
}) {
  const [names, setNames] = useState<string[]>(initial);
  const [draft, setDraft] = useState('');
  const { busy, failure, run } = useAction();
  const known = useEventNames(projectId);
  const add = () => {
    const name = draft.trim();
    if (name && !names.includes(name) && names.length < MAX_NAMES) setNames([...names, name]);
    setDraft('');
  };
  const save = async (event: Event) => {
    event.preventDefault();
    await run(async () => {
      await unwrap(
        api.PUT('/projects/{id}/feedbacks/{feedbackId}/impact', {
          params: { path: { id: projectId, feedbackId } },
          body: { eventNames: names },
        }),
      );
      onSaved();
    });
  };
  return (
    <form onSubmit={save} aria-label="Linked events">
      {initial.length === 0 && (
        <p class="muted">
          Link the events your apps send when this feature is used: after the item is completed, this shows who adopted it.
        </p>
      )}
      <EventNameOptions id="impact-event-names" names={known.data?.event_names} />
      <label for="impact-event">Event name</label>
      <div class="field-row">
        <input
          id="impact-event"
          list="impact-event-names"
          maxLength={100}
          autoComplete="off"
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter adds the name; the form is saved with its button.
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
        />
        <button type="button" onClick={add} disabled={draft.trim() === '' || names.length >= MAX_NAMES}>
          Add event
        </button>
      </div>
      {names.length > 0 && (
        <ul class="chips" aria-label="Events to link">
          {names.map((name) => (
            <li key={name} class="chip">
              {name}
              <button
                type="button"
                class="link-button"
                aria-label={`Remove ${name}`}
                onClick={() => setNames(names.filter((other) => other !== name))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="button-row form-actions">
        <button type="submit" class="primary" disabled={busy || names.length === 0}>
          Save linked events
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {failure && <FailureNotice failure={failure} />}
    </form>
  );
}

function ImpactAnswer({ impact, days, onDays }: { impact: Impact; days: number; onDays: (days: number) => void }) {
  if (impact.shipped_at === null) {
    return (
      <div class="state-empty" data-testid="impact-not-shipped">
        <p>
          <strong>Not shipped yet.</strong> When this item's status becomes Completed, adoption among its {formatCount(impact.voters)}{' '}
          voters is measured from that moment.
        </p>
      </div>
    );
  }
  return (
    <>
      <PlanNarrowing echo={impact} what="events" />
      <div class="field-row">
        <label for="impact-days">Days before and after shipping</label>
        <select id="impact-days" value={String(days)} onChange={(e) => onDays(Number(e.currentTarget.value))}>
          {DAY_OPTIONS.map((n) => (
            <option key={n} value={n}>
              {n} days
            </option>
          ))}
        </select>
      </div>
      <dl class="tiles impact-tiles">
        <Tile label="Shipped" value={formatDateTime(impact.shipped_at)} id="shipped" />
        <Tile label="Voters" value={formatCount(impact.voters)} id="voters" />
        <Tile label="Voters who adopted" value={formatCount(impact.voters_adopted)} id="voters-adopted" />
        <Tile label="Their MRR" value={formatMoney(impact.voters_adopted_mrr)} id="voters-adopted-mrr" />
        <Tile label="Adoption among active users" value={formatPercent(impact.adoption_share)} id="adoption-share" />
        <Tile
          label={`Users before / after`}
          value={`${formatCount(impact.before?.users)} / ${formatCount(impact.after?.users)}`}
          id="users-before-after"
        />
      </dl>
      <p class="muted">
        Before: {formatCount(impact.before?.events)} events by {formatCount(impact.before?.users)} users in the {impact.days} days before
        shipping. After: {formatCount(impact.after?.events)} events by {formatCount(impact.after?.users)} of{' '}
        {formatCount(impact.after?.active_users)} active users.
      </p>
      <ImpactChart impact={impact} />
    </>
  );
}

function Tile({ label, value, id }: { label: string; value: string; id: string }) {
  return (
    <div class="tile">
      <dt>{label}</dt>
      <dd data-testid={`impact-${id}`}>{value}</dd>
    </div>
  );
}

const COLORS = ['#3b5bdb', '#c2255c'];

/** The linked events per day, the ship date marked. */
function ImpactChart({ impact }: { impact: Impact }) {
  const chart = useMemo(() => {
    const times = impact.series.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000);
    const series: Series[] = [
      { label: 'Events', values: impact.series.map((d) => d.events), color: COLORS[0] as string },
      { label: 'Users', values: impact.series.map((d) => d.users), color: COLORS[1] as string },
    ];
    const shipped = impact.shipped_at ? Date.parse(impact.shipped_at) / 1000 : null;
    const marks = shipped === null ? [] : [{ time: shipped, label: 'Shipped' }];
    const summary = `Linked events per day from ${formatDate(impact.date_from)} to ${formatDate(impact.date_to)}; shipped on ${
      impact.shipped_at ? formatDate(impact.shipped_at) : '—'
    }`;
    return { times, series, marks, summary };
  }, [impact]);
  if (impact.series.length === 0) return <Empty>No days to draw in your plan's window.</Empty>;
  return (
    <TimeChart times={chart.times} series={chart.series} interval="day" summary={chart.summary} partialIndex={null} marks={chart.marks} />
  );
}
