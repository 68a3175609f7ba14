import type SqliteDatabase from 'better-sqlite3';

/**
 * The statements a SQLite group commit runs around its transactions (db/transaction.ts):
 * `begin immediate`, a savepoint and its release (or rollback) per transaction, `commit`, and the
 * `synchronous` pragmas around a group. Prepared once and run straight on better-sqlite3: through
 * Kysely each one cost about 6 µs of JavaScript (compile, driver, result) for 0.5 µs of SQLite,
 * and a request runs two of them (its savepoint and release) plus its share of the group's.
 *
 * Only the holder of Kysely's connection may run them: SQLite has one connection, and the group
 * holds it (`kysely.connection().execute`) while it runs, so nothing else is on it meanwhile.
 */
export class GroupStatements {
  private readonly statements: Record<GroupStatement, SqliteDatabase.Statement>;

  constructor(file: SqliteDatabase.Database) {
    this.statements = Object.fromEntries(Object.entries(TEXTS).map(([name, text]) => [name, file.prepare(text)])) as Record<
      GroupStatement,
      SqliteDatabase.Statement
    >;
  }

  /** Throws what SQLite throws (busy, I/O error), synchronously. */
  run(statement: GroupStatement): void {
    this.statements[statement].run();
  }
}

const TEXTS = {
  begin: 'begin immediate',
  savepoint: 'savepoint herald_tx',
  release: 'release herald_tx',
  rollbackToSavepoint: 'rollback to herald_tx',
  commit: 'commit',
  rollback: 'rollback',
  syncNormal: 'pragma synchronous = normal',
  syncFull: 'pragma synchronous = full',
} as const;

export type GroupStatement = keyof typeof TEXTS;
