import type { Completion } from '@codemirror/autocomplete';
import { SQLDialect } from '@codemirror/lang-sql';

/**
 * ClickHouse's SELECT as the SQL console highlights and completes it (@codemirror/lang-sql has no
 * ClickHouse dialect). Only what a project query may use: its clauses, its types and the functions
 * data teams reach for first; the engine itself is the judge of what runs (docs/project-sql.md).
 */
const KEYWORDS = [
  'select distinct from where prewhere group by having order limit offset with totals rollup cube',
  'as on using join inner left right full outer cross semi anti any all asof global array',
  'union intersect except in not and or is null like ilike between case when then else end',
  'asc desc nulls first last fill step interpolate qualify over partition rows range preceding following',
  'current row unbounded window sample final interval exists recursive ties collate true false',
  'second minute hour day week month quarter year',
].join(' ');

const TYPES = [
  'UInt8 UInt16 UInt32 UInt64 UInt128 UInt256 Int8 Int16 Int32 Int64 Int128 Int256 Float32 Float64',
  'Decimal Decimal32 Decimal64 Decimal128 Bool String FixedString UUID Date Date32 DateTime DateTime64',
  'Enum8 Enum16 LowCardinality Nullable Array Tuple Map JSON IPv4 IPv6 AggregateFunction SimpleAggregateFunction',
].join(' ');

const FUNCTIONS = [
  'count countIf sum sumIf avg avgIf min max minIf maxIf any anyLast argMin argMax uniq uniqExact uniqIf uniqCombined',
  'quantile quantiles quantileExact median groupArray groupUniqArray topK windowFunnel retention sequenceMatch',
  'finalizeAggregation uniqMerge countMerge sumMerge',
  'toDate toDateTime toDateTime64 toStartOfDay toStartOfHour toStartOfWeek toStartOfMonth toStartOfInterval toMonday',
  'toYYYYMM toYYYYMMDD toUnixTimestamp now today yesterday dateDiff date_trunc addDays subtractDays formatDateTime',
  'toString toUInt32 toUInt64 toInt64 toFloat64 toUUID toTypeName if multiIf coalesce ifNull nullIf isNull isNotNull',
  'length lower upper concat substring position replaceAll splitByChar arrayJoin has arrayMap arrayFilter',
  'JSONExtractString JSONExtractInt JSONExtractFloat JSONExtractBool JSONExtractRaw JSONHas',
  'round floor ceil abs greatest least row_number rank dense_rank lagInFrame leadInFrame numbers',
].join(' ');

/** The spelling of each type and function: lang-sql looks words up in lower case, ClickHouse is case-sensitive. */
const SPELLING = new Map([...TYPES.split(' '), ...FUNCTIONS.split(' ')].map((word) => [word.toLowerCase(), word]));

export const ClickHouseSQL = SQLDialect.define({
  keywords: KEYWORDS,
  types: TYPES.toLowerCase(),
  builtin: FUNCTIONS.toLowerCase(),
  // ClickHouse strings take backslash escapes; identifiers are quoted with backticks or double quotes.
  backslashEscapes: true,
  identifierQuotes: '`"',
  hashComments: true,
  caseInsensitiveIdentifiers: false,
});

/** A completion of the dialect's words: keywords in capitals, types and functions as ClickHouse spells them. */
export function clickHouseWord(label: string, type: string): Completion {
  return type === 'keyword' ? { label: label.toUpperCase(), type } : { label: SPELLING.get(label) ?? label, type };
}
