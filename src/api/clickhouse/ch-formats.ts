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

/**
 * The output formats the interface serves (docs/clickhouse-interface.md, "Output formats"): each is
 * written by the engine from the query's own columns with no file, schema or server setting, and
 * each is tested against the engine's own answer (test/api/clickhouse-formats.test.ts). Refused
 * (UNKNOWN_FORMAT, before the query runs): the formats that need a template or schema file or
 * their settings (Template, TemplateIgnoreSpaces, CustomSeparated and its variants, Protobuf,
 * ProtobufList, ProtobufSingle, CapnProto, AvroConfluent's registry), the wire protocols of other
 * servers (MySQLWire, PostgreSQLWire, ODBCDriver2), input-only ones (Regexp), and the engine's
 * newest, untested ones (Buffers, GeoJSON, PNG). A format that is not here is refused even when
 * the engine has it: the list grows by a test, not by an engine upgrade.
 */
export const SERVED_OUTPUT_FORMATS: ReadonlySet<string> = new Set([
  'Arrow',
  'ArrowStream',
  'Avro',
  'BSONEachRow',
  'CSV',
  'CSVWithNames',
  'CSVWithNamesAndTypes',
  'Hash',
  'JSON',
  'JSONColumns',
  'JSONColumnsWithMetadata',
  'JSONCompact',
  'JSONCompactColumns',
  'JSONCompactEachRow',
  'JSONCompactEachRowWithNames',
  'JSONCompactEachRowWithNamesAndTypes',
  'JSONCompactEachRowWithProgress',
  'JSONCompactStrings',
  'JSONCompactStringsEachRow',
  'JSONCompactStringsEachRowWithNames',
  'JSONCompactStringsEachRowWithNamesAndTypes',
  'JSONCompactStringsEachRowWithProgress',
  'JSONEachRow',
  'JSONEachRowWithProgress',
  'JSONL',
  'JSONLines',
  'JSONObjectEachRow',
  'JSONStrings',
  'JSONStringsEachRow',
  'JSONStringsEachRowWithProgress',
  'LineAsString',
  'LineAsStringWithNames',
  'LineAsStringWithNamesAndTypes',
  'MD',
  'Markdown',
  'MsgPack',
  'NDJSON',
  'Native',
  'Npy',
  'Null',
  'ORC',
  'Parquet',
  'Pretty',
  'PrettyCompact',
  'PrettyCompactMonoBlock',
  'PrettyCompactNoEscapes',
  'PrettyCompactNoEscapesMonoBlock',
  'PrettyJSONEachRow',
  'PrettyJSONLines',
  'PrettyMonoBlock',
  'PrettyNDJSON',
  'PrettyNoEscapes',
  'PrettyNoEscapesMonoBlock',
  'PrettySpace',
  'PrettySpaceMonoBlock',
  'PrettySpaceNoEscapes',
  'PrettySpaceNoEscapesMonoBlock',
  'Prometheus',
  'Raw',
  'RawBLOB',
  'RawWithNames',
  'RawWithNamesAndTypes',
  'RowBinary',
  'RowBinaryWithNames',
  'RowBinaryWithNamesAndTypes',
  'SQLInsert',
  'TSKV',
  'TSV',
  'TSVRaw',
  'TSVRawWithNames',
  'TSVRawWithNamesAndTypes',
  'TSVWithNames',
  'TSVWithNamesAndTypes',
  'TabSeparated',
  'TabSeparatedRaw',
  'TabSeparatedRawWithNames',
  'TabSeparatedRawWithNamesAndTypes',
  'TabSeparatedWithNames',
  'TabSeparatedWithNamesAndTypes',
  'Values',
  'Vertical',
  'XML',
]);

/** Output formats the engine has that the interface refuses, named in tests and docs. */
export const REFUSED_OUTPUT_FORMATS = [
  'Template',
  'TemplateIgnoreSpaces',
  'Regexp',
  'CustomSeparated',
  'CustomSeparatedWithNames',
  'CustomSeparatedWithNamesAndTypes',
  'Protobuf',
  'ProtobufList',
  'ProtobufSingle',
  'CapnProto',
  'AvroConfluent',
  'MySQLWire',
  'PostgreSQLWire',
  'ODBCDriver2',
  'Buffers',
  'GeoJSON',
  'PNG',
] as const;

/** The refusal of a format the engine has but the interface does not serve: ClickHouse's UNKNOWN_FORMAT (73). */
export function refusedFormatMessage(format: string): string {
  return `Format ${format} is not served by this interface: it needs a template or schema file, server settings, or another server's protocol; see the served formats in the interface's documentation`;
}
