import { z } from 'zod';
import { anyValues } from '../shared/any-values.js';
import { count } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { SqlResultBody } from './sql-result-body.js';

// Operator ad-hoc SQL

export const AdhocSqlResponse = z
  .object({
    columns: z.array(z.object({ name: z.string(), type: z.string().meta({ description: 'ClickHouse type' }) })),
    rows: z
      .array(z.record(z.string(), z.unknown()).meta(anyValues))
      .meta({ description: 'One object per row, keyed by column name; ClickHouse JSON encoding (64-bit integers as strings).' }),
    row_count: count,
    truncated: z.boolean().meta({ description: 'True when the result had more rows than the limit and was cut.' }),
    elapsed_ms: count,
  })
  .meta({ id: 'AdhocSqlResult' });

export type AdhocSqlResponseChecks = [Expect<SameShape<SqlResultBody<Record<never, never>>, Out<typeof AdhocSqlResponse>>>];
