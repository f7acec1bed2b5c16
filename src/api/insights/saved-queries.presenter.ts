import type { SavedQueryRow } from '../../oltp/insights.repo.js';

/** A saved query as the API answers it (snake_case, whole-second RFC 3339). */
export const presentSavedQuery = (row: SavedQueryRow) => ({
  id: row.id,
  name: row.name,
  sql: row.sql,
  created_by: row.created_by,
  created_at: `${row.created_at.toISOString().slice(0, 19)}Z`,
});
