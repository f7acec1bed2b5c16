/**
 * The SQL console's recent runs, per project, in this browser's localStorage: the query text and
 * how it went (rows and time, or the refusal), never a result row. The newest first; running a
 * query again moves it to the top.
 */
export type HistoryEntry = { sql: string; ranAt: string; rows: number | null; elapsedMs: number | null; error: string | null };

const MAX_ENTRIES = 20;
const key = (projectId: string) => `feedback-dashboard.sql-history.${projectId}`;

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage disabled: the console works without a history
  }
}

export function readHistory(projectId: string): HistoryEntry[] {
  try {
    const stored: unknown = JSON.parse(storage()?.getItem(key(projectId)) ?? '[]');
    return Array.isArray(stored) ? stored.filter(isEntry).slice(0, MAX_ENTRIES) : [];
  } catch {
    return [];
  }
}

export function addToHistory(projectId: string, entry: HistoryEntry): HistoryEntry[] {
  const next = [entry, ...readHistory(projectId).filter((old) => old.sql !== entry.sql)].slice(0, MAX_ENTRIES);
  write(projectId, next);
  return next;
}

export function clearHistory(projectId: string) {
  storage()?.removeItem(key(projectId));
}

function write(projectId: string, entries: HistoryEntry[]) {
  try {
    storage()?.setItem(key(projectId), JSON.stringify(entries));
  } catch {
    // Storage full or disabled: the history is a convenience, the run itself succeeded.
  }
}

function isEntry(value: unknown): value is HistoryEntry {
  if (!value || typeof value !== 'object') return false;
  const entry = value as Record<string, unknown>;
  return typeof entry.sql === 'string' && typeof entry.ranAt === 'string';
}
