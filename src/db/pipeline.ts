import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './connect.js';
import { answeredByServer, deferringConnection, inPgTransaction, type Pipeline, poolOf } from './pg-transaction.js';
import type { Tx } from './transaction.js';

/**
 * Statements sent to PostgreSQL in ONE write on the transaction's connection and answered in
 * order (the protocol's pipelining: every Parse/Bind/Execute, then one Sync), inside the
 * transaction already begun: they run one after the other, each seeing what the ones before it
 * wrote, as if sent one at a time, for one round trip instead of one each (issue 12). When the
 * server refuses one, it skips the rest, the transaction is failed until a rollback (to a
 * savepoint), and the error's `statementIndex` says which one it was.
 */
export type { Pipeline };

/** The statement of a pipeline that failed (the ones before it completed), from its error. */
export function failedStatementIndex(err: unknown): number {
  const index = (err as { statementIndex?: unknown } | null)?.statementIndex;
  return typeof index === 'number' ? index : 0;
}

/**
 * Runs fn in one transaction on a connection of the PostgreSQL pool, with a Pipeline on that
 * connection beside the usual Kysely (`tx`, for the statements that need their answer before
 * the next one is written). Committed when fn resolves, rolled back when it throws
 * (pg-transaction.ts: the BEGIN goes with the first statement).
 */
export async function inPipelinedTransaction<T>(db: Db, fn: (tx: Tx, pipeline: Pipeline) => Promise<T>): Promise<T> {
  return inPgTransaction(poolOf(db.pool), (connection) => fn(connection.kysely, connection.pipeline));
}

/**
 * Statements in ONE round trip outside any transaction: the protocol's implicit transaction of
 * a pipeline makes them atomic (all committed, or none when the server refuses one). For a
 * write of several statements that need no answer in between (the events batch's inserts).
 */
export async function inOneRoundTrip(db: Db, queries: readonly CompiledQuery[]): Promise<QueryResult<unknown>[]> {
  const client = await poolOf(db.pool).connect();
  const connection = deferringConnection(client);
  connection.start();
  let unusable: Error | undefined;
  try {
    return await connection.pipeline(queries);
  } catch (err) {
    if (!answeredByServer(err)) unusable = err as Error;
    throw err;
  } finally {
    client.release(unusable);
  }
}
