import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * Migration 0021: `contacts_account_created` is gone (every new contact wrote an entry in it,
 * and no read used it), and the reads of an account's contacts in creation order, a page of
 * the contact list and its count (contact-search.repo.ts; segments and exports read the same
 * way), still read an index: contacts_list. Runs on the engine of DATABASE_URL.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const page = sql`select c.id, c.name, c.archived, c.opted_out, c.created_at from contacts c
  where c.account_id = ${'acc_x'} and c.archived = ${0} and (c.created_at, c.id) < (${1}, ${'ld_x'})
  order by c.created_at desc, c.id desc limit ${51}`;
const count = sql`select count(*) as n from contacts c where c.account_id = ${'acc_x'} and c.archived = ${1} and c.opted_out = ${0}`;

async function indexNames(): Promise<string[]> {
  if (t.db.engine === 'sqlite') {
    const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'contacts'`.execute(
      t.db.kysely,
    );
    return rows.map((r) => r.name);
  }
  const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'contacts'`.execute(t.db.kysely);
  return rows.map((r) => r.indexname);
}

async function plan(query: ReturnType<typeof sql>): Promise<string> {
  if (t.db.engine === 'sqlite') {
    const { rows } = await sql<{ detail: string }>`explain query plan ${query}`.execute(t.db.kysely);
    return rows.map((r) => r.detail).join('; ');
  }
  // An empty test table is cheapest to scan: plans with scans off show which index the planner can use.
  return inTransaction(t.db, async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx);
    await sql`set local enable_bitmapscan = off`.execute(tx);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(tx);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

test('contacts keep no index of creation order beside the list index', async () => {
  const names = await indexNames();
  assert.ok(!names.includes('contacts_account_created'), names.join(', '));
  assert.ok(names.includes('contacts_list'), names.join(', '));
});

test('a page of the contact list reads contacts_list, in its order', async () => {
  const text = await plan(page);
  assert.match(text, /contacts_list/);
  assert.doesNotMatch(text, /TEMP B-TREE|Sort/i, text);
});

test('a count of the contact list reads contacts_list', async () => {
  assert.match(await plan(count), /contacts_list/);
});
