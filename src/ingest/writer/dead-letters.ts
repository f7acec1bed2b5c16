import type { Logger } from '../../core/logger.js';
import type { Telemetry } from '../../core/telemetry.js';
import type { DataError } from '../../olap/tables/insert-errors.js';
import type { Sql } from '../../oltp/db.js';
import { type DeadLetterKind, type NewDeadLetter, recordDeadLetters } from '../../oltp/dead-letters.repo.js';

/** Where the writers put rows ClickHouse refused for their data. */
export interface DeadLetterStore {
  /** Resolves once the letters are durable; a letter recorded before is not recorded twice. */
  record(letters: NewDeadLetter[]): Promise<void>;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ERROR_CHARS = 4_000;

/**
 * A dead letter for one refused row. The payload is the row as JSON text: JSON.stringify escapes
 * NUL and lone surrogates, so PostgreSQL text holds whatever the row held. The error message may
 * quote the row, so it is made storable too.
 */
export function deadLetter(kind: DeadLetterKind, projectId: string, rowKey: string, row: unknown, error: DataError): NewDeadLetter {
  return {
    kind,
    projectId: UUID_PATTERN.test(projectId) ? projectId : null,
    rowKey,
    payload: JSON.stringify(row),
    errorCode: error.code,
    errorName: error.name,
    error: error.message.toWellFormed().replaceAll('\u0000', '\\u0000').slice(0, MAX_ERROR_CHARS),
  };
}

/** Dead letters in PostgreSQL (table dead_letters), counted in feedback_dead_letters_total. */
export class PostgresDeadLetters implements DeadLetterStore {
  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
    private readonly telemetry?: Telemetry,
  ) {}

  async record(letters: NewDeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    const added = await recordDeadLetters(this.sql, letters);
    for (const [kind, count] of added) {
      this.telemetry?.deadLetters.inc({ kind }, count);
      this.logger.warn(
        { kind, count, errors: [...new Set(letters.map((letter) => letter.errorName))] },
        'rows refused by ClickHouse were dead-lettered',
      );
    }
  }
}
