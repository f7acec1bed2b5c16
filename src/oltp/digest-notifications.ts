import type { DigestContent } from '../core/digest.js';
import type { SqlLike } from './db.js';
import { recordNotification } from './notifications.repo.js';

/**
 * Hands one project's weekly digest to the notifications, inside the transaction that records the
 * week's run (digest_runs), so the emails exist exactly when the run committed: a `digest.weekly`
 * notification, which the dispatcher expands into one email per recipient who has it on, each with
 * that recipient's one-click unsubscribe link (docs/notifications.md "The weekly digest").
 */
export async function enqueueDigest(sql: SqlLike, projectId: string, content: DigestContent): Promise<void> {
  await recordNotification(sql, { projectId, type: 'digest.weekly', payload: { digest: content } });
}
