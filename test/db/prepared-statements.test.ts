import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { inPipelinedTransaction } from '../../src/db/pipeline.js';
import { inTransaction } from '../../src/db/transaction.js';
import { uniq } from '../helpers/factories.js';

/**
 * On PostgreSQL a statement text that runs again is prepared once per connection
 * (src/db/prepared-statements.ts): the server plans Herald's write statements once instead of
 * on every call. A pool of one connection makes "this connection" every statement's.
 */
const url = process.env.DATABASE_URL;
const skip = url ? false : 'PostgreSQL only (DATABASE_URL)';

describe('prepared statements on PostgreSQL', { skip }, () => {
  let dataDir: string;
  let db: Db;
  let other: Db;
  const table = uniq('prepared_');
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-prepared-'));
    db = await openDatabase({ dataDir, databaseUrl: url }, { poolSize: 1 });
    other = await openDatabase({ dataDir, databaseUrl: url, databasePreparedStatements: false }, { poolSize: 1 });
    await sql`create table ${sql.id(table)} (a integer not null)`.execute(db.kysely);
    await sql`insert into ${sql.id(table)} (a) values (1), (2)`.execute(db.kysely);
  });
  after(async () => {
    await sql`drop table if exists ${sql.id(table)}`.execute(db.kysely);
    await Promise.all([db.close(), other.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The statements prepared on the pool's one connection, by their text. */
  const preparedOn = async (on: Db) => {
    const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(on.kysely);
    return rows;
  };
  const selectAll = (on: Db, a: number) => sql<Record<string, number>>`select * from ${sql.id(table)} where a = ${a}`.execute(on.kysely);
  const textOf =
    (marker: string) =>
    <T extends { statement: string }>(rows: T[]) =>
      rows.filter((r) => r.statement.includes(marker));

  test('a statement that runs again is prepared under a name; one that ran once is not', async () => {
    const once = uniq('once_');
    await sql`select ${once}::text as once_marker_${sql.raw(once)}`.execute(db.kysely);
    for (let i = 0; i < 3; i++) assert.deepEqual((await selectAll(db, 1)).rows, [{ a: 1 }]);
    const prepared = await preparedOn(db);
    const mine = textOf(table)(prepared);
    assert.equal(mine.length, 1, 'the repeated select is prepared once');
    assert.match(mine[0]!.name, /^herald_\d+_\d+$/);
    assert.equal(textOf(`once_marker_${once}`)(prepared).length, 0, 'a text seen once stays unnamed');
  });

  test('a named statement is described on its first run on a connection only, and later runs read the same rows', async () => {
    const connection = pg.Connection.prototype as unknown as { describe(msg: unknown): void };
    const describe = connection.describe;
    let describes = 0;
    connection.describe = function (this: unknown, msg: unknown) {
      describes++;
      return describe.call(this, msg);
    };
    try {
      const marker = uniq('described_');
      const read = (a: number) =>
        sql<Record<string, unknown>>`select a, a::int8 * 2 as big, null::text as none, ${marker}::text as marker, now() as at
          from ${sql.id(table)} where a = ${a}`.execute(db.kysely);
      const runs = [];
      for (let i = 0; i < 5; i++) runs.push((await read(1 + (i % 2))).rows);
      assert.equal(describes, 2, 'unnamed on the first run, described when named, then no more');
      for (const [i, rows] of runs.entries()) {
        const a = 1 + (i % 2);
        assert.equal(rows.length, 1);
        assert.deepEqual(Object.keys(rows[0]!), ['a', 'big', 'none', 'marker', 'at']);
        assert.deepEqual({ ...rows[0], at: undefined }, { a, big: a * 2, none: null, marker, at: undefined });
        assert.ok(rows[0]!.at instanceof Date, 'parsed with the type parser of its column');
      }
      // A statement without result rows, and one whose parameter cannot be written, on a
      // described statement: the error, then the statement runs on as before.
      const insert = (a: unknown) => sql`insert into ${sql.id(table)} (a) select ${a}::int where false`.execute(db.kysely);
      for (let i = 0; i < 4; i++) assert.equal((await insert(i)).numAffectedRows, 0n);
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      await assert.rejects(read(circular as unknown as number), /circular/i);
      assert.deepEqual(
        (await read(2)).rows.map((r) => r.big),
        [4],
      );
      assert.equal((await insert(1)).numAffectedRows, 0n);
    } finally {
      connection.describe = describe;
    }
  });

  test('DATABASE_PREPARED_STATEMENTS=false keeps every statement unnamed', async () => {
    for (let i = 0; i < 3; i++) await selectAll(other, 2);
    assert.equal(textOf(table)(await preparedOn(other)).length, 0);
    assert.equal(loadConfig({ DATA_DIR: dataDir, HERALD_SECRET: 'x'.repeat(32) }).databasePreparedStatements, true);
    assert.equal(
      loadConfig({ DATA_DIR: dataDir, HERALD_SECRET: 'x'.repeat(32), DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements,
      false,
    );
    assert.throws(
      () => loadConfig({ DATA_DIR: dataDir, HERALD_SECRET: 'x'.repeat(32), DATABASE_PREPARED_STATEMENTS: 'off' }),
      /DATABASE_PREPARED_STATEMENTS must be true or false, got 'off'/,
    );
  });

  test('after a migration changes a table under it, a prepared statement runs again (alone) or fails its transaction once', async () => {
    for (let i = 0; i < 3; i++) await selectAll(db, 1);
    // Another process migrates: the prepared "select *" would now return another row type.
    await sql`alter table ${sql.id(table)} add column b integer not null default 7`.execute(other.kysely);
    assert.deepEqual((await selectAll(db, 1)).rows, [{ a: 1, b: 7 }], 'alone: run again unnamed, nothing lost');
    for (let i = 0; i < 3; i++) assert.deepEqual((await selectAll(db, 2)).rows, [{ a: 2, b: 7 }], 'named afresh');
    await sql`alter table ${sql.id(table)} add column c integer not null default 8`.execute(other.kysely);
    await assert.rejects(
      inTransaction(db, (tx) => sql`select * from ${sql.id(table)} where a = ${1}`.execute(tx)),
      /cached plan must not change result type/,
      'inside a transaction the statement cannot run again: the transaction fails',
    );
    const again = await inTransaction(db, (tx) => sql<Record<string, number>>`select * from ${sql.id(table)} where a = ${1}`.execute(tx));
    assert.deepEqual(again.rows, [{ a: 1, b: 7, c: 8 }], 'the next transaction gets fresh names');
  });

  test('a described statement prepared afresh with other columns under its name (as a pooler does) runs again', async () => {
    const fresh = uniq('refreshed_');
    await sql`create table ${sql.id(fresh)} (a integer not null)`.execute(db.kysely);
    try {
      await sql`insert into ${sql.id(fresh)} (a) values (1)`.execute(db.kysely);
      const read = () => sql<Record<string, number>>`select * from ${sql.id(fresh)} where a = ${1}`.execute(db.kysely);
      for (let i = 0; i < 3; i++) assert.deepEqual((await read()).rows, [{ a: 1 }]);
      const [named] = textOf(fresh)(await preparedOn(db));
      assert.ok(named);
      // What a server connection opened after a migration holds under the client's name: the
      // same text prepared on the new table, without PostgreSQL's "cached plan" error.
      await sql`alter table ${sql.id(fresh)} add column b integer not null default 7`.execute(other.kysely);
      await sql.raw(`deallocate ${named.name}; prepare ${named.name}(integer) as ${named.statement}`).execute(db.kysely);
      assert.deepEqual((await read()).rows, [{ a: 1, b: 7 }], 'not read with the old columns: run again unnamed');
      for (let i = 0; i < 3; i++) assert.deepEqual((await read()).rows, [{ a: 1, b: 7 }], 'named afresh');
    } finally {
      await sql`drop table ${sql.id(fresh)}`.execute(db.kysely);
    }
  });

  test('a pipeline that meets a plan gone stale starts the names afresh: its statements run again after the rollback', async () => {
    const piped = uniq('piped_');
    await sql`create table ${sql.id(piped)} (a integer not null)`.execute(db.kysely);
    try {
      await sql`insert into ${sql.id(piped)} (a) values (1)`.execute(db.kysely);
      const read = sql<Record<string, number>>`select * from ${sql.id(piped)} where a = ${1}`;
      for (let i = 0; i < 3; i++) await read.execute(db.kysely);
      assert.ok(textOf(piped)(await preparedOn(db)).length > 0, 'named');
      await sql`alter table ${sql.id(piped)} add column b integer not null default 7`.execute(other.kysely);
      const rows = await inPipelinedTransaction(db, async (tx, pipeline) => {
        await sql.raw('savepoint piped').execute(tx);
        await assert.rejects(pipeline([read.compile(tx)]), /cached plan must not change result type/);
        await sql.raw('rollback to piped').execute(tx);
        return (await pipeline([read.compile(tx)]))[0]!.rows;
      });
      assert.deepEqual(rows, [{ a: 1, b: 7 }]);
    } finally {
      await sql`drop table ${sql.id(piped)}`.execute(db.kysely);
    }
  });
});
