import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { MAX_GROUPS_IN_FLIGHT } from '../../src/db/postgres-group-commit.js';
import { uniq } from '../helpers/factories.js';

/**
 * Group commit on PostgreSQL (src/db/postgres-group-commit.ts): statements run outside a transaction
 * through db.grouped that arrive while groups are in flight go out together and commit as one
 * transaction. Here the groups in flight are held by slow statements, so what arrives meanwhile
 * forms one group, deterministically.
 */
const url = process.env.DATABASE_URL;
const skip = url ? false : 'PostgreSQL only (DATABASE_URL)';

describe('group commit on PostgreSQL', { skip }, () => {
  let dataDir: string;
  let db: Db;
  const table = uniq('grouped_');
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-group-'));
    // Room for a transaction holding a lock, a group waiting for it and the group after it.
    db = await openDatabase({ dataDir, databaseUrl: url }, { poolSize: 4 });
    await sql`create table ${sql.id(table)} (a integer primary key)`.execute(db.kysely);
  });
  after(async () => {
    await sql`drop table if exists ${sql.id(table)}`.execute(db.kysely);
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const insert = (a: number) =>
    sql<{ a: number; xid: string }>`insert into ${sql.id(table)} (a) values (${a}) returning a, txid_current()::text as xid`.execute(
      db.grouped,
    );
  const stored = async (...values: number[]) => {
    const { rows } = await sql<{ a: number }>`select a from ${sql.id(table)} where a = any(${values}) order by a`.execute(db.kysely);
    return rows.map((r) => r.a);
  };

  /** Runs `arrive` while every group slot is held by a statement sleeping `seconds`. */
  async function whileSlotsHeld<T>(arrive: () => Promise<T>, seconds = 0.3): Promise<T> {
    const holders = Array.from({ length: MAX_GROUPS_IN_FLIGHT }, () => sql`select pg_sleep(${seconds})`.execute(db.grouped));
    const arrived = arrive();
    await Promise.all(holders);
    return arrived;
  }

  test('statements that arrive while groups are in flight commit together, each with its own result', async () => {
    const before = { ...db.groupCommit!.counts };
    const results = await whileSlotsHeld(() => Promise.all([1, 2, 3, 4, 5].map(insert)));
    assert.deepEqual(
      results.map((r) => r.rows[0]!.a),
      [1, 2, 3, 4, 5],
    );
    assert.equal(new Set(results.map((r) => r.rows[0]!.xid)).size, 1, 'one transaction');
    assert.deepEqual(
      results.map((r) => r.numAffectedRows),
      [1n, 1n, 1n, 1n, 1n],
    );
    assert.equal(db.groupCommit!.counts.groups, before.groups + 1);
    assert.equal(db.groupCommit!.counts.grouped, before.grouped + 5);
    assert.deepEqual(await stored(1, 2, 3, 4, 5), [1, 2, 3, 4, 5]);
  });

  test('a statement the server refuses rolls its group back, and each statement then runs alone', async () => {
    await insert(20);
    const before = { ...db.groupCommit!.counts };
    const [first, taken, third] = await whileSlotsHeld(() => Promise.allSettled([insert(21), insert(20), insert(23)]));
    assert.equal(taken.status, 'rejected');
    assert.equal((taken as PromiseRejectedResult).reason.code, '23505', 'the refused statement gets its own error');
    assert.equal(first.status, 'fulfilled');
    assert.equal(third.status, 'fulfilled');
    const xids = [first, third].map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof insert>>>).value.rows[0]!.xid);
    assert.notEqual(xids[0], xids[1], 'each ran again in a transaction of its own');
    assert.equal(db.groupCommit!.counts.rolledBack, before.rolledBack + 1);
    assert.deepEqual(await stored(20, 21, 23), [20, 21, 23]);
  });

  test('a lost connection fails every statement of its group, and none of them runs again', async () => {
    const marker = uniq('lost_');
    // The marker in the text, where pg_stat_activity shows it (a parameter it does not).
    const sleeper = () => sql`select pg_sleep(5), '${sql.raw(marker)}'::text`.execute(db.grouped);
    const group = whileSlotsHeld(() => Promise.allSettled([insert(30), sleeper()]));
    // The group's server process, once it is running the sleep (after the insert), is terminated.
    const terminator = await openDatabase({ dataDir, databaseUrl: url }, { poolSize: 1 });
    try {
      for (let i = 0; i < 100; i++) {
        const { rows } = await sql<{ ended: boolean }>`select pg_terminate_backend(pid) as ended from pg_stat_activity
          where query like ${`%${marker}%`} and query not like '%pg_stat_activity%' and state = 'active'`.execute(terminator.kysely);
        if (rows.some((r) => r.ended)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await terminator.close();
    }
    const [inserted, slept] = await group;
    assert.equal(inserted.status, 'rejected');
    assert.equal(slept.status, 'rejected');
    assert.deepEqual(await stored(30), [], 'the group never committed, and was not run again');
  });

  test('a text that is prepared on its first connection is parsed once in a group on another', async () => {
    const text = sql<{ a: number }>`select a from ${sql.id(table)} where a = ${1}`;
    // Seen twice: named (prepared-statements.ts), prepared on the connection of the second run.
    for (let i = 0; i < 2; i++) await text.execute(db.grouped);
    const results = await whileSlotsHeld(() => Promise.all([1, 2, 3].map(() => text.execute(db.grouped))));
    assert.deepEqual(
      results.map((r) => r.rows),
      [[{ a: 1 }], [{ a: 1 }], [{ a: 1 }]],
    );
  });

  test('a group waiting for a row lock does not hold back the statements after it', async () => {
    await insert(40);
    let committed = false;
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = db.kysely.transaction().execute(async (tx) => {
      await sql`update ${sql.id(table)} set a = a where a = 40`.execute(tx);
      locked();
      await sql`select pg_sleep(1)`.execute(tx);
    });
    void holder.then(() => {
      committed = true;
    });
    await lockTaken;
    const waiting = sql`update ${sql.id(table)} set a = a where a = 40`.execute(db.grouped);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await insert(41);
    assert.equal(committed, false, 'the insert was answered while the lock was still held');
    await Promise.all([holder, waiting]);
    assert.deepEqual(await stored(40, 41), [40, 41]);
  });

  test('a transaction cannot begin on the group commit', async () => {
    await assert.rejects(
      db.grouped.transaction().execute(async () => undefined),
      /a transaction cannot run in a group commit/,
    );
  });
});
