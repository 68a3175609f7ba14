import pg from 'pg';

// A pg.Query that skips Describe for a named statement its connection has run before (issue 12):
// used by prepared-statements.ts's submitNamed. It relies on pg's Query and Result internals
// (pinned pg 8.x, lib/query.js and lib/result.js); test/db/prepared-statements.test.ts covers it,
// and a pg upgrade must re-read those files.

/** What pg's Result keeps from a RowDescription: the columns, a parser each, an empty row. */
export interface Description {
  fields: unknown[];
  parsers: unknown[] | undefined;
  emptyRow: Record<string, null> | null;
}

/** The parts of pg's Query and Result (lib/query.js, lib/result.js) a DescribedOnce uses. */
export interface QueryInternals {
  name: string;
  portal: string;
  values: unknown[];
  binary: boolean | undefined;
  callback: (err: Error | null, res: unknown) => void;
  _accumulateRows: boolean;
  _canceledDueToError: unknown;
  _result: { fields: unknown[]; _parsers: unknown[] | undefined; _prebuiltEmptyResultObject: Record<string, null> | null };
  hasBeenParsed(connection: unknown): boolean;
  handleError(err: unknown, connection: unknown): void;
  _getRows(connection: unknown, rows: number | undefined): void;
}

interface Connection {
  bind(message: unknown): void;
  sync(): void;
}

// pg.Query's typings do not include prepare(); its JavaScript does (lib/query.js).
const Query = pg.Query as unknown as new (
  text: string,
  values: unknown[],
) => { prepare(connection: unknown): void; handleDataRow(message: unknown): void };

/**
 * A named statement's run that skips Describe once its connection has described it.
 *
 * pg asks for the result's columns on every run of a prepared statement (Bind, Describe,
 * Execute, Sync); the server answers a RowDescription, which pg parses and turns into the
 * result's field list and a type parser per column: ~6% of the API process's CPU on a trigger,
 * whose read returns ~25 columns. A prepared statement's result columns cannot change while it
 * lives: PostgreSQL plans it with a fixed result type and refuses to run it if a schema change
 * would change that type ("cached plan must not change result type", which prepared-statements.ts
 * handles by starting new names). So the description the statement got on its first run on a
 * connection is reused on that connection (with that client's type parsers), and only there:
 * another connection may have prepared the same name after a migration, with other columns.
 * Behind a pooler the server connection under a client can change (see changedColumns): rows
 * with another number of columns are caught; a migration that keeps a statement's number of
 * result columns but changes their names or types, under a process still running the old
 * version behind such a pooler, would be read with the old names and parsers.
 */
class DescribedOnce extends Query {
  descriptions: Map<string, Description> | undefined;

  override prepare(connection: Connection): void {
    const self = this as unknown as QueryInternals;
    const name = self.name;
    const known = this.descriptions?.get(name);
    if (known === undefined || prepareValue === undefined || !self.hasBeenParsed(connection)) {
      super.prepare(connection);
      return;
    }
    try {
      connection.bind({ portal: self.portal, statement: name, values: self.values, binary: self.binary, valueMapper: prepareValue });
    } catch (err) {
      // As pg does, without its Close: the statement was parsed by an earlier run and stays.
      connection.sync();
      self.handleError(err, connection);
      return;
    }
    const result = self._result;
    result.fields = known.fields;
    result._parsers = known.parsers;
    result._prebuiltEmptyResultObject = known.emptyRow;
    self._accumulateRows = true;
    this.undescribed = true;
    self._getRows(connection, undefined);
  }

  private undescribed = false;

  override handleDataRow(message: { fields: unknown[] }): void {
    const self = this as unknown as QueryInternals;
    if (this.undescribed && message.fields.length !== self._result.fields.length && !self._canceledDueToError) {
      self._canceledDueToError = changedColumns();
      return;
    }
    super.handleDataRow(message);
  }
}

/** A DescribedOnce run of `name` (one class for every run: a class per run would keep pg's code from optimising). */
export function describedOnce(descriptions: Map<string, Description>, name: string, text: string, values: unknown[]) {
  const query = new DescribedOnce(text, values);
  query.descriptions = descriptions;
  const internals = query as unknown as QueryInternals;
  internals.name = name;
  return internals;
}

/** After a run that succeeded: keeps the columns its Describe gave, the first time `name` ran on this connection. */
export function rememberDescription(descriptions: Map<string, Description>, name: string, query: QueryInternals): void {
  if (descriptions.has(name)) return;
  const result = query._result;
  descriptions.set(name, { fields: result.fields, parsers: result._parsers, emptyRow: result._prebuiltEmptyResultObject });
}

/**
 * The error of a described statement whose rows came with another number of columns. PostgreSQL
 * itself refuses a changed prepared statement (prepared-statements.ts handles that error), but behind a pooler
 * that prepares the client's statements on each server connection (PgBouncer 1.21+ with
 * max_prepared_statements) a server connection opened after a migration prepares the name
 * afresh, with the new columns, and nothing fails. The same error, so that the same handling
 * (new names; run again when alone) follows.
 */
function changedColumns(): Error {
  return Object.assign(new Error('cached plan must not change result type (its rows no longer match its described columns)'), {
    code: '0A000',
  });
}

/** pg's own mapping of a parameter to its wire text (lib/utils.js), which pg.Query uses. */
const prepareValue = (pg as unknown as { utils?: { prepareValue?: unknown } }).utils?.prepareValue;
