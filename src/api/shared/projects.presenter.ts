import { apiTime } from '../../core/time.js';
import type { Project } from '../../oltp/projects.repo.js';

/** Project record (DESIGN 3). The API key appears only in the responses that create it. */
export function presentProject(row: Project, apiKey?: string) {
  return {
    id: row.id,
    name: row.name,
    ...(apiKey === undefined ? {} : { api_key: apiKey }),
    archived: row.archived,
    suspended: row.suspended,
    allowed_origins: row.allowed_origins,
    publishable_key: row.publishable_key,
    has_identity_secret: row.identity_secret !== null,
    require_signed_identity: row.require_signed_identity,
    board_public: row.board_public,
    anonymous_feedback: row.anonymous_feedback,
    slug: row.slug,
    session_timeout_minutes: row.session_timeout_minutes,
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}
