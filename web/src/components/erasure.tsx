import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { formatCount, formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { FailureNotice } from './states';

type Erasure = Schemas['Erasure'];

/** The erasure's steps in the owner's words (docs/data-rights.md); a step added later shows by its name. */
const STEP_LABELS: Partial<Record<string, string>> = {
  postgres: 'Votes, feedback and comments in the feedback database',
  settle: 'Waiting for the user’s last events to reach the analytics store',
  clickhouse_days: 'Finding the days that held the user’s events',
  clickhouse_events: 'Deleting the user’s events',
  clickhouse_facts: 'Deleting the user’s activity records',
  rollups: 'Rebuilding the daily and hourly counts',
};
const POLL_MS = 1000;

/**
 * A user's erasure (DELETE /projects/:id/users/:userId, GDPR Art. 17): asked for after a
 * confirmation, then followed (GET /projects/:id/erasures/:erasureId) step by step until it is
 * done or failed. `requested` is a user id chosen in the users' table; the form takes any other
 * (a voter who never registered, for one).
 */
export function EraseUser({
  projectId,
  requested,
  onDone,
}: {
  projectId: string;
  requested: { userId: string } | null;
  onDone: () => void;
}) {
  const [userId, setUserId] = useState('');
  const [erasure, setErasure] = useState<Erasure | null>(null);
  const { busy, failure, run } = useAction();

  const erase = async (id: string) => {
    const target = id.trim();
    if (target === '') return;
    if (
      !window.confirm(
        `Erase every trace of “${target}” in this project? Their votes are removed and their feedback and comments anonymized. This cannot be undone.`,
      )
    )
      return;
    await run(async () => {
      const started = await unwrap(api.DELETE('/projects/{id}/users/{userId}', { params: { path: { id: projectId, userId: target } } }));
      setErasure(started);
      setUserId('');
    });
  };

  useEffect(() => {
    if (requested) void erase(requested.userId);
    // Only a new request from the table starts an erasure.
  }, [requested]);

  const runningId = erasure && (erasure.status === 'pending' || erasure.status === 'running') ? erasure.id : null;
  useEffect(() => {
    if (!runningId) return;
    let live = true;
    const timer = setInterval(async () => {
      const latest = await unwrap(
        api.GET('/projects/{id}/erasures/{erasureId}', { params: { path: { id: projectId, erasureId: runningId } } }),
      ).catch(() => null);
      if (!live || !latest) return;
      setErasure(latest);
      if (latest.status === 'done') onDone();
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [runningId, projectId]);

  return (
    <section class="card" aria-labelledby="erase-heading" id="erase">
      <h2 id="erase-heading">Erase a user’s data</h2>
      <p class="muted">
        For a deletion request (GDPR Art. 17): the user’s votes, SDK registration, events and activity records are deleted, and their
        feedback and comments are kept without their id. Pick “Erase” in the table, or give any user id here.
      </p>
      <form
        class="filters"
        aria-label="Erase a user"
        onSubmit={(e) => {
          e.preventDefault();
          void erase(userId);
        }}
      >
        <div class="field field-grow">
          <label for="erase-user-id">User id</label>
          <input id="erase-user-id" required maxLength={255} value={userId} onInput={(e) => setUserId(e.currentTarget.value)} />
        </div>
        <button type="submit" class="danger" disabled={busy || runningId !== null || userId.trim() === ''}>
          Erase
        </button>
      </form>
      {failure && <FailureNotice failure={failure} />}
      {erasure && <ErasureState erasure={erasure} />}
    </section>
  );
}

function ErasureState({ erasure }: { erasure: Erasure }) {
  const steps = Object.keys(STEP_LABELS);
  const current = steps.indexOf(erasure.step);
  const counts = erasure.summary;
  const outcome =
    erasure.status === 'done'
      ? `Done ${formatDateTime(erasure.completed_at)}.`
      : erasure.status === 'failed'
        ? `Failed: ${erasure.last_error ?? 'no reason given'}. The operator can look into it with the erasure id.`
        : erasure.status === 'pending'
          ? 'Queued: it starts in a moment.'
          : `Running: ${STEP_LABELS[erasure.step] ?? erasure.step}…`;
  return (
    <div class="erasure-state" data-testid="erasure-state">
      <p role="status" aria-live="polite">
        <strong>Erasure {erasure.user_id ? `of “${erasure.user_id}”` : ''}</strong>{' '}
        <span class={`badge erasure-${erasure.status}`}>{erasure.status}</span> {outcome}
      </p>
      <ol class="erasure-steps">
        {steps.map((step, index) => {
          const done = erasure.status === 'done' || (current >= 0 && index < current);
          const now = erasure.status !== 'done' && step === erasure.step;
          return (
            <li key={step} class={done ? 'step-done' : now ? 'step-now' : 'step-next'} aria-current={now ? 'step' : undefined}>
              <span aria-hidden="true">{done ? '✓' : now ? '…' : '○'}</span> {STEP_LABELS[step]}
              <span class="visually-hidden">{done ? ' (done)' : now ? ' (in progress)' : ' (to do)'}</span>
            </li>
          );
        })}
      </ol>
      <p class="muted">
        {plural(counts.votes_deleted ?? 0, 'vote')} deleted, {plural(counts.feedbacks_anonymized ?? 0, 'feedback item')} and{' '}
        {plural(counts.comments_anonymized ?? 0, 'comment')} anonymized
        {counts.event_days !== undefined && `, events on ${plural(counts.event_days, 'day')} deleted`}. Id <code>{erasure.id}</code>
      </p>
    </div>
  );
}

const plural = (n: number, noun: string) => `${formatCount(n)} ${noun}${n === 1 ? '' : 's'}`;
