import { useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { Page } from '../components/layout';
import { FailureNotice, Loading } from '../components/states';
import { isoDay } from '../lib/format';
import { useResource } from '../lib/use-resource';
import { Tiles } from './metrics';

/**
 * SDK users: the admin metrics measures about them. The API has no route that lists SDK users
 * one by one (with their MRR and first and last seen), so the sortable list waits for one.
 */
export function SdkUsersPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
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
  return (
    <Page title="SDK users" projectId={projectId}>
      <p>Users your app registers through the SDK (POST /users/register), with their monthly recurring revenue, over the last 30 days.</p>
      {summary.state === 'failed' && <FailureNotice failure={summary.failure} onRetry={summary.reload} />}
      {summary.state === 'loading' && !summary.data && <Loading what="SDK users" />}
      {summary.data && (
        <Tiles measures={summary.data.measures} only={['sdk_users', 'new_sdk_users', 'active_sdk_users', 'paying_users', 'total_mrr']} />
      )}
      <p class="notice notice-info" role="note">
        The list of individual SDK users (MRR, first and last seen) needs an API route that does not exist yet; this page shows their totals
        until it does.
      </p>
    </Page>
  );
}
