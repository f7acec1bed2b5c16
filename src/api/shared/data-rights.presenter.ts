import { apiTime, apiTimeOrNull } from '../../core/time.js';
import type { ProjectDeletionRow } from '../../oltp/deletions.repo.js';
import type { ErasureRow } from '../../oltp/erasures.repo.js';

/** An erasure job as the owner follows it (docs/data-rights.md). */
export function presentErasure(row: ErasureRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    user_id: row.user_id,
    status: row.status,
    step: row.step,
    summary: row.summary,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
    completed_at: apiTimeOrNull(row.completed_at),
  };
}

/** The deletion of a project: its PostgreSQL part is done when this exists; the ClickHouse part follows. */
export function presentProjectDeletion(row: ProjectDeletionRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    project_name: row.project_name,
    status: row.status,
    step: row.step,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
    completed_at: apiTimeOrNull(row.completed_at),
  };
}
