import { useLocation, useRoute } from 'preact-iso';
import { Page } from '../components/layout';
import { DuplicateMark, useLikelyDuplicates } from '../components/likely-duplicates';
import { ModerationQueue } from '../components/moderation-queue';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading } from '../components/states';
import { ItemStateBadge } from '../components/status-badge';
import { FEEDBACK_PAGE_LIMIT, type Feedback, loadFeedback, loadStatusCounts } from '../lib/feedback';
import {
  CATEGORIES,
  CATEGORY_LABELS,
  type FeedbackCategory,
  type FeedbackStatus,
  formatCount,
  formatDate,
  formatMoney,
  STATUS_LABELS,
  STATUSES,
} from '../lib/format';
import { useResource } from '../lib/use-resource';

const SORTS = { votes: 'Most votes', newest: 'Newest', mrr: "Voters' MRR" } as const;
type Sort = keyof typeof SORTS;

/** The inbox's filters live in the URL, so a filtered view can be shared and survives a reload. */
function readFilters(query: Record<string, string>) {
  const status = STATUSES.includes(query.status as FeedbackStatus) ? (query.status as FeedbackStatus) : undefined;
  const category = CATEGORIES.includes(query.category as FeedbackCategory) ? (query.category as FeedbackCategory) : undefined;
  const sort: Sort = query.sort === 'newest' || query.sort === 'mrr' ? query.sort : 'votes';
  return { status, category, sort, search: query.q ?? '', merged: query.merged === '1' };
}

export function InboxPage() {
  const { params } = useRoute();
  const { query, path, route } = useLocation();
  const projectId = params.id ?? '';
  const filters = readFilters(query);
  // The API searches, filters, sorts and counts: the page draws what it answers.
  const scope = { category: filters.category, q: filters.search, includeMerged: filters.merged };
  const items = useResource(
    () => loadFeedback(projectId, { ...scope, status: filters.status, sort: filters.sort }),
    [projectId, filters.status, filters.category, filters.search, filters.merged, filters.sort],
  );
  // Merged items are left out of the counts even while listed: they live on in their targets,
  // and the status they had when merged no longer means anything.
  const counts = useResource(
    () => loadStatusCounts(projectId, { ...scope, includeMerged: false }),
    [projectId, filters.category, filters.search],
  );

  const setFilter = (name: string, value: string | undefined) => {
    const next = new URLSearchParams(query);
    if (value) next.set(name, value);
    else next.delete(name);
    const search = next.toString();
    route(`${path}${search ? `?${search}` : ''}`, true);
  };

  const narrowed = filters.status !== undefined || filters.category !== undefined || filters.search.trim() !== '';

  return (
    <Page title="Feedback inbox" projectId={projectId}>
      {/* The changelog lives beside the inbox: the header's row of pages is full at 1280 px. */}
      <p class="inbox-links">
        <a href={`/projects/${projectId}/changelog`}>Changelog: tell users what shipped →</a>
      </p>
      <ModerationQueue projectId={projectId} onApproved={items.reload} />
      <search aria-label="Filter feedback">
        <form class="filters card" onSubmit={(e) => e.preventDefault()}>
          <div class="field">
            <label for="search">Search titles</label>
            <input id="search" type="search" value={filters.search} onInput={(e) => setFilter('q', e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="category">Category</label>
            <select id="category" value={filters.category ?? ''} onChange={(e) => setFilter('category', e.currentTarget.value)}>
              <option value="">All categories</option>
              {CATEGORIES.map((category) => (
                <option value={category} key={category}>
                  {CATEGORY_LABELS[category]}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="sort">Sort by</label>
            <select
              id="sort"
              value={filters.sort}
              onChange={(e) => setFilter('sort', e.currentTarget.value === 'votes' ? undefined : e.currentTarget.value)}
            >
              {(Object.keys(SORTS) as Sort[]).map((sort) => (
                <option value={sort} key={sort}>
                  {SORTS[sort]}
                </option>
              ))}
            </select>
          </div>
          <div class="field field-check">
            <input
              id="merged"
              type="checkbox"
              checked={filters.merged}
              onChange={(e) => setFilter('merged', e.currentTarget.checked ? '1' : undefined)}
            />
            <label for="merged">Show merged items (not counted)</label>
          </div>
        </form>
      </search>

      <nav aria-label="Status" class="status-tabs">
        <ul>
          <li>
            <a href={hrefWith(query, path, 'status', undefined)} aria-current={filters.status === undefined ? 'page' : undefined}>
              All <span class="count">{formatCount(counts.data?.total)}</span>
            </a>
          </li>
          {STATUSES.map((status) => (
            <li key={status}>
              <a href={hrefWith(query, path, 'status', status)} aria-current={filters.status === status ? 'page' : undefined}>
                {STATUS_LABELS[status]} <span class="count">{formatCount(counts.data?.by_status[status])}</span>
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {counts.state === 'failed' && <FailureNotice failure={counts.failure} onRetry={counts.reload} />}

      {items.state === 'failed' && <FailureNotice failure={items.failure} onRetry={items.reload} />}
      {items.state === 'loading' && !items.data && <Loading what="feedback" />}
      {items.data && items.data.length === 0 && (
        <Empty>
          {narrowed ? 'No feedback matches these filters.' : 'No feedback yet. Items your users submit through the SDK appear here.'}
        </Empty>
      )}
      {items.data && items.data.length > 0 && (
        <FeedbackTable
          projectId={projectId}
          items={items.data}
          onMerged={() => {
            items.reload();
            counts.reload();
          }}
        />
      )}
      {items.data && items.data.length >= FEEDBACK_PAGE_LIMIT && (
        <p class="muted">Showing the first {FEEDBACK_PAGE_LIMIT} items of this order; search or filter to see others.</p>
      )}
    </Page>
  );
}

function hrefWith(query: Record<string, string>, path: string, name: string, value: string | undefined): string {
  const next = new URLSearchParams(query);
  if (value) next.set(name, value);
  else next.delete(name);
  const search = next.toString();
  return `${path}${search ? `?${search}` : ''}`;
}

function FeedbackTable({ projectId, items, onMerged }: { projectId: string; items: Feedback[]; onMerged: () => void }) {
  // The likely duplicates of the first rows (components/likely-duplicates.tsx), marked under their titles.
  const duplicates = useLikelyDuplicates(projectId, items);
  return (
    <ScrollRegion label="Feedback items">
      <table class="data-table feedback-table">
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Status</th>
            <th scope="col" class="col-optional">
              Category
            </th>
            <th scope="col" class="num">
              Votes
            </th>
            <th scope="col" class="num">
              Voters' MRR
            </th>
            <th scope="col" class="num col-optional">
              Comments
            </th>
            <th scope="col" class="col-optional">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.id}>
              <td>
                <a href={`/projects/${projectId}/feedback/${item.id}`}>{item.title}</a>
                {duplicates.has(item.id) && (
                  <DuplicateMark
                    projectId={projectId}
                    item={item}
                    match={duplicates.get(item.id) as NonNullable<ReturnType<typeof duplicates.get>>}
                    onMerged={onMerged}
                  />
                )}
              </td>
              <td>
                <ItemStateBadge item={item} />
              </td>
              <td class="col-optional">{CATEGORY_LABELS[item.category]}</td>
              <td class="num">{formatCount(item.vote_count)}</td>
              <td class="num">{formatMoney(item.total_mrr)}</td>
              <td class="num col-optional">{formatCount(item.comment_count)}</td>
              <td class="col-optional">{formatDate(item.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
