import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase as SqliteDatabaseLike, SqliteDialect } from 'kysely';
import pg from 'pg';
import { type Config, DEFAULT_DATABASE_POOL_SIZE } from '../config.js';
import { ClockCache } from '../lru.js';
import { GroupStatements } from './group-statements.js';
import { migrateToLatest } from './migrate.js';
import { offLoopKysely, ReaderThreads } from './off-loop-reads.js';
import { createOwnerOnly } from './owner-only-file.js';
import { GroupCommit, groupCommitPool } from './postgres-group-commit.js';
import { preparingClient } from './prepared-statements.js';
import type { Database } from './schema.js';
import { WalSync } from './wal-sync.js';

export type Engine = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  /**
   * Where priority writes run (db/transaction.ts). PostgreSQL: a few connections of their own,
   * opened on first use, so a delivered send's outcome never queues behind API requests for
   * one of the pool's. SQLite: the one connection (priority comes from the commit queue).
   */
  readonly priority: Kysely<Database>;
  /**
   * Long reads that need no transaction and follow no write of their own (segment counts, the
   * queue's depth): on SQLite, reader threads with connections of their own, off the event loop
   * (db/off-loop-reads.ts); on PostgreSQL the pool, as `kysely`.
   */
  readonly reads: Kysely<Database>;
  /**
   * Where a statement that runs on its own, outside any transaction, goes: on PostgreSQL into
   * a group commit with the statements that arrive with it (db/postgres-group-commit.ts; no transaction
   * can begin on it); on SQLite, `kysely`.
   */
  readonly grouped: Kysely<Database>;
  readonly engine: Engine;
  /** PostgreSQL only: the connection pool (`kysely`'s), for its transactions (db/pg-transaction.ts) and /metrics. */
  readonly pool?: pg.Pool;
  /** PostgreSQL only: the priority connections' pool (`priority`), for their transactions (db/transaction.ts). */
  readonly priorityPool?: pg.Pool;
  /** PostgreSQL only: the group commit behind `grouped`, for what it counts. */
  readonly groupCommit?: GroupCommit;
  /** SQLite only: the WAL's fsync off the event loop, for group commits (db/wal-sync.ts). */
  readonly walSync?: WalSync;
  /** SQLite only: the group commit's own statements, run without Kysely (db/group-statements.ts). */
  readonly groupStatements?: GroupStatements;
  close(): Promise<void>;
}

// int8 (bigint) columns hold epoch milliseconds and counts: well inside Number's safe range.
pg.types.setTypeParser(20, (value: string) => Number(value));
// numeric (from SUM/AVG over integers) likewise.
pg.types.setTypeParser(1700, (value: string) => Number(value));

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'databasePoolSize' | 'databasePreparedStatements'>>,
  options: {
    poolSize?: number;
    /**
     * SQLite: told of each write run outside a transaction once the database is open (tests
     * check that none does: every write goes through the commit queue, db/transaction.ts).
     */
    onWriteOutsideTransaction?: (sql: string) => void;
  } = {},
): Promise<Db> {
  const poolSize = options.poolSize ?? config.databasePoolSize ?? DEFAULT_DATABASE_POOL_SIZE;
  const db = config.databaseUrl
    ? openPostgres(config.databaseUrl, poolSize, config.databasePreparedStatements ?? true)
    : openSqlite(config.dataDir, options.onWriteOutsideTransaction);
  try {
    await migrateToLatest(db.kysely);
    // After the migrations the WAL file exists; if it cannot be opened, commits sync themselves.
    await db.walSync?.open();
    opened.add(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** Databases whose migrations are over (their own writes run outside transactions). */
const opened = new WeakSet<Db>();

function openSqlite(dataDir: string, onWriteOutsideTransaction?: (sql: string) => void): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'herald.db');
  createOwnerOnly(path);
  const file = new SqliteDatabase(path);
  // WAL + full sync: an accepted write survives a power cut. The busy timeout lets the CLI
  // and the server share the file, each waiting for the other's short transactions.
  file.pragma('journal_mode = WAL');
  file.pragma('synchronous = FULL');
  file.pragma('busy_timeout = 5000');
  file.pragma('foreign_keys = ON');
  file.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  // Temporary tables, sorts and statement journals in memory, not in temporary files: the claim
  // (a materialized CTE, a sort, RETURNING) and any statement run in a savepoint of a group
  // commit use them on every call, and they hold a few rows (docs/performance.md, eighth session).
  file.pragma('temp_store = memory');
  const strayWrites = onWriteOutsideTransaction && ((text: string) => opened.has(db) && onWriteOutsideTransaction(text));
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(file, strayWrites) }) });
  const walSync = new WalSync(`${path}-wal`);
  const reads = offLoopKysely(new ReaderThreads(path));
  const db: Db = {
    kysely,
    priority: kysely,
    reads,
    grouped: kysely,
    engine: 'sqlite',
    walSync,
    groupStatements: new GroupStatements(file),
    close: async () => {
      await Promise.all([kysely.destroy(), reads.destroy()]);
      await walSync.close();
    },
  };
  return db;
}

/**
 * WAL pages after which a commit checkpoints (SQLite's default is 1,000, about 4 MB). A checkpoint
 * runs inside the COMMIT that crosses the mark, on the event loop: it syncs the WAL, copies every
 * page the WAL holds into the database file and syncs that. One group commit of batch chunks
 * (ten batches of 100 events: one page or more per item, each item's index entries landing on
 * pages of their own) writes about 1,000 pages by itself, so at the default nearly every batch
 * commit carried a whole checkpoint of its own pages (two fsyncs and a copy of each page, on the
 * event loop, before any caller was answered): per item, a batch then cost about as much as a
 * single call (docs/performance.md, sixth session: batchsqlite). At 10,000 pages (about 40 MB of
 * WAL at most, plus one group) a checkpoint spans several group commits, copies a page rewritten
 * by several of them once, and syncs once for all. The checkpoint still runs in the committing
 * connection (docs/decisions.md), and the WAL still starts over after each one.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** Distinct statement texts kept prepared (IN lists and multi-row inserts vary in length). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every statement again on every call; preparing costs about
 * as much as running a small indexed statement. Statements are kept by their text (ClockCache:
 * a hit is one lookup, several happen per request; one not used for a while is dropped first).
 * Reusing one is safe: Kysely runs one query at a time on the single connection, and SQLite
 * re-prepares a statement by itself after a schema change. The hot statements' texts are
 * constant strings (db/constant-statements.ts), whose hash V8 keeps: finding them costs no
 * pass over the text.
 */
function withStatementCache(file: SqliteDatabase.Database, onWriteOutsideTransaction?: (sql: string) => void): SqliteDatabaseLike {
  const cache = new ClockCache<string, SqliteDatabase.Statement>(STATEMENT_CACHE_SIZE);
  return {
    close: () => file.close(),
    prepare: (text: string) => {
      const statement = cache.get(text, () => file.prepare(text));
      // Kysely runs a statement right after preparing it.
      if (onWriteOutsideTransaction && !statement.readonly && !file.inTransaction) onWriteOutsideTransaction(text);
      return statement;
    },
  };
}

/** Connections for priority writes on PostgreSQL: outcomes and lease renewals of one worker. */
export const PRIORITY_POOL_SIZE = 4;

function openPostgres(url: string, poolSize: number, preparedStatements: boolean): Db {
  // One set of statement names for both pools: their connections prepare the same texts.
  const Client = preparedStatements ? preparingClient() : pg.Client;
  const pool = new pg.Pool({ connectionString: url, max: poolSize, Client });
  // A connection the server drops (restart, failover, network) is an 'error' event, on the pool
  // for an idle one and on the client for one in use: with nobody listening it would end the
  // process. The failing query gets the error; the pool discards that connection and the next
  // query opens a new one; /readyz reports the database meanwhile.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const groupCommit = new GroupCommit(pool);
  const grouped = new Kysely<Database>({ dialect: new PostgresDialect({ pool: groupCommitPool(groupCommit) }) });
  // Connections kept open for priority writes (outcomes finishing together write side by
  // side): opened on first use (API-only processes never do), replaced after a lost connection
  // (the same 'error' listeners as above).
  const priorityPool = new pg.Pool({ connectionString: url, max: PRIORITY_POOL_SIZE, idleTimeoutMillis: 0, Client });
  priorityPool.on('error', () => undefined);
  priorityPool.on('connect', (client) => client.on('error', () => undefined));
  const priority = new Kysely<Database>({ dialect: new PostgresDialect({ pool: priorityPool }) });
  return {
    kysely,
    priority,
    reads: kysely,
    grouped,
    engine: 'postgres',
    pool,
    priorityPool,
    groupCommit,
    close: async () => {
      await Promise.all([grouped.destroy(), kysely.destroy(), priority.destroy()]);
      // Kysely ends a pool only if it ran a statement on it; transactions take connections of
      // the pools themselves (db/pg-transaction.ts).
      await Promise.all([pool, priorityPool].filter((p) => !p.ending).map((p) => p.end()));
    },
  };
}
