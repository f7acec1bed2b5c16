import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { EraseUser } from '../components/erasure';
import { Page } from '../components/layout';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading } from '../components/states';
import { Tiles } from '../components/tiles';
import { UserLink } from '../components/user-link';
import { formatCount, formatDateTime, formatMoney, isoDay } from '../lib/format';
import { useResource } from '../lib/use-resource';

type UsersQuery = NonNullable<operations['listProjectSdkUsers']['parameters']['query']>;
type Sort = NonNullable<UsersQuery['sort']>;
type Order = NonNullable<UsersQuery['order']>;

const PAGE_SIZE = 50;
const COLUMNS: { sort: Sort; label: string; numeric?: boolean }[] = [
  { sort: 'mrr', label: 'MRR', numeric: true },
  { sort: 'first_seen', label: 'First registered' },
  // The API's `last_seen_at` is the last POST /users/register, not the last event: the column is
  // named for what it is. The user's page shows their events (the timeline).
  { sort: 'last_seen', label: 'Last registered' },
];

/** Sort, order, search and page live in the URL, so a view can be shared and survives a reload. */
function readQuery(query: Record<string, string>) {
  const sort: Sort = query.sort === 'mrr' || query.sort === 'first_seen' ? query.sort : 'last_seen';
  const order: Order = query.order === 'asc' ? 'asc' : 'desc';
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const q = query.q?.trim().slice(0, 200) || undefined;
  return { sort, order, offset, q };
}

/** SDK users: the admin metrics' totals, then the users one by one, sortable by MRR, first and last seen. */
export function SdkUsersPage() {
  const { params } = useRoute();
  const { query, path, route } = useLocation();
  const projectId = params.id ?? '';
  const { sort, order, offset, q } = readQuery(query);
  const [draftQ, setDraftQ] = useState(q ?? '');
  // Back, forward or a pasted link changes the search: the field shows it.
  useEffect(() => setDraftQ(q ?? ''), [q]);
  // A new object per click, so erasing the same id twice asks twice.
  const [erasing, setErasing] = useState<{ userId: string } | null>(null);
  const summary = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/metrics/summary', {
          params: {
            path: { id: projectId },
            query: {
              date_from: isoDay(29),
              date_to: isoDay(0),
              measures: ['sdk_users', 'new_sdk_users', 'active_sdk_users', 'paying_users', 'total_mrr'],
            },
          },
        }),
      ),
    [projectId],
  );
  const users = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/users', {
          params: { path: { id: projectId }, query: { sort, order, limit: PAGE_SIZE, offset, ...(q ? { q } : {}) } },
        }),
      ),
    [projectId, sort, order, offset, q],
  );

  const href = (next: { sort: Sort; order: Order; offset: number; q?: string | undefined }) => {
    const search = new URLSearchParams({ sort: next.sort, order: next.order });
    if (next.q) search.set('q', next.q);
    if (next.offset > 0) search.set('offset', String(next.offset));
    return `${path}?${search.toString()}`;
  };

  return (
    <Page title="SDK users" projectId={projectId}>
      <p>Users your app registers through the SDK (POST /users/register), with their monthly recurring revenue, over the last 30 days.</p>
      {summary.state === 'failed' && <FailureNotice failure={summary.failure} onRetry={summary.reload} />}
      {summary.state === 'loading' && !summary.data && <Loading what="SDK user totals" />}
      {summary.data && (
        <Tiles measures={summary.data.measures} only={['sdk_users', 'new_sdk_users', 'active_sdk_users', 'paying_users', 'total_mrr']} />
      )}

      <section class="card" aria-labelledby="users-heading">
        <h2 id="users-heading">Users {users.data && <span class="muted">({formatCount(users.data.total)})</span>}</h2>
        <form
          class="filters"
          aria-label="Search SDK users"
          onSubmit={(e) => {
            e.preventDefault();
            route(href({ sort, order, offset: 0, q: draftQ.trim() || undefined }));
          }}
        >
          <div class="field">
            <label for="users-q">User id, email or name</label>
            <input id="users-q" type="search" value={draftQ} maxLength={200} onInput={(e) => setDraftQ(e.currentTarget.value)} />
          </div>
          <button type="submit">Search</button>
          {q && (
            <a href={href({ sort, order, offset: 0 })} onClick={() => setDraftQ('')}>
              Clear search
            </a>
          )}
        </form>
        <p class="muted">
          "Last registered" is the user's last registration by the SDK (POST /users/register); tracked events do not change it. A user's
          events are on their page: follow the user id.
        </p>
        {users.state === 'failed' && <FailureNotice failure={users.failure} onRetry={users.reload} />}
        {users.state === 'loading' && !users.data && <Loading what="SDK users" />}
        {users.data && users.data.users.length === 0 && (
          <Empty>{q ? `No SDK user matches "${q}".` : 'No SDK user yet. Users your app registers appear here.'}</Empty>
        )}
        {users.data && users.data.users.length > 0 && (
          <ScrollRegion label="SDK users">
            <table class="data-table">
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Email</th>
                  <th scope="col">Name</th>
                  {COLUMNS.map((column) => {
                    const current = column.sort === sort;
                    // A click on the sorted column flips its order; another column starts with the highest first.
                    const nextOrder: Order = current && order === 'desc' ? 'asc' : 'desc';
                    return (
                      <th
                        scope="col"
                        key={column.sort}
                        class={column.numeric ? 'num' : undefined}
                        aria-sort={current ? (order === 'asc' ? 'ascending' : 'descending') : undefined}
                      >
                        <a href={href({ sort: column.sort, order: nextOrder, q, offset: 0 })}>
                          {column.label}
                          {current ? (order === 'asc' ? ' ▲' : ' ▼') : ''}
                          <span class="visually-hidden">{`, sort ${nextOrder === 'asc' ? 'ascending' : 'descending'}`}</span>
                        </a>
                      </th>
                    );
                  })}
                  <th scope="col">
                    <span class="visually-hidden">Erasure</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {users.data.users.map((user) => (
                  <tr key={user.id}>
                    <td>
                      <UserLink projectId={projectId} userId={user.user_id} />
                    </td>
                    <td class="break">{user.email ?? <span class="muted">—</span>}</td>
                    <td>{user.name ?? <span class="muted">—</span>}</td>
                    <td class="num">{formatMoney(user.mrr)}</td>
                    <td>{formatDateTime(user.first_seen_at)}</td>
                    <td>{formatDateTime(user.last_seen_at)}</td>
                    <td>
                      <button
                        type="button"
                        class="link-button"
                        onClick={() => setErasing({ userId: user.user_id })}
                        aria-label={`Erase ${user.user_id}`}
                      >
                        Erase
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
        {users.data && users.data.total > PAGE_SIZE && (
          <nav aria-label="SDK user pages" class="button-row">
            {offset > 0 && <a href={href({ sort, order, q, offset: Math.max(0, offset - PAGE_SIZE) })}>← Previous</a>}
            <span class="muted">
              {formatCount(offset + 1)}–{formatCount(Math.min(offset + PAGE_SIZE, users.data.total))} of {formatCount(users.data.total)}
            </span>
            {offset + PAGE_SIZE < users.data.total && <a href={href({ sort, order, q, offset: offset + PAGE_SIZE })}>Next →</a>}
          </nav>
        )}
      </section>
      <EraseUser projectId={projectId} requested={erasing} onDone={users.reload} />
    </Page>
  );
}
