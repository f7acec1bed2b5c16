import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { FeatureImpact } from '../components/feature-impact';
import { FeedbackLink } from '../components/feedback-link';
import { Page } from '../components/layout';
import { LinkedIssues } from '../components/linked-issues';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading } from '../components/states';
import { ItemStateBadge, StatusBadge } from '../components/status-badge';
import { UserLink } from '../components/user-link';
import { type Feedback, loadFeedback, loadFeedbackItem } from '../lib/feedback';
import { CATEGORY_LABELS, type FeedbackStatus, formatCount, formatDateTime, formatMoney, STATUS_LABELS, STATUSES } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

export function FeedbackDetailPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const feedbackId = params.feedbackId ?? '';
  const item = useResource(() => loadFeedbackItem(projectId, feedbackId), [projectId, feedbackId]);

  return (
    <Page title={item.data ? item.data.title : 'Feedback'} projectId={projectId}>
      <p>
        <a href={`/projects/${projectId}/feedback`}>← Back to the inbox</a>
      </p>
      {item.state === 'failed' && item.failure.status === 404 && <Empty>This feedback item does not exist in this project.</Empty>}
      {item.state === 'failed' && item.failure.status !== 404 && <FailureNotice failure={item.failure} onRetry={item.reload} />}
      {item.state === 'loading' && !item.data && <Loading what="the feedback item" />}
      {item.data && <Detail projectId={projectId} item={item.data} onChanged={item.reload} />}
    </Page>
  );
}

/**
 * One item, the conversation first: the description and the comment thread with the reply box in
 * the main column; the status, the merge, the feature's impact and the deletion beside it (below
 * it on a phone); then the voters across the whole width, a four-column table of ids, emails,
 * MRR and times that the side column squeezed until ids broke ("user-/1"). A merged item is
 * read-only: its votes and comments live on in its target.
 */
function Detail({ projectId, item, onChanged }: { projectId: string; item: Feedback; onChanged: () => void }) {
  const merged = item.merged_into_id !== null && item.merged_into_id !== undefined;
  return (
    <div class="detail-grid">
      <div class="stack">
        {merged && item.merged_into_id && (
          <section class="notice notice-merged" aria-label="Merged" data-testid="merged-notice">
            <p>
              <strong>Merged</strong> {formatDateTime(item.merged_at)} into <FeedbackLink projectId={projectId} id={item.merged_into_id} />.
              This item is read-only: its votes and comments moved there, and it is left out of the inbox's counts.
            </p>
          </section>
        )}
        <About projectId={projectId} item={item} />
        <Comments projectId={projectId} item={item} onChanged={onChanged} />
      </div>
      <div class="stack">
        {!merged && <StatusForm projectId={projectId} item={item} onChanged={onChanged} />}
        {!merged && <LinkedIssues projectId={projectId} feedbackId={item.id} onChanged={onChanged} />}
        {!merged && <MergeForm projectId={projectId} item={item} onChanged={onChanged} />}
        {!merged && <FeatureImpact projectId={projectId} feedbackId={item.id} status={item.status} />}
        <DeleteItem projectId={projectId} item={item} />
      </div>
      <Voters projectId={projectId} item={item} />
    </div>
  );
}

function About({ projectId, item }: { projectId: string; item: Feedback }) {
  return (
    <section class="card" aria-labelledby="about-heading">
      <h2 id="about-heading">About</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <ItemStateBadge item={item} />
          {item.merged_into_id && (
            <span class="muted">
              {' '}
              (was <StatusBadge status={item.status} />)
            </span>
          )}
        </dd>
        <dt>Category</dt>
        <dd>{CATEGORY_LABELS[item.category]}</dd>
        <dt>Submitted by</dt>
        <dd>
          <UserLink projectId={projectId} userId={item.user_id} />
          {item.user_email && <> ({item.user_email})</>}
        </dd>
        <dt>Created</dt>
        <dd>{formatDateTime(item.created_at)}</dd>
        <dt>Votes</dt>
        <dd data-testid="vote-count">{formatCount(item.vote_count)}</dd>
        <dt>Voters' MRR</dt>
        <dd>{formatMoney(item.total_mrr)}</dd>
        {item.rejection_reason && (
          <>
            <dt>Rejection reason</dt>
            <dd>{item.rejection_reason}</dd>
          </>
        )}
      </dl>
      <h3>Description</h3>
      <p class="description">{item.description}</p>
      {item.merged_feedback_ids && item.merged_feedback_ids.length > 0 && (
        <>
          <h3>Merged into this item</h3>
          <ul>
            {item.merged_feedback_ids.map((id) => (
              <li key={id}>
                <FeedbackLink projectId={projectId} id={id} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** Deletes the item for good (DELETE /projects/:id/feedbacks/:feedbackId), after a confirmation. */
function DeleteItem({ projectId, item }: { projectId: string; item: Feedback }) {
  const { route } = useLocation();
  const { busy, failure, run } = useAction();
  const remove = async () => {
    if (!window.confirm(`Delete “${item.title}” for good? Its votes and comments are deleted with it.`)) return;
    await run(async () => {
      await unwrap(api.DELETE('/projects/{id}/feedbacks/{feedbackId}', { params: { path: { id: projectId, feedbackId: item.id } } }));
      route(`/projects/${projectId}/feedback`);
    });
  };
  return (
    <section class="card card-danger" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete this item</h2>
      <p class="muted">The item, its votes and its comments are deleted for good; this cannot be undone.</p>
      <button type="button" class="danger" onClick={remove} disabled={busy}>
        Delete item
      </button>
      {failure && <FailureNotice failure={failure} />}
    </section>
  );
}

/** Who voted, with the email they gave and their MRR: the owner's own users. */
function Voters({ projectId, item }: { projectId: string; item: Feedback }) {
  const voters = useResource(
    () => unwrap(api.GET('/projects/{id}/feedbacks/{feedbackId}/votes', { params: { path: { id: projectId, feedbackId: item.id } } })),
    [projectId, item.id, item.vote_count],
  );
  return (
    <section class="card voters" aria-labelledby="voters-heading">
      <h2 id="voters-heading">Voters ({formatCount(item.vote_count)})</h2>
      {voters.state === 'failed' && <FailureNotice failure={voters.failure} onRetry={voters.reload} />}
      {voters.state === 'loading' && !voters.data && <Loading what="voters" />}
      {voters.data && voters.data.voters.length === 0 && (
        <Empty>{item.merged_into_id ? 'The votes moved to the item this one was merged into.' : 'No votes.'}</Empty>
      )}
      {voters.data && voters.data.voters.length > 0 && (
        <>
          <p>
            Voters' MRR in total: <strong data-testid="voters-total-mrr">{formatMoney(voters.data.total_mrr)}</strong>
          </p>
          <ScrollRegion label="Voters">
            <table class="data-table">
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Email</th>
                  <th scope="col" class="num">
                    MRR
                  </th>
                  <th scope="col">Voted</th>
                </tr>
              </thead>
              <tbody>
                {voters.data.voters.map((voter) => (
                  <tr key={voter.user_id}>
                    <td>
                      <UserLink projectId={projectId} userId={voter.user_id} />
                    </td>
                    <td class="break">{voter.email ?? '—'}</td>
                    <td class="num">{formatMoney(voter.mrr)}</td>
                    <td>{formatDateTime(voter.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      )}
    </section>
  );
}

function StatusForm({ projectId, item, onChanged }: { projectId: string; item: Feedback; onChanged: () => void }) {
  const [status, setStatus] = useState<FeedbackStatus>(item.status);
  const [reason, setReason] = useState(item.rejection_reason ?? '');
  const { busy, failure, run } = useAction();
  const [saved, setSaved] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const body: Schemas['UpdateFeedbackStatusRequest'] =
      status === 'rejected' ? { status, rejectionReason: reason.trim() === '' ? null : reason.trim() } : { status };
    await run(async () => {
      await unwrap(api.PATCH('/projects/{id}/feedbacks/{feedbackId}', { params: { path: { id: projectId, feedbackId: item.id } }, body }));
      setSaved(true);
      onChanged();
    });
  };

  return (
    <form class="card" onSubmit={submit} aria-labelledby="status-heading">
      <h2 id="status-heading">Status</h2>
      <label for="status">New status</label>
      <select id="status" value={status} onChange={(e) => setStatus(e.currentTarget.value as FeedbackStatus)}>
        {STATUSES.map((value) => (
          <option value={value} key={value}>
            {STATUS_LABELS[value]}
          </option>
        ))}
      </select>
      {status === 'rejected' && (
        <>
          <label for="rejection-reason">Reason for rejecting (shown to users, optional)</label>
          <textarea id="rejection-reason" maxLength={500} rows={3} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </>
      )}
      <div class="button-row form-actions">
        <button type="submit" class="primary" disabled={busy}>
          Save status
        </button>
        <span role="status" class="muted">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
      {failure && <FailureNotice failure={failure} />}
    </form>
  );
}

function MergeForm({ projectId, item, onChanged }: { projectId: string; item: Feedback; onChanged: () => void }) {
  const [search, setSearch] = useState('');
  const { busy, failure, run } = useAction();
  // The API searches the titles; merged items are left out (a merge into one is refused).
  const found = useResource(
    () => (search.trim() ? loadFeedback(projectId, { q: search, sort: 'votes', limit: 9 }) : Promise.resolve([])),
    [projectId, search],
  );
  const candidates = (found.data ?? []).filter((other) => other.id !== item.id).slice(0, 8);

  const merge = async (target: Feedback) => {
    if (!window.confirm(`Merge “${item.title}” into “${target.title}”? Its votes move there.`)) return;
    await run(async () => {
      await unwrap(
        api.POST('/projects/{id}/feedbacks/{feedbackId}/merge', {
          params: { path: { id: projectId, feedbackId: item.id } },
          body: { intoId: target.id },
        }),
      );
      onChanged();
    });
  };

  return (
    <section class="card" aria-labelledby="merge-heading">
      <h2 id="merge-heading">Merge into another item</h2>
      <label for="merge-search">Find the item to merge into</label>
      <input
        id="merge-search"
        type="search"
        value={search}
        onInput={(e) => setSearch(e.currentTarget.value)}
        aria-describedby="merge-help"
      />
      <p id="merge-help" class="muted">
        Search by title; the votes of this item move to the one you choose.
      </p>
      {search.trim() !== '' && found.state === 'ready' && candidates.length === 0 && <p>No other open item matches.</p>}
      {found.state === 'failed' && <FailureNotice failure={found.failure} onRetry={found.reload} />}
      {candidates.length > 0 && (
        <ul class="merge-candidates" aria-label="Matching items">
          {candidates.map((candidate) => (
            <li key={candidate.id}>
              <span>
                {candidate.title} <span class="muted">({formatCount(candidate.vote_count)} votes)</span>
              </span>
              <button type="button" onClick={() => merge(candidate)} disabled={busy} aria-label={`Merge into ${candidate.title}`}>
                Merge here
              </button>
            </li>
          ))}
        </ul>
      )}
      {failure && <FailureNotice failure={failure} />}
    </section>
  );
}

/**
 * The comment thread, read and answered with the admin token: the reply is the team's, by this
 * account or member. A comment can be deleted (DELETE …/comments/:commentId). A merged item's
 * thread moved to its target, so it takes no reply here.
 */
function Comments({ projectId, item, onChanged }: { projectId: string; item: Feedback; onChanged: () => void }) {
  const [reply, setReply] = useState('');
  const { busy, failure, run: runAction } = useAction();
  const path = { id: projectId, feedbackId: item.id };
  const comments = useResource(
    () => unwrap(api.GET('/projects/{id}/feedbacks/{feedbackId}/comments', { params: { path } })),
    [projectId, item.id, item.comment_count],
  );

  const run = async (change: () => Promise<void>) => {
    await runAction(async () => {
      await change();
      onChanged();
      comments.reload();
    });
  };
  const send = (event: Event) => {
    event.preventDefault();
    if (reply.trim() === '') return;
    return run(async () => {
      await unwrap(api.POST('/projects/{id}/feedbacks/{feedbackId}/comments', { params: { path }, body: { content: reply.trim() } }));
      setReply('');
    });
  };
  const remove = (comment: Schemas['Comment']) => {
    if (!window.confirm('Delete this comment for good?')) return;
    return run(async () => {
      await unwrap(
        api.DELETE('/projects/{id}/feedbacks/{feedbackId}/comments/{commentId}', {
          params: { path: { ...path, commentId: comment.id } },
        }),
      );
    });
  };

  return (
    <section class="card comments" aria-labelledby="comments-heading">
      <h2 id="comments-heading">Comments ({formatCount(item.comment_count)})</h2>
      {comments.state === 'failed' && <FailureNotice failure={comments.failure} onRetry={comments.reload} />}
      {comments.state === 'loading' && !comments.data && <Loading what="comments" />}
      {comments.data && comments.data.length === 0 && (
        <Empty>{item.merged_into_id ? 'The comments moved to the item this one was merged into.' : 'No comments yet.'}</Empty>
      )}
      {comments.data && comments.data.length > 0 && (
        <ol class="thread">
          {comments.data.map((comment) => (
            <li key={comment.id} class={comment.is_admin ? 'comment comment-owner' : 'comment'}>
              <p class="comment-meta">
                <span>
                  <strong>{comment.is_admin ? 'Team reply' : comment.user_id}</strong> · {formatDateTime(comment.created_at)}
                </span>
                <button
                  type="button"
                  class="link-button"
                  onClick={() => remove(comment)}
                  disabled={busy}
                  aria-label={`Delete the comment of ${formatDateTime(comment.created_at)}`}
                >
                  Delete
                </button>
              </p>
              <p class="comment-body">{comment.content}</p>
            </li>
          ))}
        </ol>
      )}
      {!item.merged_into_id && (
        <form onSubmit={send} class="reply-form">
          <label for="reply">Reply as the team</label>
          <textarea id="reply" rows={3} maxLength={2000} value={reply} onInput={(e) => setReply(e.currentTarget.value)} />
          <button type="submit" class="primary" disabled={busy || reply.trim() === ''}>
            Post reply
          </button>
        </form>
      )}
      {failure && <FailureNotice failure={failure} />}
    </section>
  );
}
