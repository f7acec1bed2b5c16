import postgres from 'postgres';

export type Sql = postgres.Sql<Record<string, never>>;
/** A connection or a transaction: repository functions accept either. */
export type SqlLike = Sql | postgres.TransactionSql<Record<string, never>>;

export type DbOptions = {
  max?: number;
  onnotice?: (notice: postgres.Notice) => void;
};

/** Creates the postgres.js pool. It connects lazily, on the first query. */
export function createSql(url: string, options: DbOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    // Migrations use `create ... if not exists`; their notices are noise.
    onnotice: options.onnotice ?? (() => {}),
    connection: { application_name: 'feedback-service' },
  });
}
