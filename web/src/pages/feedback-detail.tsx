import { useRoute } from 'preact-iso';
import { useMemo, useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api/client';
import { ApiFailure } from '../api/failure';
import { Page } from '../components/layout';
import { Empty, FailureNotice, Loading } from '../components/states';
import { loadFeedback, type Feedback } from '../lib/feedback';
import { CATEGORY_LABELS, formatCount, formatDateTime, formatMoney, STATUS_LABELS, STATUSES, type FeedbackStatus } from '../lib/format';
import { session } from '../lib/session';
import { useResource } from '../lib/use-resource';
import { StatusBadge } from './inbox';

/** The author of the owner's replies: comments carry a user id, and owners have none of their own. */
const OWNER_USER_ID = 'project-owner';

export function FeedbackDetailPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const feedbackId = params.feedbackId ?? '';
  // The API has no admin route for one item: the project's list (merged included) has it.
  const all = useResource(() => loadFeedback(projectId, { sort: 'votes' }), [projectId, feedbackId]);
  const item = all.data?.find((candidate) => candidate.id === feedbackId);

  return (
    <Page title={item ? item.title : 'Feedback'} projectId={projectId}>
      <p>
        <a href={`/projects/${projectId}/feedback`}>← Back to the inbox</a>
      </p>
      {all.state === 'failed' && <FailureNotice failure={all.failure} onRetry={all.reload} />}
      {all.state === 'loading' && !all.data && <Loading what="the feedback item" />}
      {all.data && !item && <Empty>This feedback item does not exist in this project.</Empty>}
      {item && all.data && <Detail projectId={projectId} item={item} all={all.data} onChanged={all.reload} />}
    </Page>
  );
}

function Detail({ projectId, item, all, onChanged }: { projectId: string; item: Feedback; all: Feedback[]; onChanged: () => void }) {
  const titleOf = (id: string) => all.find((other) => other.id === id)?.title ?? id;
  return (
    <div class="detail-grid">
      <section class="card" aria-labelledby="about-heading">
        <h2 id="about-heading">About</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={item.status} />
          </dd>
          <dt>Category</dt>
          <dd>{CATEGORY_LABELS[item.category]}</dd>
          <dt>Submitted by</dt>
          <dd>
            {item.user_id}
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
        {item.merged_into_id && (
          <p class="notice notice-info">
            Merged {formatDateTime(item.merged_at)} into{' '}
            <a href={`/projects/${projectId}/feedback/${item.merged_into_id}`}>{titleOf(item.merged_into_id)}</a>.
          </p>
        )}
        {item.merged_feedback_ids && item.merged_feedback_ids.length > 0 && (
          <>
            <h3>Merged into this item</h3>
            <ul>
              {item.merged_feedback_ids.map((id) => (
                <li key={id}>
                  <a href={`/projects/${projectId}/feedback/${id}`}>{titleOf(id)}</a>
                </li>
              ))}
            </ul>
          </>
        )}
        <p class="muted">Each voter's MRR is not listed: the API gives the total of the voters' MRR only.</p>
      </section>
      <div class="stack">
        <StatusForm projectId={projectId} item={item} onChanged={onChanged} />
        {!item.merged_into_id && <MergeForm projectId={projectId} item={item} all={all} onChanged={onChanged} />}
      </div>
      <Comments projectId={projectId} item={item} onChanged={onChanged} />
    </div>
  );
}

function StatusForm({ projectId, item, onChanged }: { projectId: string; item: Feedback; onChanged: () => void }) {
  const [status, setStatus] = useState<FeedbackStatus>(item.status);
  const [reason, setReason] = useState(item.rejection_reason ?? '');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [saved, setSaved] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setFailure(null);
    setSaved(false);
    const body: Schemas['UpdateFeedbackStatusRequest'] =
      status === 'rejected' ? { status, rejectionReason: reason.trim() === '' ? null : reason.trim() } : { status };
    try {
      await unwrap(api.PATCH('/projects/{id}/feedbacks/{feedbackId}', { params: { path: { id: projectId, feedbackId: item.id } }, body }));
      setSaved(true);
      onChanged();
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error : ApiFailure.network(error));
    } finally {
      setBusy(false);
    }
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

function MergeForm({ projectId, item, all, onChanged }: { projectId: string; item: Feedback; all: Feedback[]; onChanged: () => void }) {
  const [search, setSearch] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const candidates = useMemo(() => {
    const needle = search.trim().toLowerCase();
    if (!needle) return [];
    return all
      .filter((other) => other.id !== item.id && other.merged_into_id === null && other.title.toLowerCase().includes(needle))
      .slice(0, 8);
  }, [all, item.id, search]);

  const merge = async (target: Feedback) => {
    if (!window.confirm(`Merge “${item.title}” into “${target.title}”? Its votes move there.`)) return;
    setBusy(true);
    setFailure(null);
    try {
      await unwrap(
        api.POST('/projects/{id}/feedbacks/{feedbackId}/merge', {
          params: { path: { id: projectId, feedbackId: item.id } },
          body: { intoId: target.id },
        }),
      );
      onChanged();
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error : ApiFailure.network(error));
    } finally {
      setBusy(false);
    }
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
      {search.trim() !== '' && candidates.length === 0 && <p>No other open item matches.</p>}
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
 * Comments are read and written with the project's API key: the API has no owner route for them.
 * The key is the one this tab saw (created or rotated here), or one the owner pastes.
 */
function Comments({ projectId, item, onChanged }: { projectId: string; item: Feedback; onChanged: () => void }) {
  const [apiKey, setApiKey] = useState(() => session.apiKey(projectId));
  const [draftKey, setDraftKey] = useState('');
  const [reply, setReply] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const comments = useResource(
    () =>
      apiKey
        ? unwrap(api.GET('/feedbacks/{id}/comments', { params: { path: { id: item.id } }, headers: { 'X-API-Key': apiKey } }))
        : Promise.resolve(null),
    [apiKey, item.id, item.comment_count],
  );

  const useKey = (event: Event) => {
    event.preventDefault();
    const key = draftKey.trim();
    if (!key) return;
    session.rememberApiKey(projectId, key);
    setApiKey(key);
    setDraftKey('');
  };

  const forgetKey = () => {
    session.forgetApiKey(projectId);
    setApiKey(null);
  };

  const send = async (event: Event) => {
    event.preventDefault();
    if (!apiKey || reply.trim() === '') return;
    setBusy(true);
    setFailure(null);
    try {
      await unwrap(
        api.POST('/feedbacks/{id}/comments', {
          params: { path: { id: item.id } },
          headers: { 'X-API-Key': apiKey },
          body: { content: reply.trim(), userId: OWNER_USER_ID, isAdmin: true },
        }),
      );
      setReply('');
      onChanged();
      comments.reload();
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error : ApiFailure.network(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card comments" aria-labelledby="comments-heading">
      <h2 id="comments-heading">Comments ({formatCount(item.comment_count)})</h2>
      {!apiKey && (
        <form onSubmit={useKey}>
          <p>Comments are read and answered with the project's API key. Paste it to see the thread; it is kept in this tab only.</p>
          <label for="project-api-key">Project API key</label>
          <div class="field-row">
            <input
              id="project-api-key"
              type="password"
              autoComplete="off"
              value={draftKey}
              onInput={(e) => setDraftKey(e.currentTarget.value)}
            />
            <button type="submit">Show comments</button>
          </div>
        </form>
      )}
      {apiKey && (
        <>
          {comments.state === 'failed' && (
            <>
              <FailureNotice failure={comments.failure} onRetry={comments.reload} />
              <button type="button" onClick={forgetKey}>
                Use another API key
              </button>
            </>
          )}
          {comments.state === 'loading' && !comments.data && <Loading what="comments" />}
          {comments.data && comments.data.length === 0 && <Empty>No comments yet.</Empty>}
          {comments.data && comments.data.length > 0 && (
            <ol class="thread">
              {comments.data.map((comment) => (
                <li key={comment.id} class={comment.is_admin ? 'comment comment-owner' : 'comment'}>
                  <p class="comment-meta">
                    <strong>{comment.is_admin ? 'Team reply' : comment.user_id}</strong> · {formatDateTime(comment.created_at)}
                  </p>
                  <p class="comment-body">{comment.content}</p>
                </li>
              ))}
            </ol>
          )}
          <form onSubmit={send} class="reply-form">
            <label for="reply">Reply as the team</label>
            <textarea id="reply" rows={3} maxLength={2000} value={reply} onInput={(e) => setReply(e.currentTarget.value)} />
            <button type="submit" class="primary" disabled={busy || reply.trim() === ''}>
              Post reply
            </button>
          </form>
          {failure && <FailureNotice failure={failure} />}
        </>
      )}
    </section>
  );
}
