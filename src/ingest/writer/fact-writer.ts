import type { FactRow } from '../../core/fact.js';
import { observeInsert, type Telemetry } from '../../core/telemetry.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { insertFacts } from '../../olap/tables/facts.table.js';
import { type DeadLetterStore, deadLetter } from './dead-letters.js';
import { insertIsolating } from './isolating-insert.js';

/**
 * The one path by which relayed outbox facts reach ClickHouse (the relay without Redis, the
 * queue worker with it). Like the EventWriter: the batch's token makes a redelivery a no-op, and
 * facts ClickHouse refuses for their data are isolated into the dead letters while every other
 * fact of the batch is stored.
 */
export class FactWriter {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    private readonly deadLetters: DeadLetterStore,
    private readonly telemetry?: Telemetry,
  ) {}

  /** Resolves once every fact is stored or dead-lettered; returns how many were dead-lettered. */
  async write(facts: FactRow[], token: string): Promise<{ deadLettered: number }> {
    const refused = await insertIsolating(facts, token, (rows, rowsToken) =>
      observeInsert(this.telemetry, 'facts', rows.length, () => insertFacts(this.clickhouse, rows, rowsToken)),
    );
    await this.deadLetters.record(refused.map(({ row, error }) => deadLetter('fact', row.project_id, row.fact_id, row, error)));
    return { deadLettered: refused.length };
  }
}
