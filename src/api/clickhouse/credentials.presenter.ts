import { apiTime } from '../../core/time.js';
import type { ClickhouseCredentialRow } from '../../oltp/clickhouse-credentials.repo.js';

/**
 * A credential of the ClickHouse interface. Its username is the project id (docs/clickhouse-interface.md);
 * the password appears only in the answer that created it.
 */
export function presentClickhouseCredential(row: ClickhouseCredentialRow, password?: string) {
  return {
    id: row.id,
    username: row.project_id,
    ...(password === undefined ? {} : { password }),
    created_at: apiTime(row.created_at),
    last_used_at: row.last_used_at === null ? null : apiTime(row.last_used_at),
  };
}
