import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { inPriorityTransaction, inTransaction } from '../../src/db/transaction.js';
import { uniq } from '../helpers/factories.js';

/**
 * Priority transactions (a delivered send's outcome, lease renewals) do not wait behind
 * others: on SQLite they jump the commit queue, on PostgreSQL they have a connection of their own.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dataDir: string;
let sqlite: Db;
let observer: SqliteDatabase.Database;
let engineDb: Db;
const table = uniq('notes_');
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'herald-priority-'));
  sqlite = await openDatabase({ dataDir, databaseUrl: undefined });
  await sql`create table notes (text text not null)`.execute(sqlite.kysely);
  observer = new SqliteDatabase(join(dataDir, 'herald.db'), { readonly: true });
  // The configured engine, with a pool of one connection (PostgreSQL) to make it scarce.
  engineDb = process.env.DATABASE_URL ? await openDatabase({ dataDir, databaseUrl: process.env.DATABASE_URL }, { poolSize: 1 }) : sqlite;
  await sql`create table ${sql.id(table)} (text text not null)`.execute(engineDb.kysely);
});
after(async () => {
  await sql`drop table ${sql.id(table)}`.execute(engineDb.kysely);
  if (engineDb !== sqlite) await engineDb.close();
  observer.close();
  await sqlite.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const committed = () => (observer.prepare('select text from notes').all() as { text: string }[]).map((r) => r.text);

test('SQLite: a priority transaction requested while a long group runs commits before the rest of that group', async () => {
  const slow = Array.from({ length: 20 }, (_, i) =>
    inTransaction(sqlite, async (tx) => {
      await sleep(5);
      await sql`insert into notes (text) values (${`slow-${i}`})`.execute(tx);
    }),
  );
  // The group of twenty is running (one has started, or a few).
  await sleep(12);
  let seenWhenUrgentDone: string[] = [];
  await inPriorityTransaction(sqlite, (tx) => sql`insert into notes (text) values ('urgent')`.execute(tx)).then(
    () => (seenWhenUrgentDone = committed()),
  );
  await Promise.all(slow);
  assert.ok(seenWhenUrgentDone.includes('urgent'), 'committed when its caller is answered');
  assert.ok(!seenWhenUrgentDone.includes('slow-19'), `did not wait for the whole group: ${seenWhenUrgentDone.length - 1} of 20 ahead`);
  assert.equal(committed().length, 21, 'the rest of the group committed after it');
});

test('concurrent priority transactions: one that throws is rolled back alone, the others commit', async () => {
  const insert = (text: string) => (tx: Db['kysely']) => sql`insert into ${sql.id(table)} (text) values (${text})`.execute(tx);
  const results = await Promise.allSettled([
    inPriorityTransaction(engineDb, insert('p1')),
    inPriorityTransaction(engineDb, async (tx) => {
      await insert('p2')(tx);
      // A failed statement: on PostgreSQL it aborts the transaction, the savepoint saves the rest.
      await sql`select * from no_such_table`.execute(tx);
    }),
    inPriorityTransaction(engineDb, insert('p3')),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const rows = await sql<{ text: string }>`select text from ${sql.id(table)} order by text`.execute(engineDb.kysely);
  assert.deepEqual(
    rows.rows.map((r) => r.text),
    ['p1', 'p3'],
  );
});

test('PostgreSQL: a priority transaction does not wait for a pool connection held by others', {
  skip: !process.env.DATABASE_URL && 'PostgreSQL only',
}, async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The pool's only connection is busy until the gate opens.
  const holder = inTransaction(engineDb, async () => gate);
  await sleep(20);
  const outcome = await Promise.race([
    inPriorityTransaction(engineDb, (tx) => sql`insert into ${sql.id(table)} (text) values ('while-busy')`.execute(tx)).then(
      () => 'committed',
    ),
    sleep(5_000).then(() => 'still waiting'),
  ]);
  release();
  await holder;
  assert.equal(outcome, 'committed');
});
