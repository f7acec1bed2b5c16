/**
 * The Content-Type of an answer in `format`, as a ClickHouse server sends it (each output format's
 * getContentType): tab-separated and CSV text, JSON documents, newline-delimited JSON for the
 * *EachRow formats, XML, plain text for the human-readable ones, octet-stream for binary formats.
 */
export function contentTypeOf(format: string): string {
  if (/^(TabSeparated|TSV)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^CSV/i.test(format)) return `text/csv; charset=UTF-8; header=${/WithNames/i.test(format) ? 'present' : 'absent'}`;
  if (/^JSON.*EachRow|^JSONLines$|^NDJSON$|^JSONObjectEachRow$/i.test(format)) return 'application/x-ndjson; charset=UTF-8';
  if (/^JSON/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^XML$/i.test(format)) return 'application/xml; charset=UTF-8';
  if (/^(Pretty|Vertical|Markdown|Values|Raw|LineAsString|Prometheus|SQLInsert|Template|CustomSeparated|Regexp|Null)/i.test(format)) {
    return 'text/plain; charset=UTF-8';
  }
  return 'application/octet-stream';
}
