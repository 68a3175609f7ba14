import { type CompiledQuery, Kysely, PostgresDialect, type PostgresPoolClient, type QueryResult, sql } from 'kysely';
import type pg from 'pg';
import type { NamingClient } from './prepared-statements.js';
import type { Database } from './schema.js';
import { type GroupedStatement, preparedValues, refusedByServer, submitGroup } from './statement-group.js';

/**
 * PostgreSQL transactions whose statements that nobody waits on ride with the next one (issue
 * 12). BEGIN, a SAVEPOINT and its RELEASE answer nothing a caller needs: they are queued on the
 * connection and written in the same write as the next statement that is waited on (or the
 * COMMIT), and the server runs them in order, as if each had been sent alone. A transaction
 * costs its statements' round trips plus the COMMIT's, not two more; a savepoint nothing ran in
 * is never sent. A write whose answer is not needed either (an Idempotency-Key's stored answer,
 * a sent send's webhook deliveries) can be queued the same way (`writeLater`): its failure fails
 * the write it goes out with, or the commit, so the transaction never commits without it.
 *
 * A queued statement's failure is QueuedStatementFailed, the transaction's and not the next
 * statement's. On SQLite (no such connection) every one of these runs at once, as before.
 */

/** A Kysely on one connection in a transaction (transaction.ts's Tx, which imports this file). */
type Tx = Kysely<Database>;

/** Sends a pipeline's statements in ONE write inside the transaction (pipeline.ts). */
export type Pipeline = (queries: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

/** Marks an error raised before anything of a write was sent: the connection is as it was. */
const NOTHING_SENT = Symbol('nothing sent');

/**
 * A queued statement (BEGIN, a SAVEPOINT, a writeLater's write) failed in the write of a later
 * one, which did not run. It is the transaction's failure, not that statement's: the savepoints
 * it queued may not exist, so nothing short of the transaction's rollback is sure to undo it.
 * Its cause is the server's error.
 */
export class QueuedStatementFailed extends Error {
  constructor(
    readonly statement: string,
    cause: unknown,
  ) {
    super(`a queued statement failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/**
 * An error after which the connection still works: one the server answered by refusing a
 * statement (refusedByServer), or one raised before anything was sent.
 */
export function answeredByServer(err: unknown): boolean {
  if (err instanceof QueuedStatementFailed) return refusedByServer(err.cause);
  return Boolean((err as { [NOTHING_SENT]?: boolean } | null)?.[NOTHING_SENT]) || refusedByServer(err);
}

/** One pool connection, and the statements queued on it for its next write. */
export class DeferringConnection {
  /** Statements to write before the next one (BEGIN, SAVEPOINT, RELEASE, writeLater's). */
  private queued: GroupedStatement[] = [];
  /** Whether anything was written since the transaction started (so its BEGIN went out). */
  private written = false;
  /** Whether a write (writeLater's, not a control statement) is queued and not written yet. */
  private writeQueued = false;
  /** A Kysely whose every statement runs on this connection, after what is queued. */
  readonly kysely: Tx;
  /** Statements in ONE write, after what is queued (pipeline.ts). */
  readonly pipeline: Pipeline = (queries) => this.sendQueries(queries);

  constructor(private readonly client: pg.PoolClient) {
    const view: PostgresPoolClient = {
      query: ((text: string, values: unknown[]) => this.query(text, values)) as unknown as PostgresPoolClient['query'],
      // The connection goes back to the pool once, by whoever took it from the pool.
      release: () => undefined,
    };
    this.kysely = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: { connect: async () => view, end: async () => undefined } }),
    });
    deferringConnections.set(this.kysely, this);
  }

  /** A new unit on this connection: nothing queued but `first` (its BEGIN), nothing written yet. */
  start(...first: string[]): void {
    this.queued = first.map(control);
    this.written = false;
    this.writeQueued = false;
  }

  /** Whether anything of the unit went to the server (so there is a transaction to end). */
  get anythingWritten(): boolean {
    return this.written;
  }

  /** Whether the unit has work to commit: something written, or a write queued. */
  get anythingToCommit(): boolean {
    return this.written || this.writeQueued;
  }

  /** Queues a control statement (BEGIN, SAVEPOINT, RELEASE ...) for the next write. */
  later(statement: GroupedStatement): void {
    this.queued.push(statement);
  }

  /** Queues a write nobody waits on for the next write (writeLater). */
  writeLater(statement: GroupedStatement): void {
    this.queued.push(statement);
    this.writeQueued = true;
  }

  /** Takes `text` back if it is the last statement queued (a savepoint nothing ran in); true if it was. */
  takeBack(text: string): boolean {
    const last = this.queued.at(-1);
    if (last?.text !== text || last.values.length > 0) return false;
    this.queued.pop();
    return true;
  }

  /** Drops what is queued (a unit that ends with nothing written). */
  dropQueued(): void {
    this.queued = [];
    this.writeQueued = false;
  }

  /** Control statements (COMMIT, ROLLBACK TO ...) now, after what is queued, in one write. */
  async now(...texts: string[]): Promise<void> {
    await this.send(texts.map(control));
  }

  /** A statement for Kysely: alone as pg sends it when nothing is queued, else after the queue in one write. */
  private async query(text: string, values: unknown[]): Promise<pg.QueryResult> {
    if (this.queued.length === 0) {
      this.written = true;
      return this.client.query(text, values);
    }
    const [result] = await this.send([this.statement(text, values)]);
    return result as pg.QueryResult;
  }

  private async sendQueries(queries: readonly CompiledQuery[]): Promise<QueryResult<unknown>[]> {
    const statements: GroupedStatement[] = [];
    for (const [i, query] of queries.entries()) {
      try {
        statements.push(this.statement(query.sql, query.parameters));
      } catch (err) {
        // A value that cannot be sent: nothing was written; the statement it belongs to failed.
        throw Object.assign(err as object, { statementIndex: i, [NOTHING_SENT]: true });
      }
    }
    const results = await this.send(statements);
    return results.map((r) => ({ rows: r.rows }));
  }

  /** A statement as it goes in a write: its values mapped (this can throw: nothing is sent then) and its name. */
  statement(text: string, values: readonly unknown[]): GroupedStatement {
    // Named only with parameters, as PreparingClient names the statements it runs alone.
    const name = values.length > 0 ? (this.client as unknown as NamingClient).statementName?.(text) : undefined;
    return { text, values: preparedValues(values), name };
  }

  /**
   * The queued statements, then `statements`, in one write; the results of `statements`. A
   * failure's `statementIndex` counts among `statements`; a queued one's failure is no
   * statement's of the caller: QueuedStatementFailed.
   */
  private async send(statements: GroupedStatement[]): Promise<pg.QueryResult[]> {
    const queued = this.queued;
    this.queued = [];
    this.written = true;
    this.writeQueued = false;
    try {
      const results = await submitGroup(this.client, [...queued, ...statements]);
      return results.slice(queued.length);
    } catch (err) {
      // A plan gone stale (a migration changed a table): the statements run again afresh.
      (this.client as unknown as NamingClient).forgetNamesIfStale?.(err);
      const failed = err as { statementIndex?: number };
      const index = failed.statementIndex;
      if (typeof index === 'number' && index < queued.length) throw new QueuedStatementFailed(queued[index]!.text, err);
      if (typeof index === 'number') failed.statementIndex = index - queued.length;
      throw err;
    }
  }
}

const control = (text: string): GroupedStatement => ({ text, values: [], name: undefined });

const deferringConnections = new WeakMap<Tx, DeferringConnection>();
const connections = new WeakMap<pg.PoolClient, DeferringConnection>();

/** The DeferringConnection of a pool client (kept per client: its Kysely is built once). */
export function deferringConnection(client: pg.PoolClient): DeferringConnection {
  let connection = connections.get(client);
  if (!connection) {
    connection = new DeferringConnection(client);
    connections.set(client, connection);
  }
  return connection;
}

/** A PostgreSQL Db's pool (connect.ts sets both of its pools; SQLite has none). */
export function poolOf(pool: pg.Pool | undefined): pg.Pool {
  if (!pool) throw new Error('a PostgreSQL transaction needs the pool of db/connect.ts');
  return pool;
}

/**
 * Runs fn in one transaction on a connection of `pool`: its BEGIN (`begin`, e.g. with an
 * isolation level) goes with its first statement, its COMMIT after the last (with anything
 * queued). A unit that wrote nothing (and queued no write) costs no round trip. Committed when
 * fn resolves, rolled back when it throws. A connection left in an unknown state (a failure the server did not
 * answer) is closed rather than given back to the pool.
 */
export async function inPgTransaction<T>(pool: pg.Pool, fn: (connection: DeferringConnection) => Promise<T>, begin = 'begin'): Promise<T> {
  const client = await pool.connect();
  const connection = deferringConnection(client);
  connection.start(begin);
  let unusable: Error | undefined;
  const commit = async () => {
    // Nothing to commit when nothing went out and no write is queued (one still goes with the COMMIT).
    if (!connection.anythingToCommit) return connection.dropQueued();
    await connection.now('commit').catch(async (err: unknown) => {
      // A COMMIT skipped after a queued statement failed leaves the transaction open (failed).
      if (answeredByServer(err)) await rollback();
      else unusable = err as Error;
      throw err;
    });
  };
  // Alone: what is still queued would be undone by it anyway, and could fail and skip it.
  const rollback = async () => {
    const written = connection.anythingWritten;
    connection.dropQueued();
    if (written) await connection.now('rollback').catch((err: Error) => (unusable = err));
  };
  try {
    let result: T;
    try {
      result = await fn(connection);
    } catch (err) {
      await rollback();
      throw err;
    }
    await commit();
    return result;
  } finally {
    connection.dropQueued();
    client.release(unusable);
  }
}

/**
 * A statement nobody waits on in `tx`: on a DeferringConnection it is queued for the next
 * write (see above); on SQLite it runs now.
 */
export async function controlLater(tx: Tx, text: string): Promise<void> {
  const connection = deferringConnections.get(tx);
  if (connection) connection.later(control(text));
  else await sql.raw(text).execute(tx);
}

/**
 * Undoes a queued `text` that was never written (true), so a savepoint nothing ran in costs
 * nothing; false when it went out (or on SQLite, where it ran at once).
 */
export function takeBack(tx: Tx, text: string): boolean {
  return deferringConnections.get(tx)?.takeBack(text) ?? false;
}

/**
 * Rolls back to the savepoint `name` and releases it, now. What is queued was queued after the
 * SAVEPOINT went out (a write flushes the whole queue), so the rollback undoes it anyway: it is
 * dropped rather than sent, where it could fail and skip the rollback.
 */
export async function rollbackToSavepoint(tx: Tx, name: string): Promise<void> {
  const texts = [`rollback to ${name}`, `release ${name}`];
  const connection = deferringConnections.get(tx);
  if (!connection) {
    for (const text of texts) await sql.raw(text).execute(tx);
    return;
  }
  connection.dropQueued();
  await connection.now(...texts);
}

/**
 * A write whose answer is not needed (its rows, its count), queued on PostgreSQL to go with the
 * next statement or the commit: its failure fails that one, so the transaction cannot commit
 * without it. On SQLite it runs now.
 */
export async function writeLater(tx: Tx, query: { compile(): CompiledQuery }): Promise<void> {
  const connection = deferringConnections.get(tx);
  const compiled = query.compile();
  if (connection) connection.writeLater(connection.statement(compiled.sql, compiled.parameters));
  else await tx.executeQuery(compiled);
}
