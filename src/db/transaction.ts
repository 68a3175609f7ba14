import { type Kysely, sql } from 'kysely';
import type { Db } from './connect.js';
import type { GroupStatements } from './group-statements.js';
import { inPgTransaction, poolOf } from './pg-transaction.js';
import type { Database } from './schema.js';
import type { WalSync } from './wal-sync.js';

/** A Kysely bound to one connection inside an open transaction. */
export type Tx = Kysely<Database>;

/**
 * When a SQLite write's caller hears back (PostgreSQL commits are always flushed first).
 *
 * - `disk` (the default): once the write is on disk (the WAL's fsync, db/wal-sync.ts): it
 *   survives a power cut. Everything a caller outside the process is told rests on this.
 * - `wal`: once it is committed to the WAL, and any fsync asked for before it is over. It survives
 *   a crash of the process (the WAL is in the operating system's hands); a power cut may roll it
 *   back, with everything committed after it (WAL recovery keeps a prefix of the commits). For
 *   the send queue's own bookkeeping (claims, outcomes, leases: dispatch.repo.ts), whose loss at
 *   worst sends a message again, never loses one (docs/decisions.md, the send queue's own writes).
 */
export type Durability = 'disk' | 'wal';

/**
 * Runs fn in one transaction. On SQLite it begins IMMEDIATE: the write lock is taken up front,
 * so another process writing the same file makes us wait (busy timeout) rather than fail
 * half-way when a read transaction tries to upgrade.
 *
 * On SQLite, transactions requested at the same time share one commit (see CommitGroup): with
 * synchronous=FULL every commit is an fsync, which costs more than the rest of a request.
 */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>, durability: Durability = 'disk'): Promise<T> {
  if (db.engine === 'sqlite') return commitGroupOf(db).run(fn, false, durability);
  return inPgTransaction(poolOf(db.pool), (connection) => fn(connection.kysely));
}

/**
 * A read-only transaction: several reads from one snapshot, outside the commit queue (no
 * savepoint, no commit to wait for, no fsync). On SQLite it holds the one connection for its
 * reads (a deferred `begin` never takes the write lock); on PostgreSQL it is REPEATABLE READ, so
 * every statement sees the same snapshot, as SQLite's does (its BEGIN goes with the first read).
 */
export async function inReadTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.engine === 'postgres')
    return inPgTransaction(poolOf(db.pool), (connection) => fn(connection.kysely), 'begin isolation level repeatable read read only');
  return db.kysely.connection().execute(async (conn) => {
    await sql.raw('begin').execute(conn);
    let result: T;
    try {
      result = await fn(conn);
    } catch (err) {
      await sql
        .raw('rollback')
        .execute(conn)
        .catch(() => undefined);
      throw err;
    }
    await sql.raw('commit').execute(conn);
    return result;
  });
}

/**
 * A transaction that must not wait behind API requests: the outcome of a send the server has
 * accepted (until it commits, a crash means sending that message again) and lease renewals.
 * On SQLite it goes to the front of the commit queue and cuts the group being run short; on
 * PostgreSQL it runs on the priority connections (db.priority), which API requests never use.
 */
export async function inPriorityTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>, durability: Durability = 'disk'): Promise<T> {
  if (db.engine === 'sqlite') return commitGroupOf(db).run(fn, true, durability);
  return inPgTransaction(poolOf(db.priorityPool), (connection) => fn(connection.kysely));
}

/**
 * One statement as its own unit of work. On PostgreSQL it runs alone (autocommit: one round trip
 * instead of begin, statement, commit). On SQLite it is a transaction of the commit queue: a
 * statement run outside one would commit at `synchronous = FULL`, its fsync on the event loop,
 * stopping every request and delivery of the process meanwhile (docs/decisions.md, "Every
 * SQLite write in the commit queue").
 */
export async function inStatement<T>(db: Db, statement: (tx: Tx) => Promise<T>, durability: Durability = 'disk'): Promise<T> {
  if (db.engine === 'sqlite') return commitGroupOf(db).run(statement, false, durability);
  return statement(db.kysely);
}

/**
 * One statement with the same priority, for work that is a single statement: on PostgreSQL it
 * runs on its own (autocommit), so it is durable after one round trip instead of three
 * (begin, statement, commit). Every round trip counts when the machine is busy.
 */
export async function inPriorityStatement<T>(db: Db, statement: (tx: Tx) => Promise<T>, durability: Durability = 'disk'): Promise<T> {
  if (db.engine === 'sqlite') return commitGroupOf(db).run(statement, true, durability);
  return statement(db.priority);
}

/** Most transactions one commit carries: bounds how long the write lock is held. */
const MAX_GROUP = 64;
/** Other transactions a group runs before it commits early for urgent ones that joined it. */
const MIN_OTHERS = 4;

interface Job {
  fn: (tx: Tx) => Promise<unknown>;
  durability: Durability;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for SQLite. The transactions requested during one turn of the event loop run
 * one after the other inside ONE `begin immediate ... commit`, each in its own savepoint, and
 * every caller is answered only after that commit: so N concurrent requests cost one fsync,
 * not N, and nothing is acknowledged before it is durable.
 *
 * Each transaction behaves as if it had its own: SQLite transactions are serial anyway (one
 * connection, one writer), one that throws is rolled back to its savepoint alone and its caller
 * gets the error, the others commit. If SQLite abandons the whole transaction (an I/O error, a
 * failed commit), every caller in the group gets the error, as none of them was acknowledged.
 *
 * Urgent jobs (inPriorityTransaction) run before any other waiting job. One that arrives while
 * a group runs joins that group after the job being run, and the rest of the group waits for
 * the next commit: the urgent write is durable after a few jobs and one commit, not after a
 * whole group of API requests.
 */
class CommitGroup {
  private readonly urgent: Job[] = [];
  private readonly queue: Job[] = [];
  private scheduled = false;

  private readonly statements: GroupStatements;

  constructor(private readonly db: Db) {
    if (!db.groupStatements) throw new Error('group commits need the SQLite connection of db/connect.ts');
    this.statements = db.groupStatements;
  }

  run<T>(fn: (tx: Tx) => Promise<T>, urgent: boolean, durability: Durability): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      (urgent ? this.urgent : this.queue).push({ fn, durability, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * setImmediate runs after the poll phase: every request whose bytes arrived in this turn has
   * reached its transaction by then and joins the group. A lone request waits for nothing.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      void this.db.kysely
        .connection()
        .execute((conn) => this.commitGroup(conn))
        .catch((err: unknown) => {
          // Could not even get the connection (database closed): fail whoever waits.
          for (const job of [...this.urgent.splice(0), ...this.queue.splice(0)]) job.reject(err);
        })
        .finally(() => {
          this.scheduled = false;
          if (this.urgent.length + this.queue.length > 0) this.schedule();
        });
    });
  }

  /**
   * A group's transaction. When the WAL's fsync can run off the event loop (db/wal-sync.ts), the
   * connection commits without it (`synchronous = NORMAL`, which SQLite refuses to change inside
   * a transaction, so around it: Kysely runs nothing else on the connection meanwhile), and FULL
   * again after, for writes outside group commits.
   */
  private async commitGroup(conn: Tx): Promise<void> {
    const walSync = this.db.walSync?.ready ? this.db.walSync : undefined;
    if (!walSync) return this.runGroup(conn, undefined);
    this.statements.run('syncNormal');
    try {
      await this.runGroup(conn, walSync);
    } finally {
      this.statements.run('syncFull');
    }
  }

  /** After a failure SQLite may have rolled back already; a second rollback's error says nothing new. */
  private rollbackQuietly(): void {
    try {
      this.statements.run('rollback');
    } catch {
      // no transaction left to roll back
    }
  }

  private async runGroup(conn: Tx, walSync: WalSync | undefined): Promise<void> {
    const others = this.queue.splice(0, MAX_GROUP);
    let othersRun = 0;
    let cut = false;
    // Urgent jobs first, those waiting and those that arrive while the group runs; then the
    // others, unless urgent ones joined and a few others ran already (so a steady stream of
    // urgent jobs cannot starve the rest): then the group commits now and the others wait.
    const next = (): Job | undefined => {
      if (this.urgent.length > 0) {
        if (othersRun > 0) cut = true;
        return this.urgent.shift();
      }
      if (cut && othersRun >= MIN_OTHERS) return undefined;
      othersRun++;
      return others.shift();
    };
    const succeeded: { job: Job; result: unknown }[] = [];
    try {
      this.statements.run('begin');
    } catch (err) {
      for (const job of [...this.urgent.splice(0), ...others]) job.reject(err);
      return;
    }
    for (let job = next(); job; job = next()) {
      this.statements.run('savepoint');
      try {
        const result = await job.fn(conn);
        this.statements.run('release');
        succeeded.push({ job, result });
      } catch (err) {
        try {
          this.statements.run('rollbackToSavepoint');
          this.statements.run('release');
        } catch {
          // SQLite rolled the whole transaction back (I/O error, out of memory): the group is lost.
          this.rollbackQuietly();
          job.reject(err);
          for (const done of succeeded) done.job.reject(err);
          // Those not run yet go first in the next group.
          this.queue.unshift(...others);
          return;
        }
        job.reject(err);
      }
    }
    this.queue.unshift(...others);
    // The commit writes the group's frames to the WAL; its fsync runs off the event loop
    // (db/wal-sync.ts), and the next group may run meanwhile. No `disk` write is answered before it.
    try {
      this.statements.run('commit');
    } catch (err) {
      this.rollbackQuietly();
      for (const done of succeeded) done.job.reject(err);
      return;
    }
    if (!walSync) {
      for (const done of succeeded) done.job.resolve(done.result);
      return;
    }
    // Only `disk` writes ask for a sync. A `wal` write is answered once the syncs asked for by
    // its own group and those before are over: what it read may rest on such a commit (a claim
    // of a send whose trigger shares its group), and must not act before that is on disk.
    const disk = succeeded.filter((done) => done.job.durability === 'disk');
    const wal = succeeded.filter((done) => done.job.durability === 'wal');
    if (disk.length > 0)
      walSync.sync().then(
        () => {
          for (const done of disk) done.job.resolve(done.result);
        },
        // Committed, but not known to be on disk: nobody was acknowledged, as with a failed commit.
        (err: unknown) => {
          for (const done of disk) done.job.reject(err);
        },
      );
    // Asked after this group's own sync, if any: settled() covers it too.
    if (wal.length > 0)
      void walSync.settled().then(() => {
        for (const done of wal) done.job.resolve(done.result);
      });
  }
}

const groups = new WeakMap<Db, CommitGroup>();

function commitGroupOf(db: Db): CommitGroup {
  let group = groups.get(db);
  if (!group) {
    group = new CommitGroup(db);
    groups.set(db, group);
  }
  return group;
}

/** True for a unique or primary-key violation on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * Runs a transaction again when it lost a race on a unique constraint (two concurrent creates
 * of the same new contact): the retry sees the winner's row and takes the update path.
 */
export async function withUniqueRetry<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isUniqueViolation(err)) throw err;
    }
  }
}
