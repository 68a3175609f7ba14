import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Papa from 'papaparse';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeContact, makeSegment, randomEmail, uniq } from '../helpers/factories.js';
import { recordStatements } from '../helpers/statements.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Contacts: the count of a search and the CSV export of a search or a segment. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const HEADER = ['id', 'name', 'email', 'phone', 'tags', 'archived', 'opted_out', 'created_at'];

/** The file's rows after the header, as a spreadsheet reads them (the BOM taken off). */
function rowsOf(res: { body: unknown }): string[][] {
  const text = String(res.body);
  assert.ok(text.startsWith('\uFEFF'), 'a UTF-8 byte order mark first');
  const { data } = Papa.parse<string[]>(text.slice(1), { skipEmptyLines: true });
  assert.deepEqual(data[0], HEADER);
  return data.slice(1);
}

describe('contact count', () => {
  test('counts every contact matching the filters, all pages together', async () => {
    const { panel, accountId } = await signedIn(t);
    const family = uniq('Fam');
    for (let i = 0; i < 3; i++) await makeContact(t.db, accountId, { name: `Kid ${family}`, tags: ['kids'] });
    await makeContact(t.db, accountId, { name: 'Someone Else' });
    const archived = await makeContact(t.db, accountId, { name: `Old ${family}` });
    await panel.patch(`/contacts/${archived.id}`, { archived: true });
    assert.deepEqual((await panel.get('/contacts/count')).body, { count: 4 });
    assert.deepEqual((await panel.get(`/contacts/count?q=${family}`)).body, { count: 3 });
    assert.deepEqual((await panel.get(`/contacts/count?q=${family}&archived=true`)).body, { count: 1 });
    assert.deepEqual((await panel.get('/contacts/count?tag=kids&optedOut=false')).body, { count: 3 });
    assertError(await panel.get('/contacts/count?limit=2'), 400, 'Validation Error');
    assertError(await panel.get('/contacts/count?archived=maybe'), 400, 'Validation Error', '/archived');
  });

  test("another account's contacts are never counted", async () => {
    const mine = await signedIn(t);
    const theirs = await signedIn(t);
    await makeContact(t.db, theirs.accountId, { name: 'Not Yours' });
    assert.deepEqual((await mine.panel.get('/contacts/count')).body, { count: 0 });
  });
});

describe('CSV export', () => {
  test('the filtered list, newest first, one row per contact with its list columns', async () => {
    const { panel, accountId } = await signedIn(t);
    const family = uniq('Exp');
    const email = randomEmail();
    const first = await makeContact(t.db, accountId, { name: `Ann ${family}`, email, phone: '+33612345678', tags: ['VIP', 'b'] });
    const second = await makeContact(t.db, accountId, { name: `Bob, "the" ${family}` });
    await makeContact(t.db, accountId, { name: 'Not Matching' });
    const res = await panel.get(`/contacts/export?q=${family}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="contacts-\d{4}-\d\d-\d\d\.csv"$/);
    const rows = rowsOf(res);
    assert.deepEqual(
      rows.map((r) => r.slice(0, 7)),
      [
        [second.id, `Bob, "the" ${family}`, second.email!, '', '', 'false', 'false'],
        [first.id, `Ann ${family}`, email, "'+33612345678", 'b, vip', 'false', 'false'],
      ],
    );
    assert.match(rows[0]![7]!, /^\d{4}-\d\d-\d\dT/);
  });

  test("cells a spreadsheet would run as a formula start with '", async () => {
    const { panel, accountId } = await signedIn(t);
    for (const name of ['=HYPERLINK("http://x")', '+1+1', '-2+3', '@SUM(A1)']) await makeContact(t.db, accountId, { name });
    const names = rowsOf(await panel.get('/contacts/export')).map((r) => r[1]);
    assert.deepEqual(names.sort(), ["'+1+1", "'-2+3", '\'=HYPERLINK("http://x")', "'@SUM(A1)"]);
  });

  test('a list larger than one page is exported whole', async () => {
    const { panel, accountId } = await signedIn(t);
    const made = new Set<string>();
    for (let i = 0; i < 1005; i += 201) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(201, 1005 - i) }, (_, j) => makeContact(t.db, accountId, { name: `Row ${i + j}` })),
      );
      for (const c of batch) made.add(c.id);
    }
    const rows = rowsOf(await panel.get('/contacts/export'));
    assert.equal(rows.length, 1005);
    assert.deepEqual(new Set(rows.map((r) => r[0])), made);
  });

  test("a segment's contacts as it evaluates now", async () => {
    const { panel, accountId } = await signedIn(t);
    const inIt = await makeContact(t.db, accountId, { name: 'Tagged One', tags: ['vip'] });
    await makeContact(t.db, accountId, { name: 'Untagged One' });
    const segment = await makeSegment(t.db, accountId, { name: 'VIP people', criteria: { tags: ['vip'] } });
    const res = await panel.get(`/segments/${segment.id}/export`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-disposition']), /filename="segment-VIP-people-\d{4}-\d\d-\d\d\.csv"/);
    assert.deepEqual(
      rowsOf(res).map((r) => r[0]),
      [inIt.id],
    );
  });

  test('a segment larger than one page is exported whole, its pages never counted (PostgreSQL: the statements sent)', async () => {
    const { panel, accountId } = await signedIn(t);
    const made = new Set<string>();
    for (let i = 0; i < 1005; i += 201) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(201, 1005 - i) }, (_, j) => makeContact(t.db, accountId, { name: `Row ${i + j}`, tags: ['big'] })),
      );
      for (const c of batch) made.add(c.id);
    }
    await makeContact(t.db, accountId, { name: 'Not in it' });
    const segment = await makeSegment(t.db, accountId, { name: 'Big', criteria: { tags: ['big'] } });
    const recorder = process.env.DATABASE_URL ? recordStatements() : undefined;
    try {
      const { result: res, statements } = recorder
        ? await recorder.during(() => panel.get(`/segments/${segment.id}/export`))
        : { result: await panel.get(`/segments/${segment.id}/export`), statements: [] };
      const rows = rowsOf(res);
      assert.equal(rows.length, 1005);
      assert.deepEqual(new Set(rows.map((r) => r[0])), made);
      // Each page through the segment page's own evaluation counted the whole segment again.
      assert.deepEqual(
        statements.filter((text) => /count\(/i.test(text)),
        [],
      );
      if (recorder) assert.equal(statements.filter((text) => /from "?segments"?/i.test(text)).length, 1, 'the segment read once');
    } finally {
      recorder?.restore();
    }
  });

  test("cannot export another account's segment: 404", async () => {
    const mine = await signedIn(t);
    const theirs = await signedIn(t);
    const segment = await makeSegment(t.db, theirs.accountId, { criteria: {} });
    await makeContact(t.db, theirs.accountId, { name: 'Their Contact' });
    assertError(await mine.panel.get(`/segments/${segment.id}/export`), 404, 'Segment not found');
    assertError(await mine.panel.get('/segments/sg_unknown/export'), 404, 'Segment not found');
  });

  test("the list export never holds another account's contacts", async () => {
    const mine = await signedIn(t);
    const theirs = await signedIn(t);
    await makeContact(t.db, theirs.accountId, { name: 'Their Contact' });
    assert.deepEqual(rowsOf(await mine.panel.get('/contacts/export')), []);
  });

  test('without a session: 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin/api/contacts/export' });
    assert.equal(res.statusCode, 401);
  });
});
