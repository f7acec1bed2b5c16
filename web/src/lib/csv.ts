/**
 * A query result as CSV (RFC 4180, the rule the service's exports follow: src/api/data-rights/
 * export-stream.ts): a header line of the column names, CRLF line ends, a field quoted when it
 * holds a comma, a quote or a line break, quotes doubled inside. NULL is an empty field; arrays,
 * maps and tuples are written as their JSON text, as the API gave them.
 */
export function toCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const lines = [columns.map(csvField).join(',')];
  for (const row of rows) lines.push(columns.map((column) => csvField(row[column])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
