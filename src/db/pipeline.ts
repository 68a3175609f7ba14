import { type CompiledQuery, Kysely, PostgresDialect, type PostgresPoolClient, type QueryResult, sql } from 'kysely';
import type pg from 'pg';
import type { Db } from './connect.js';
import type { Database } from './schema.js';
import { type GroupedStatement, preparedValues, refusedByServer, submitGroup } from './statement-group.js';
import type { Tx } from './transaction.js';

/**
 * Statements sent to PostgreSQL in ONE write on the transaction's connection and answered in
 * order (the protocol's pipelining: every Parse/Bind/Execute, then one Sync), inside the
 * transaction already begun: they run one after the other, each seeing what the ones before it
 * wrote, as if sent one at a time, for one round trip instead of one each (issue 12). When the
 * server refuses one, it skips the rest, the transaction is failed until a rollback (to a
 * savepoint), and the error's `statementIndex` says which one it was.
 */
export type Pipeline = (queries: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

/** The statement of a pipeline that failed (the ones before it completed), from its error. */
export function failedStatementIndex(err: unknown): number {
  const index = (err as { statementIndex?: unknown } | null)?.statementIndex;
  return typeof index === 'number' ? index : 0;
}

/**
 * Runs fn in one transaction on a connection of the PostgreSQL pool, with a Pipeline on that
 * connection beside the usual Kysely (`tx`, for the statements that need their answer before
 * the next one is written). Committed when fn resolves, rolled back when it throws.
 */
export async function inPipelinedTransaction<T>(db: Db, fn: (tx: Tx, pipeline: Pipeline) => Promise<T>): Promise<T> {
  if (!db.pool) throw new Error('a pipelined transaction needs PostgreSQL');
  const client = await db.pool.connect();
  const tx = kyselyOn(client);
  // A connection left in an unknown state (a rollback that failed, no answer from the server)
  // is closed rather than given back to the pool.
  let unusable: Error | undefined;
  /** `begin` or `commit`; a failure the server did not answer leaves the connection unusable. */
  const control = (text: 'begin' | 'commit') =>
    sql
      .raw(text)
      .execute(tx)
      .catch((err: unknown) => {
        if (!answeredByServer(err)) unusable = err as Error;
        throw err;
      });
  try {
    await control('begin');
    let result: T;
    try {
      result = await fn(tx, pipelineOn(client));
    } catch (err) {
      await sql
        .raw('rollback')
        .execute(tx)
        .catch((rollbackFailed: Error) => {
          unusable = rollbackFailed;
        });
      throw err;
    }
    await control('commit');
    return result;
  } finally {
    client.release(unusable);
  }
}

/**
 * Statements in ONE round trip outside any transaction: the protocol's implicit transaction of
 * a pipeline makes them atomic (all committed, or none when the server refuses one). For a
 * write of several statements that need no answer in between (the events batch's inserts).
 */
export async function inOneRoundTrip(db: Db, queries: readonly CompiledQuery[]): Promise<QueryResult<unknown>[]> {
  if (!db.pool) throw new Error('a pipeline needs PostgreSQL');
  const client = await db.pool.connect();
  let unusable: Error | undefined;
  try {
    return await pipelineOn(client)(queries);
  } catch (err) {
    if (!answeredByServer(err)) unusable = err as Error;
    throw err;
  } finally {
    client.release(unusable);
  }
}

/** A Kysely whose every statement runs on `client` (kept per connection: it holds no other state). */
function kyselyOn(client: pg.PoolClient): Tx {
  let kysely = kyselies.get(client);
  if (!kysely) {
    const view: PostgresPoolClient = {
      query: ((...args: unknown[]) => (client.query as (...a: unknown[]) => unknown)(...args)) as PostgresPoolClient['query'],
      // The connection goes back to the pool once, in inPipelinedTransaction.
      release: () => undefined,
    };
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => view, end: async () => undefined } }) });
    kyselies.set(client, kysely);
  }
  return kysely;
}

const kyselies = new WeakMap<pg.PoolClient, Tx>();

/** Marks an error raised before anything of the pipeline was written. */
const NOTHING_SENT = Symbol('nothing sent');

/** A client of the pool that can name its statements (prepared-statements.ts's PreparingClient). */
interface NamingClient {
  statementName?(text: string): string | undefined;
  forgetNamesIfStale?(err: unknown): void;
}

function pipelineOn(client: pg.PoolClient): Pipeline {
  const naming = client as unknown as NamingClient;
  return (queries) =>
    new Promise((resolve, reject) => {
      const statements: GroupedStatement[] = [];
      for (const [i, query] of queries.entries()) {
        try {
          statements.push({ text: query.sql, values: preparedValues(query.parameters), name: naming.statementName?.(query.sql) });
        } catch (err) {
          // A value that cannot be sent: nothing was written, the connection is as it was; the
          // statement it belongs to failed.
          Object.assign(err as object, { statementIndex: i, [NOTHING_SENT]: true });
          reject(err);
          return;
        }
      }
      submitGroup(client, statements).then(
        (results) => resolve(results.map((r) => ({ rows: r.rows }))),
        (err: unknown) => {
          // A plan gone stale (a migration changed a table): the statements run again afresh.
          naming.forgetNamesIfStale?.(err);
          reject(err);
        },
      );
    });
}

/**
 * An error after which the connection still works: one the server answered by refusing a
 * statement (refusedByServer), or one raised before anything was sent.
 */
function answeredByServer(err: unknown): boolean {
  return Boolean((err as { [NOTHING_SENT]?: boolean } | null)?.[NOTHING_SENT]) || refusedByServer(err);
}
