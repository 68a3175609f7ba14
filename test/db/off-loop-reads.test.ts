import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { inReadTransaction, inTransaction } from '../../src/db/transaction.js';
import { exportedContacts } from '../../src/modules/contact-csv/contact-export.service.js';
import { countContacts, searchContacts } from '../../src/modules/contacts/contacts.admin.service.js';
import { makeContact, makeTenant } from '../helpers/factories.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';

/**
 * `db.reads` (db/off-loop-reads.ts): on SQLite, long reads run on reader threads with read-only
 * connections of their own, so a segment counted on a large account or the queue's depth for
 * /metrics no longer holds up every request and send for as long as it runs. On PostgreSQL it
 * is the pool itself.
 */
let t: TestDatabase;
before(async () => {
  t = await openTestDatabase();
});
after(() => t.close());

/** A statement that reads nothing from the tables and runs a few hundred milliseconds on SQLite. */
const LONG_READ = sql<{
  n: number;
}>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000) select count(*) as n from c`;

test('a read sees what is committed, as the writing connection does', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const read = (q: typeof t.db.kysely) => q.selectFrom('accounts').select(['id', 'name']).where('id', '=', tenant.accountId).execute();
  assert.deepEqual(await read(t.db.reads), await read(t.db.kysely));
  assert.equal((await read(t.db.reads)).length, 1);
});

test('SQLite: the event loop goes on while a long read runs', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('SQLite only (PostgreSQL reads never hold the loop)');
  await LONG_READ.execute(t.db.reads); // the threads are started and the statement prepared
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const started = performance.now();
  const { rows } = await LONG_READ.execute(t.db.reads);
  const took = performance.now() - started;
  clearInterval(timer);
  assert.equal(Number(rows[0]!.n), 2_000_000);
  // On the writing connection the read holds the loop: no timer fires until it is over.
  assert.ok(ticks >= 5, `${ticks} timer ticks in the ${took.toFixed(0)} ms the read took`);
});

test('SQLite: the reads run side by side, and a failing one answers its error alone', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('SQLite only');
  const results = await Promise.allSettled([
    LONG_READ.execute(t.db.reads),
    sql`select * from no_such_table`.execute(t.db.reads),
    LONG_READ.execute(t.db.reads),
  ]);
  assert.equal(results[0]!.status, 'fulfilled');
  assert.equal(results[2]!.status, 'fulfilled');
  assert.equal(results[1]!.status, 'rejected');
  assert.match(String((results[1] as PromiseRejectedResult).reason.message), /no such table: no_such_table/);
});

test('SQLite: a statement that writes is refused there and changes nothing', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('SQLite only (on PostgreSQL the reads are the pool)');
  const tenant = await makeTenant(t.db, t.config);
  await assert.rejects(
    sql`update accounts set name = 'changed' where id = ${tenant.accountId} returning id`.execute(t.db.reads),
    /readonly|read-only/i,
  );
  const row = await t.db.kysely.selectFrom('accounts').select('name').where('id', '=', tenant.accountId).executeTakeFirstOrThrow();
  assert.notEqual(row.name, 'changed');
  await assert.rejects(
    inTransaction(t.db, async () => undefined).then(() => t.db.reads.transaction().execute(async () => undefined)),
    /no transactions/,
  );
});

test('SQLite: closing the database fails the reads under way and refuses new ones', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('SQLite only');
  const own = await openTestDatabase();
  const underWay = assert.rejects(LONG_READ.execute(own.db.reads), /the database is closed/);
  await new Promise((resolve) => setTimeout(resolve, 20));
  await own.close();
  await underWay;
  await assert.rejects(sql`select 1`.execute(own.db.reads), /destroyed|closed/);
});

test('SQLite: the contact list, its count and its CSV export answer while the writing connection is held', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('SQLite only (on PostgreSQL the reads are the pool)');
  const tenant = await makeTenant(t.db, t.config);
  await makeContact(t.db, tenant.accountId, { email: 'held@example.com', name: 'Held Reader' });
  // The one writing connection, held by an open read transaction until `release`: a read on it
  // waits its turn; a read on db.reads does not.
  let release!: () => void;
  let held!: Promise<void>;
  await new Promise<void>((opened) => {
    held = inReadTransaction(t.db, () => {
      opened();
      return new Promise<void>((resolve) => (release = resolve));
    });
  });
  const within = async <T>(read: Promise<T>, what: string) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} waited for the writing connection`)), 2_000);
    });
    try {
      return await Promise.race([read, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const page = await within(searchContacts(t.db, tenant.accountId, { q: 'held@' }), 'the contact search');
    assert.deepEqual(
      page.items.map((item) => item.email),
      ['held@example.com'],
    );
    assert.deepEqual(await within(countContacts(t.db, tenant.accountId, { q: 'Reader' }), 'the contact count'), { count: 1 });
    const exported = async () => {
      const names: string[] = [];
      for await (const contact of exportedContacts(t.db, tenant.accountId, {})) names.push(contact.name);
      return names;
    };
    assert.deepEqual(await within(exported(), 'the CSV export'), ['Held Reader']);
  } finally {
    release();
    await held;
  }
});
