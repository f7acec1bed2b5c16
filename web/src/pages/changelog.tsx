import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { Page } from '../components/layout';
import { Empty, FailureNotice, Loading } from '../components/states';
import { loadFeedback } from '../lib/feedback';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

type Entry = Schemas['ChangelogEntry'];
type Told = Schemas['ChangelogDeliveries'];

const STATE_LABELS: Record<Entry['state'], string> = { draft: 'Draft', scheduled: 'Scheduled', published: 'Published' };

/**
 * The changelog's editor (docs/dashboard.md): the project's entries, and one being written, its
 * items linked by a title search, saved as a draft (the preview is the service's own sanitized
 * rendering of what was saved), scheduled, or published now.
 */
export function ChangelogPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const entries = useResource(() => unwrap(api.GET('/projects/{id}/changelog', { params: { path: { id: projectId } } })), [projectId]);
  const [editing, setEditing] = useState<Entry | null>(null);
  return (
    <Page title="Changelog" projectId={projectId}>
      <Editor
        key={editing?.id ?? 'new'}
        projectId={projectId}
        entry={editing}
        onSaved={(entry) => {
          setEditing(entry);
          entries.reload();
        }}
        onNew={() => setEditing(null)}
      />
      <section class="card" aria-labelledby="entries-heading">
        <h2 id="entries-heading">Entries</h2>
        {entries.state === 'failed' && <FailureNotice failure={entries.failure} onRetry={entries.reload} />}
        {entries.state === 'loading' && !entries.data && <Loading what="entries" />}
        {entries.data?.length === 0 && <Empty>No entry yet.</Empty>}
        {entries.data && entries.data.length > 0 && (
          <ul class="changelog-entries">
            {entries.data.map((entry) => (
              <li key={entry.id}>
                <button type="button" class="link-button" onClick={() => setEditing(entry)}>
                  {entry.title}
                </button>{' '}
                <span class="badge badge-muted">{STATE_LABELS[entry.state]}</span>{' '}
                <span class="muted">
                  {entry.state === 'published' && `published ${formatDateTime(entry.published_at)}`}
                  {entry.state === 'scheduled' && `publishes ${formatDateTime(entry.publish_at)}`}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </Page>
  );
}

/** A `datetime-local` value (the browser's local time) as an ISO instant, or null when empty. */
const instantOf = (local: string) => (local ? new Date(local).toISOString() : null);

function Editor({
  projectId,
  entry,
  onSaved,
  onNew,
}: {
  projectId: string;
  entry: Entry | null;
  onSaved: (entry: Entry) => void;
  onNew: () => void;
}) {
  const [title, setTitle] = useState(entry?.title ?? '');
  const [body, setBody] = useState(entry?.body ?? '');
  const [category, setCategory] = useState(entry?.category ?? '');
  const [linked, setLinked] = useState(entry?.linked_items ?? []);
  const [publishAt, setPublishAt] = useState('');
  const [completeLinked, setCompleteLinked] = useState(entry?.complete_linked ?? false);
  const [search, setSearch] = useState('');
  const { busy, failure, run } = useAction();
  const found = useResource(
    () => (search.trim() ? loadFeedback(projectId, { q: search, sort: 'votes', limit: 8 }) : Promise.resolve([])),
    [projectId, search],
  );
  const published = entry?.state === 'published';

  const save = (schedule: 'keep' | 'schedule') =>
    run(async () => {
      const fields = {
        title,
        body,
        category: category.trim() || null,
        linkedFeedbackIds: linked.map((item) => item.id),
        // Fixed once published (the service answers 409): a correction leaves it out.
        ...(published ? {} : { completeLinked }),
        ...(schedule === 'schedule' ? { publishAt: instantOf(publishAt) } : {}),
      };
      const saved = entry
        ? await unwrap(
            api.PATCH('/projects/{id}/changelog/{entryId}', { params: { path: { id: projectId, entryId: entry.id } }, body: fields }),
          )
        : await unwrap(api.POST('/projects/{id}/changelog', { params: { path: { id: projectId } }, body: fields }));
      onSaved(saved);
    });
  const publish = () =>
    run(async () => {
      if (!entry) return;
      onSaved(
        await unwrap(
          api.POST('/projects/{id}/changelog/{entryId}/publish', {
            params: { path: { id: projectId, entryId: entry.id } },
            body: { completeLinked },
          }),
        ),
      );
    });

  return (
    <section class="card changelog-editor" aria-labelledby="editor-heading">
      <h2 id="editor-heading">{entry ? `Edit “${entry.title}”` : 'New entry'}</h2>
      {entry && (
        <p class="muted">
          {STATE_LABELS[entry.state]}
          {entry.state === 'published' &&
            `: published ${formatDateTime(entry.published_at)}; a correction shows at once and is not announced again.`}
          {entry.state === 'scheduled' && `: publishes itself ${formatDateTime(entry.publish_at)}.`}{' '}
          <button type="button" class="link-button" onClick={onNew}>
            Write a new entry instead
          </button>
        </p>
      )}
      <label for="entry-title">Title</label>
      <input id="entry-title" maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      <label for="entry-body">Body (Markdown)</label>
      <textarea id="entry-body" rows={8} maxLength={20000} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      <label for="entry-category">Category (optional)</label>
      <input id="entry-category" maxLength={50} value={category} onInput={(e) => setCategory(e.currentTarget.value)} />
      <fieldset>
        <legend>Items it ships</legend>
        {linked.length > 0 && (
          <ul aria-label="Linked items">
            {linked.map((item) => (
              <li key={item.id}>
                {item.title}{' '}
                <button
                  type="button"
                  class="link-button"
                  onClick={() => setLinked(linked.filter((other) => other.id !== item.id))}
                  aria-label={`Unlink ${item.title}`}
                >
                  Unlink
                </button>
              </li>
            ))}
          </ul>
        )}
        <label for="entry-link-search">Find an item to link</label>
        <input id="entry-link-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        {(found.data ?? [])
          .filter((item) => !linked.some((other) => other.id === item.id))
          .map((item) => (
            <div key={item.id}>
              <button
                type="button"
                class="link-button"
                onClick={() => setLinked([...linked, { id: item.id, title: item.title }])}
                aria-label={`Link ${item.title}`}
              >
                Link “{item.title}”
              </button>
            </div>
          ))}
      </fieldset>
      <div class="field field-check">
        <input
          id="entry-complete-linked"
          type="checkbox"
          checked={completeLinked}
          disabled={published}
          onChange={(e) => setCompleteLinked(e.currentTarget.checked)}
        />
        <label for="entry-complete-linked">Mark the linked items completed when it publishes</label>
      </div>
      <p class="muted field-note">Their voters then hear of it in this entry’s email, not in a status email of their own.</p>
      <div class="row">
        <button type="button" class="primary" disabled={busy || title.trim() === ''} onClick={() => save('keep')}>
          {entry ? 'Save' : 'Save draft'}
        </button>
        {entry && !published && (
          <button type="button" disabled={busy} onClick={publish}>
            Publish now
          </button>
        )}
      </div>
      {!published && (
        <div class="row">
          <label for="entry-publish-at">Publish at</label>
          <input id="entry-publish-at" type="datetime-local" value={publishAt} onInput={(e) => setPublishAt(e.currentTarget.value)} />
          <button type="button" disabled={busy || title.trim() === '' || publishAt === ''} onClick={() => save('schedule')}>
            Schedule
          </button>
        </div>
      )}
      {failure && <FailureNotice failure={failure} />}
      {entry && published && <WhoWasTold projectId={projectId} entryId={entry.id} />}
      {entry && (
        <section aria-labelledby="preview-heading" class="changelog-preview">
          <h3 id="preview-heading">Preview (as readers see it, as saved)</h3>
          {/* The service's sanitized rendering: no script, handler or unsafe link reaches here. */}
          <div dangerouslySetInnerHTML={{ __html: entry.html }} />
        </section>
      )}
    </section>
  );
}

/** Read again this often while the workers are still telling people. */
const TOLD_REFRESH_MS = 2_000;

const counted = (counts: Told['emails']) =>
  `${counts.sent} sent` +
  (counts.pending > 0 ? `, ${counts.pending} pending` : '') +
  (counts.failed > 0 ? `, ${counts.failed} failed` : '');

/**
 * Who was told of a published entry (GET …/changelog/{entryId}/deliveries): emails and integration
 * messages counted from the delivery log, read again until nothing is pending.
 */
function WhoWasTold({ projectId, entryId }: { projectId: string; entryId: string }) {
  const told = useResource(
    () => unwrap(api.GET('/projects/{id}/changelog/{entryId}/deliveries', { params: { path: { id: projectId, entryId } } })),
    [projectId, entryId],
  );
  const data = told.data;
  const settling = data !== undefined && (data.notification === 'waiting' || data.emails.pending + data.integrations.pending > 0);
  useEffect(() => {
    if (!settling || told.state !== 'ready') return;
    const timer = setTimeout(told.reload, TOLD_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [settling, told.state, data]);
  return (
    <section aria-labelledby="told-heading" class="changelog-told">
      <h3 id="told-heading">Who was told</h3>
      {told.state === 'failed' && <FailureNotice failure={told.failure} onRetry={told.reload} />}
      {!data && told.state === 'loading' && <Loading what="deliveries" />}
      {data?.notification === 'none' && <p class="muted">Nobody: this entry was published before announcements were sent.</p>}
      {data?.notification === 'waiting' && <p class="muted">Working out who hears of it…</p>}
      {data?.notification === 'dispatched' && (
        <dl class="facts">
          <dt>Emails</dt>
          <dd>{counted(data.emails)}</dd>
          <dt>Integrations</dt>
          <dd>{counted(data.integrations)}</dd>
        </dl>
      )}
      {data?.notification === 'dispatched' && data.emails.sent + data.emails.pending + data.emails.failed === 0 && (
        <p class="muted">No email: on the Team plan the voters and submitters of the linked items who follow them are emailed.</p>
      )}
    </section>
  );
}
