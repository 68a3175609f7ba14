import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { inTransaction } from '../../src/db/transaction.js';

/**
 * SQLite's group commit (db/transaction.ts): transactions requested in the same turn share one
 * commit, yet each behaves as its own. Always on SQLite, whatever DATABASE_URL says.
 */
let dataDir: string;
let db: Db;
let observer: SqliteDatabase.Database;
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'herald-group-commit-'));
  db = await openDatabase({ dataDir, databaseUrl: undefined });
  await sql`create table notes (text text not null)`.execute(db.kysely);
  // A second connection to the same file sees only what has been committed.
  observer = new SqliteDatabase(join(dataDir, 'herald.db'), { readonly: true });
});
after(async () => {
  observer.close();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const committed = () => (observer.prepare('select text from notes order by text').all() as { text: string }[]).map((r) => r.text);
const insert = (text: string) => (tx: Db['kysely']) => sql`insert into notes (text) values (${text})`.execute(tx);

test('transactions requested together share one commit; one that throws is rolled back alone', async () => {
  const seenByThird: string[][] = [];
  const results = await Promise.allSettled([
    inTransaction(db, async (tx) => {
      await insert('a')(tx);
      return 'first';
    }),
    inTransaction(db, async (tx) => {
      await insert('b')(tx);
      throw new Error('second fails');
    }),
    inTransaction(db, async (tx) => {
      await insert('c')(tx);
      // The first ran already, in this same transaction: not committed yet.
      seenByThird.push(committed());
      return 'third';
    }),
  ]);
  assert.deepEqual(seenByThird, [[]], 'nothing committed while the group runs');
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.equal((results[0] as PromiseFulfilledResult<string>).value, 'first');
  assert.equal((results[1] as PromiseRejectedResult).reason.message, 'second fails');
  assert.equal((results[2] as PromiseFulfilledResult<string>).value, 'third');
  assert.deepEqual(committed(), ['a', 'c'], 'the failed one left nothing, the others committed');
});

test('a caller is answered only once its write is committed', async () => {
  const pending = inTransaction(db, insert('d'));
  assert.ok(!committed().includes('d'));
  await pending;
  assert.ok(committed().includes('d'));
});

test('a later request starts a group of its own', async () => {
  await inTransaction(db, insert('e'));
  const seen = await inTransaction(db, async (tx) => {
    await insert('f')(tx);
    return committed();
  });
  assert.ok(seen.includes('e') && !seen.includes('f'));
});
