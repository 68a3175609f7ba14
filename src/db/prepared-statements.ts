import pg from 'pg';

/**
 * Named (prepared) statements for the PostgreSQL pool (issue 12).
 *
 * Kysely sends every statement unnamed, so PostgreSQL parses and plans it again on every call.
 * For Herald's write statements (data-modifying CTEs) planning cost more server CPU than running
 * them: about 0.15–0.35 ms of 0.2–0.5 ms. On a machine where the server and Node share the
 * cores, that time is taken from Node too. A statement text that runs again gets a name; each
 * connection parses it once, and after five runs PostgreSQL keeps a generic plan when it costs
 * no more than the custom ones (plan_cache_mode auto), so a hot write is only bound and run.
 *
 * Only texts seen twice are named (a one-off admin read stays unnamed), and at most
 * MAX_NAMED per pool: statements whose IN lists vary in length cannot fill the server's memory.
 *
 * A migration that changes a table under a running process (an upgrade: the new version
 * migrates while the old one still serves) makes PostgreSQL refuse the prepared statements
 * whose result columns changed ("cached plan must not change result type"). The pool then
 * starts a new generation of names, which every connection prepares afresh, and the statement
 * runs again unnamed when it was alone (outside a transaction, nothing of it happened).
 *
 * A named statement's result columns are described once per connection: its first run asks
 * for them (Describe), later runs on that connection reuse them (see DescribedOnce).
 *
 * Off with DATABASE_PREPARED_STATEMENTS=false, for a pooler that cannot keep named statements
 * apart per server connection (PgBouncer in transaction mode before 1.21, or without
 * max_prepared_statements).
 */

/** Distinct statement texts named per pool (each connection prepares at most these). */
const MAX_NAMED = 200;
/** Texts seen once, remembered to spot the second run; forgotten all at once when full. */
const MAX_SEEN_ONCE = 5_000;

class StatementNames {
  private names = new Map<string, string>();
  private seenOnce = new Set<string>();
  private generation = 1;

  /** The name of `text`, or undefined while it should run unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= MAX_NAMED) return name;
    if (!this.seenOnce.has(text)) {
      if (this.seenOnce.size >= MAX_SEEN_ONCE) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    this.seenOnce.delete(text);
    const next = `herald_${this.generation}_${this.names.size + 1}`;
    this.names.set(text, next);
    return next;
  }

  /** After a schema change: every name so far may be stale on every connection. */
  startNewGeneration(): void {
    this.names.clear();
    this.generation++;
  }
}

/** What pg's Result keeps from a RowDescription: the columns, a parser each, an empty row. */
interface Description {
  fields: unknown[];
  parsers: unknown[] | undefined;
  emptyRow: Record<string, null> | null;
}

/** The parts of pg's Query and Result (lib/query.js, lib/result.js) a DescribedOnce uses. */
interface QueryInternals {
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

/**
 * A named statement's run that skips Describe once its connection has described it.
 *
 * pg asks for the result's columns on every run of a prepared statement (Bind, Describe,
 * Execute, Sync); the server answers a RowDescription, which pg parses and turns into the
 * result's field list and a type parser per column: ~6% of the API process's CPU on a trigger,
 * whose read returns ~25 columns. A prepared statement's result columns cannot change while it
 * lives: PostgreSQL plans it with a fixed result type and refuses to run it if a schema change
 * would change that type ("cached plan must not change result type", the error handled above,
 * which also starts new names). So the description the statement got on its first run on a
 * connection is reused on that connection (with that client's type parsers), and only there:
 * another connection may have prepared the same name after a migration, with other columns.
 * Behind a pooler the server connection under a client can change (see changedColumns): rows
 * with another number of columns are caught; a migration that keeps a statement's number of
 * result columns but changes their names or types, under a process still running the old
 * version behind such a pooler, would be read with the old names and parsers.
 */
// pg.Query's typings do not include prepare(); its JavaScript does (lib/query.js).
const Query = pg.Query as unknown as new (
  text: string,
  values: unknown[],
) => { prepare(connection: unknown): void; handleDataRow(message: unknown): void };

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
function describedOnce(descriptions: Map<string, Description>, name: string, text: string, values: unknown[]) {
  const query = new DescribedOnce(text, values);
  query.descriptions = descriptions;
  const internals = query as unknown as QueryInternals;
  internals.name = name;
  return internals;
}

/**
 * The error of a described statement whose rows came with another number of columns. PostgreSQL
 * itself refuses a changed prepared statement (the error handled above), but behind a pooler
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

/** SQLSTATE 0A000 with this message: a prepared statement outlived a change of its table. */
function isStalePlan(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/** pg.Client with its overloaded `query` seen as one signature, so a subclass can wrap it. */
const Client = pg.Client as unknown as new (
  config?: string | pg.ClientConfig,
) => { query(...args: unknown[]): unknown; connection: NodeJS.EventEmitter };

/** A pg.Client class for pg.Pool's `Client` option whose statements run named (see above). */
export function preparingClient(): typeof pg.Client {
  const names = new StatementNames();
  class PreparingClient extends Client {
    /** The server's transaction status after the last statement: I (idle), T (in one) or E (failed one). */
    private transactionStatus = 'I';
    /** The result columns of each statement name run on this connection (see DescribedOnce). */
    private descriptions = new Map<string, Description>();

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.connection.on('readyForQuery', (message: { status: string }) => {
        this.transactionStatus = message.status;
      });
    }

    // Kysely calls query(text, values) and awaits the promise; any other form (a callback, a
    // cursor, a config object) passes through as it is.
    override query(...args: unknown[]): unknown {
      const [text, values] = args;
      if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return super.query(...args);
      const name = names.nameOf(text);
      return name === undefined ? super.query(text, values) : this.queryNamed(name, text, values);
    }

    private async queryNamed(name: string, text: string, values: unknown[]): Promise<unknown> {
      try {
        return await this.submitNamed(name, text, values);
      } catch (err) {
        if (!isStalePlan(err)) throw err;
        names.startNewGeneration();
        this.descriptions.clear();
        if (this.transactionStatus !== 'I') throw err;
        return super.query(text, values);
      }
    }

    /**
     * `query({ name, text, values })` as pg runs it, without its copy of the config object: pg
     * clones an object config per statement through its property descriptors (2–5 µs, the
     * largest single cost of a statement in pg's own code in the profiles), but takes a Query
     * as it is. The Query is made from the text (pg's fast path) and named after; its promise
     * is made as pg makes its own (an error's stack made to lead back here).
     */
    private submitNamed(name: string, text: string, values: unknown[]): Promise<unknown> {
      const descriptions = this.descriptions;
      const query = describedOnce(descriptions, name, text, values);
      const done = new Promise((resolve, reject) => {
        let settled = false;
        query.callback = (err, res) => {
          // pg calls back twice when a parameter cannot be written: the error, then "done" at
          // the ReadyForQuery of its Sync, with no columns. Only the first call counts.
          if (settled) return;
          settled = true;
          if (err) return reject(err);
          if (!descriptions.has(name)) {
            const result = query._result;
            descriptions.set(name, { fields: result.fields, parsers: result._parsers, emptyRow: result._prebuiltEmptyResultObject });
          }
          resolve(res);
        };
      });
      super.query(query);
      return done.catch((err: Error) => {
        Error.captureStackTrace(err);
        throw err;
      });
    }
  }
  return PreparingClient as unknown as typeof pg.Client;
}
