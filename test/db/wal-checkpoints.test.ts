import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { inTransaction } from '../../src/db/transaction.js';

/**
 * SQLite WAL checkpoints on a thread of their own (db/wal-checkpoints.ts): the main connection
 * no longer checkpoints, the thread copies committed pages into the database file, and
 * everything committed is there after a reopen. Always on SQLite.
 */
let dataDir: string;
let db: Db;
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'herald-wal-checkpoints-'));
  db = await openDatabase({ dataDir, databaseUrl: undefined }, { checkpointThread: true });
  await sql`create table notes (text text not null)`.execute(db.kysely);
});
after(async () => {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const pragma = async (name: string) => Object.values((await sql.raw(`pragma ${name}`).execute(db.kysely)).rows[0] as object)[0];

test('the main connection leaves checkpoints to the thread, which copies the WAL into the database file', async () => {
  assert.equal(await pragma('wal_autocheckpoint'), 0);
  const file = join(dataDir, 'herald.db');
  const before = statSync(file).size;
  // About 2 MB of rows, in 50 commits: far more pages than the database file holds now.
  for (let i = 0; i < 50; i++) {
    await inTransaction(db, (tx) =>
      sql`insert into notes (text) select ${'x'.repeat(400)} from (select 1 union all select 2 union all select 3 union all select 4 union all select 5) a, (select 1 union all select 2 union all select 3 union all select 4 union all select 5) b, (select 1 union all select 2 union all select 3 union all select 4) c`.execute(
        tx,
      ),
    );
  }
  const deadline = Date.now() + 5_000;
  while (statSync(file).size <= before + 1_000_000 && Date.now() < deadline) await sleep(50);
  assert.ok(statSync(file).size > before + 1_000_000, `the database file grew from ${before} to ${statSync(file).size} bytes`);
});

test('closing stops the thread, and everything committed is there after a reopen', async () => {
  await inTransaction(db, (tx) => sql`insert into notes (text) values ('last')`.execute(tx));
  await db.close();
  db = await openDatabase({ dataDir, databaseUrl: undefined });
  const { rows } = await sql<{ n: number }>`select count(*) as n from notes`.execute(db.kysely);
  assert.equal(rows[0]!.n, 50 * 100 + 1);
  assert.equal(await pragma('wal_autocheckpoint'), 1000, 'without the option, SQLite checkpoints by itself');
});
