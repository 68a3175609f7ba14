import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { type Db, openDatabase, WAL_AUTOCHECKPOINT_PAGES } from '../../src/db/connect.js';
import { inPriorityTransaction, inTransaction } from '../../src/db/transaction.js';

/**
 * SQLite group commits leave the WAL's fsync to db/wal-sync.ts (off the event loop): a caller is
 * answered only once a sync that began after its commit has finished, every other write keeps
 * synchronous = FULL, and nothing committed that way is missing after a reopen. Always on SQLite.
 */
let dataDir: string;
let db: Db;
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'herald-wal-sync-'));
  db = await openDatabase({ dataDir, databaseUrl: undefined });
  await sql`create table notes (text text not null)`.execute(db.kysely);
});
after(async () => {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const insert = (text: string) => (tx: Db['kysely']) => sql`insert into notes (text) values (${text})`.execute(tx);
const synchronous = async () => (await sql<{ synchronous: number }>`pragma synchronous`.execute(db.kysely)).rows[0]!.synchronous;

test('the WAL file is open for syncing, and the connection stays FULL outside group commits', async () => {
  assert.equal(db.walSync?.ready, true);
  await inTransaction(db, insert('x'));
  assert.equal(await synchronous(), 2, 'FULL between groups');
});

test('a group is answered only after a WAL sync asked for after its commit has finished', async () => {
  const walSync = db.walSync!;
  const original = walSync.sync.bind(walSync);
  const events: string[] = [];
  walSync.sync = () => {
    events.push('sync asked');
    return original().then(() => {
      events.push('synced');
    });
  };
  try {
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        inTransaction(db, insert(`g${i}`)).then(() => {
          events.push('answered');
        }),
      ),
    );
  } finally {
    walSync.sync = original;
  }
  // Ten transactions of one turn: one commit, one sync, then the ten answers.
  assert.deepEqual(events, ['sync asked', 'synced', ...Array(10).fill('answered')]);
});

/** Runs fn with the WAL's sync wrapped to log when it is asked for and when it is over. */
async function withSyncLog(events: string[], fn: () => Promise<unknown>): Promise<void> {
  const walSync = db.walSync!;
  const original = walSync.sync.bind(walSync);
  walSync.sync = () => {
    events.push('sync asked');
    return original().then(() => {
      events.push('synced');
    });
  };
  try {
    await fn();
  } finally {
    walSync.sync = original;
  }
}

test("a group of 'wal' writes only (the send queue's) asks for no sync, and each is committed when answered", async () => {
  const events: string[] = [];
  await withSyncLog(events, () =>
    Promise.all([
      inTransaction(db, insert('w1'), 'wal').then(() => events.push('answered')),
      inPriorityTransaction(db, insert('w2'), 'wal').then(() => events.push('answered')),
    ]),
  );
  assert.deepEqual(events, ['answered', 'answered']);
  // Committed: another connection to the file sees both.
  const other = new SqliteDatabase(join(dataDir, 'herald.db'), { readonly: true });
  try {
    assert.equal((other.prepare("select count(*) as n from notes where text in ('w1', 'w2')").get() as { n: number }).n, 2);
  } finally {
    other.close();
  }
});

test("a 'wal' write in a group with a 'disk' write is answered after that group's sync (what it read may rest on it)", async () => {
  const events: string[] = [];
  await withSyncLog(events, () =>
    Promise.all([
      inTransaction(db, insert('d1')).then(() => events.push('disk answered')),
      inTransaction(db, insert('w3'), 'wal').then(() => events.push('wal answered')),
    ]),
  );
  assert.deepEqual(events, ['sync asked', 'synced', 'disk answered', 'wal answered']);
});

test("a 'wal' write waits for a sync asked for by an earlier group that is still under way", async () => {
  const events: string[] = [];
  await withSyncLog(events, async () => {
    const disk = inTransaction(db, insert('d2')).then(() => events.push('disk answered'));
    // The next turn: its own group, committed while the first group's sync may still run.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const wal = inTransaction(db, insert('w4'), 'wal').then(() => events.push('wal answered'));
    await Promise.all([disk, wal]);
  });
  assert.equal(events.filter((e) => e === 'sync asked').length, 1, 'the wal group asks for none');
  assert.ok(events.indexOf('wal answered') > events.indexOf('synced'), events.join(', '));
});

test('transactions over many turns, with syncs under way, all commit and are there after a reopen', async () => {
  const writes: Promise<unknown>[] = [];
  for (let turn = 0; turn < 30; turn++) {
    for (let i = 0; i < 10; i++) {
      const write = i % 3 === 0 ? inPriorityTransaction : inTransaction;
      writes.push(write(db, insert(`t${turn}-${i}`)));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(writes);
  await db.close();
  db = await openDatabase({ dataDir, databaseUrl: undefined });
  const { rows } = await sql<{ n: number }>`select count(*) as n from notes where text like 't%'`.execute(db.kysely);
  assert.equal(rows[0]!.n, 300);
});

/**
 * The WAL-index header in the -shm file (sqlite.org/walformat.html; native byte order, little-endian
 * on the machines Herald runs on): mxFrame, the frames the WAL holds (offset 16), and nBackfill,
 * those a checkpoint has copied into the database (offset 96).
 */
function walIndex(): { frames: number; backfilled: number } {
  const shm = readFileSync(join(dataDir, 'herald.db-shm'));
  return { frames: shm.readUInt32LE(16), backfilled: shm.readUInt32LE(96) };
}

test("a group commit larger than SQLite's default checkpoint mark (1,000 pages) carries no checkpoint", async () => {
  const pages = async () => (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely)).rows[0]!;
  assert.equal((await pages()).wal_autocheckpoint, WAL_AUTOCHECKPOINT_PAGES);
  const before = walIndex();
  // About 1,500 pages in one transaction, as ten batches of 100 events write in one group commit.
  await inTransaction(db, (tx) =>
    sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 1500)
        insert into notes (text) select 'big' || hex(randomblob(1800)) from n`.execute(tx),
  );
  const after = walIndex();
  assert.ok(
    after.frames - before.frames >= 1500 || after.frames >= 1500,
    `the commit wrote its pages to the WAL (${JSON.stringify({ before, after })})`,
  );
  assert.equal(after.backfilled, before.backfilled, 'no checkpoint ran inside that commit');
});
