import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { applyEachInTransaction } from '../../src/db/item-transactions.js';
import { controlLater, QueuedStatementFailed, rollbackToSavepoint, takeBack, writeLater } from '../../src/db/pg-transaction.js';
import { inReadTransaction, inTransaction, type Tx } from '../../src/db/transaction.js';
import { uniq } from '../helpers/factories.js';
import { eachStatement, recordStatements, type StatementRecorder } from '../helpers/statements.js';

/**
 * PostgreSQL transactions write what nobody waits on with the next statement
 * (src/db/pg-transaction.ts): BEGIN with the first statement, a savepoint's SAVEPOINT and
 * RELEASE with the statements around them, a writeLater with the COMMIT. Each behaves as if
 * sent alone. A pool of one connection: a connection left in a wrong state fails the next test.
 */
const url = process.env.DATABASE_URL;

describe('PostgreSQL transactions: what nobody waits on goes with the next statement', {
  skip: !url && 'PostgreSQL only (DATABASE_URL)',
}, () => {
  let dataDir: string;
  let db: Db;
  let recorder: StatementRecorder;
  const table = uniq('deferred_');
  const insert = (tx: Tx, a: number) => sql`insert into ${sql.id(table)} (a) values (${a})`.execute(tx);
  const stored = async () => (await sql<{ a: number }>`select a from ${sql.id(table)} order by a`.execute(db.kysely)).rows.map((r) => r.a);

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-deferred-'));
    db = await openDatabase({ dataDir, databaseUrl: url }, { poolSize: 1 });
    await sql`create table ${sql.id(table)} (a integer primary key check (a < 100))`.execute(db.kysely);
    recorder = recordStatements();
  });
  after(async () => {
    recorder.restore();
    await sql`drop table if exists ${sql.id(table)}`.execute(db.kysely);
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('BEGIN goes with the first statement, COMMIT alone: two round trips for a one-statement transaction', async () => {
    const { statements } = await recorder.during(() => inTransaction(db, (tx) => insert(tx, 1)));
    assert.equal(statements.length, 2, statements.join('\n'));
    assert.deepEqual(
      eachStatement(statements).map((text) => text.trim().split(/\s/)[0]),
      ['begin', 'insert', 'commit'],
    );
    assert.deepEqual(await stored(), [1]);
  });

  test('a transaction that writes nothing sends nothing', async () => {
    const { result, statements } = await recorder.during(() => inTransaction(db, async () => 'nothing'));
    assert.equal(result, 'nothing');
    assert.deepEqual(statements, []);
    const failed = await recorder.during(() =>
      inTransaction(db, async () => {
        throw new Error('refused before any statement');
      }).catch((err: Error) => err.message),
    );
    assert.equal(failed.result, 'refused before any statement');
    assert.deepEqual(failed.statements, []);
  });

  test('a read transaction: its REPEATABLE READ BEGIN goes with its first read', async () => {
    const { result, statements } = await recorder.during(() =>
      inReadTransaction(
        db,
        async (tx) => (await sql<{ n: number }>`select count(*)::int as n from ${sql.id(table)}`.execute(tx)).rows[0]!.n,
      ),
    );
    assert.equal(result, (await stored()).length);
    assert.equal(statements.length, 2, statements.join('\n'));
    assert.match(statements[0]!, /^pipeline of 2: begin isolation level repeatable read read only ;; select count/);
  });

  test('a writeLater goes with the COMMIT, and commits with the transaction', async () => {
    const { statements } = await recorder.during(() =>
      inTransaction(db, async (tx) => {
        await insert(tx, 2);
        await writeLater(tx, tx.insertInto(table as never).values({ a: 3 } as never));
      }),
    );
    assert.equal(statements.length, 2, statements.join('\n'));
    assert.match(statements[1]!, /^pipeline of 2: insert into .* ;; commit$/);
    assert.deepEqual(await stored(), [1, 2, 3]);
  });

  test('a transaction whose only write is a writeLater commits it: BEGIN, the write and COMMIT in one round trip', async () => {
    const { statements } = await recorder.during(() =>
      inTransaction(db, (tx) => writeLater(tx, tx.insertInto(table as never).values({ a: 9 } as never))),
    );
    assert.equal(statements.length, 1, statements.join('\n'));
    assert.match(statements[0]!, /^pipeline of 3: begin ;; insert into .* ;; commit$/);
    assert.ok((await stored()).includes(9));
    await sql`delete from ${sql.id(table)} where a = 9`.execute(db.kysely);
  });

  /** The error of a queued statement that failed, as the transaction's caller gets it. */
  const queuedFailure = (code: string) => (err: unknown) =>
    err instanceof QueuedStatementFailed && (err.cause as { code?: string }).code === code;

  test('a writeLater that fails fails the transaction: nothing of it commits, and the connection is rolled back for the next', async () => {
    await assert.rejects(
      inTransaction(db, async (tx) => {
        await insert(tx, 4);
        await writeLater(tx, tx.insertInto(table as never).values({ a: 1 } as never)); // a duplicate key
      }),
      queuedFailure('23505'),
    );
    assert.deepEqual(await stored(), [1, 2, 3]);
    // The one connection is usable: no transaction left open on it.
    await inTransaction(db, (tx) => insert(tx, 5));
    assert.deepEqual(await stored(), [1, 2, 3, 5]);
  });

  test('a writeLater that fails fails the transaction at the next statement: the error is the queued one, not that statement', async () => {
    await assert.rejects(
      inTransaction(db, async (tx) => {
        await writeLater(tx, tx.insertInto(table as never).values({ a: 200 } as never)); // the check refuses it
        await controlLater(tx, 'savepoint s');
        await insert(tx, 6);
      }),
      queuedFailure('23514'),
    );
    assert.deepEqual(await stored(), [1, 2, 3, 5]);
    assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(db.kysely)).rows, [{ one: 1 }]);
  });

  test('a transaction that throws with a failing write still queued: ROLLBACK goes alone, the connection comes back clean', async () => {
    await assert.rejects(
      inTransaction(db, async (tx) => {
        await insert(tx, 50);
        await writeLater(tx, tx.insertInto(table as never).values({ a: 1 } as never)); // would fail: a duplicate key
        throw new Error('the caller gave up');
      }),
      /the caller gave up/,
    );
    // The pool's one connection: a plain statement and a transaction run on it at once.
    assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(db.kysely)).rows, [{ one: 1 }]);
    await inTransaction(db, (tx) => insert(tx, 51));
    assert.deepEqual(await stored(), [1, 2, 3, 5, 51]);
    await sql`delete from ${sql.id(table)} where a = 51`.execute(db.kysely);
  });

  test("a queued write that fails ahead of a batch's savepoint: the batch fails with that error, nothing of it stays", async () => {
    await assert.rejects(
      inTransaction(db, async (tx) => {
        await writeLater(tx, tx.insertInto(table as never).values({ a: 1 } as never)); // a duplicate key
        // The items' savepoint is queued behind it and never made: the items cannot be rolled back alone.
        return applyEachInTransaction(tx, [60, 61], (itemTx, a) => insert(itemTx, a));
      }),
      queuedFailure('23505'),
    );
    assert.deepEqual(await stored(), [1, 2, 3, 5]);
    await inTransaction(db, (tx) => insert(tx, 62));
    assert.ok((await stored()).includes(62), 'the connection is usable after');
    await sql`delete from ${sql.id(table)} where a = 62`.execute(db.kysely);
  });

  test('savepoints: one nothing ran in is never sent; one rolled back undoes only its part', async () => {
    const { statements } = await recorder.during(() =>
      inTransaction(db, async (tx) => {
        await controlLater(tx, 'savepoint s');
        assert.equal(takeBack(tx, 'savepoint s'), true);
        await insert(tx, 7);
        await controlLater(tx, 'savepoint s');
        await assert.rejects(insert(tx, 7), { code: '23505' });
        assert.equal(takeBack(tx, 'savepoint s'), false, 'it went out with the failed insert');
        await rollbackToSavepoint(tx, 's');
        await insert(tx, 8);
      }),
    );
    assert.deepEqual(
      eachStatement(statements).map((text) => text.trim().split(/\s+/).slice(0, 2).join(' ')),
      ['begin', 'insert into', 'savepoint s', 'insert into', 'rollback to', 'release s', 'insert into', 'commit'],
    );
    assert.equal(statements.length, 5, statements.join('\n'));
    assert.deepEqual(await stored(), [1, 2, 3, 5, 7, 8]);
  });
});
