import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { insertSend, randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Contacts: the list with search and keyset paging, profile, activity, notes, flags. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const add = (accountId: string, lead: Parameters<typeof writeContact>[2]) => writeContact(t.db, accountId, lead).then((r) => r.id);
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((c) => c.id);

describe('contact list', () => {
  test('newest first, each item with primary email and phone, tags and flags', async () => {
    const { panel, accountId } = await signedIn(t);
    const email = randomEmail();
    const phone = randomPhone();
    const first = await add(accountId, { email, phone, name: 'Ada Lovelace', tags: ['VIP', 'Black Friday'] });
    await add(accountId, { id: first, email: randomEmail() });
    const second = await add(accountId, { phone: randomPhone(), name: 'Grace Hopper' });
    const res = await panel.get('/contacts');
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res), [second, first]);
    assert.equal(res.body.nextCursor, null);
    const ada = res.body.items[1];
    assert.deepEqual(
      { ...ada, createdAt: undefined },
      {
        id: first,
        name: 'Ada Lovelace',
        email,
        phone,
        tags: ['black-friday', 'vip'],
        archived: false,
        optedOut: false,
        createdAt: undefined,
      },
    );
    assert.match(ada.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(res.body.items[0].email, null);
  });

  test('keyset paging: limit and cursor walk every contact once, newest first', async () => {
    const { panel, accountId } = await signedIn(t);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push(await add(accountId, { email: randomEmail(), name: `Person ${i}` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { items: { id: string }[]; nextCursor: string | null } } = await panel.get(
        `/contacts?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...ids(res));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...made].reverse());
  });

  test('q: part of any email of the contact, any case', async () => {
    const { panel, accountId } = await signedIn(t);
    const tagHere = uniq('dom').toLowerCase();
    const first = await add(accountId, { email: `ann@${tagHere}.example`, name: 'Mail Person' });
    await add(accountId, { id: first, email: `second@other-${tagHere}.example` });
    const other = await add(accountId, { email: `bob@${tagHere}.example`, name: 'Other' });
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`  @${tagHere.toUpperCase()}.EXAMPLE `)}`)), [other, first]);
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`ann@${tagHere}`)}`)), [first], 'the start of an email');
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`second@other-${tagHere}`)}`)), [first], 'a second email');
  });

  test('q phone-like: exact phone after normalisation (spaces, no +)', async () => {
    const { panel, accountId } = await signedIn(t);
    const phone = randomPhone();
    const id = await add(accountId, { phone, name: 'Phone Person' });
    const spaced = `${phone.slice(0, 3)} ${phone.slice(3, 4)} ${phone.slice(4, 8)} ${phone.slice(8)}`;
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(spaced)}`)), [id]);
    assert.deepEqual(ids(await panel.get(`/contacts?q=${phone.slice(1)}`)), [id], 'digits only, country code first');
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent('+33 6 00 00 00 01')}`)), []);
  });

  test('q otherwise: a case-insensitive part of the name, anywhere in it', async () => {
    const { panel, accountId } = await signedIn(t);
    // Phones, not random emails: a random email's hex could hold "ada".
    const ada = await add(accountId, { phone: randomPhone(), name: 'Ada Lovelace' });
    const jean = await add(accountId, { phone: randomPhone(), name: 'Jean-Luc Picard' });
    await add(accountId, { phone: randomPhone(), name: 'Grace Hopper' });
    for (const q of ['ada', 'ADA', 'love', 'Ada Lov', 'ovel', 'ELAC'])
      assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(q)}`)), [ada], q);
    assert.deepEqual(ids(await panel.get('/contacts?q=luc')), [jean], 'after a hyphen');
    assert.deepEqual(ids(await panel.get('/contacts?q=n-l')), [jean], 'a hyphen in the search');
    assert.deepEqual(ids(await panel.get('/contacts?q=lovelace%20ada')), [], 'the words in their order');
  });

  test('q: % and _ are characters, not wildcards (in names and emails)', async () => {
    const { panel, accountId } = await signedIn(t);
    const marker = uniq('w').toLowerCase();
    const percent = await add(accountId, { email: randomEmail(), name: `Sale 100% ${marker}` });
    const underscore = await add(accountId, { email: `first_last.${marker}@example.com`, name: 'Under Score' });
    await add(accountId, { email: `firstxlast.${marker}@example.com`, name: `Sale 100x ${marker}` });
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`100% ${marker}`)}`)), [percent]);
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`first_last.${marker}`)}`)), [underscore]);
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`%${marker}`)}`)), [], '% matches only a %');
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent(`_last.${marker}`)}`)), [underscore], '_ matches only a _');
    assert.deepEqual(ids(await panel.get(`/contacts?q=${encodeURIComponent('\\')}`)), [], 'the escape character itself');
  });

  test('name search pages like the list', async () => {
    const { panel, accountId } = await signedIn(t);
    const family = uniq('Fam');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await add(accountId, { email: randomEmail(), name: `Kid ${family}` }));
    await add(accountId, { email: randomEmail(), name: 'Someone Else' });
    const first = await panel.get(`/contacts?q=${family}&limit=2`);
    const second = await panel.get(`/contacts?q=${family}&limit=2&cursor=${first.body.nextCursor}`);
    const third = await panel.get(`/contacts?q=${family}&limit=2&cursor=${second.body.nextCursor}`);
    assert.deepEqual([...ids(first), ...ids(second), ...ids(third)], [...made].reverse());
    assert.equal(third.body.nextCursor, null);
  });

  test('tag filter, in stored form, combined with q', async () => {
    const { panel, accountId } = await signedIn(t);
    const a = await add(accountId, { email: randomEmail(), name: 'Ann Tagged', tags: ['Black Friday'] });
    const b = await add(accountId, { email: randomEmail(), name: 'Bob Tagged', tags: ['black-friday'] });
    await add(accountId, { email: randomEmail(), name: 'Ann Untagged' });
    assert.deepEqual(ids(await panel.get(`/contacts?tag=${encodeURIComponent('BLACK friday')}`)), [b, a]);
    assert.deepEqual(ids(await panel.get('/contacts?tag=black-friday&q=ann')), [a]);
    assert.deepEqual(ids(await panel.get('/contacts?tag=nobody')), []);
  });

  test('archived contacts are hidden unless archived=true (which lists them alone); optedOut filters', async () => {
    const { panel, accountId } = await signedIn(t);
    const listed = await add(accountId, { email: randomEmail(), name: 'Listed' });
    const archived = await add(accountId, { email: randomEmail(), name: 'Archived' });
    const opted = await add(accountId, { email: randomEmail(), name: 'Opted' });
    await panel.patch(`/contacts/${archived}`, { archived: true });
    await panel.patch(`/contacts/${opted}`, { optedOut: true });
    assert.deepEqual(ids(await panel.get('/contacts')), [opted, listed]);
    assert.deepEqual(ids(await panel.get('/contacts?archived=false')), [opted, listed]);
    assert.deepEqual(ids(await panel.get('/contacts?archived=true')), [archived]);
    assert.deepEqual(ids(await panel.get('/contacts?optedOut=true')), [opted]);
    assert.deepEqual(ids(await panel.get('/contacts?optedOut=false')), [listed]);
  });

  test('query validation: limit range, booleans, cursor, unknown parameters', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.get('/contacts?limit=0'), 400, 'Validation Error', '/limit');
    assertError(await panel.get('/contacts?limit=201'), 400, 'Validation Error', '/limit');
    assertError(await panel.get('/contacts?limit=ten'), 400, 'Validation Error', '/limit');
    assertError(await panel.get('/contacts?archived=yes'), 400, 'Validation Error', '/archived');
    assertError(await panel.get('/contacts?cursor=bm90LWEtY3Vyc29y'), 400, 'Validation Error', '/cursor');
    assertError(await panel.get('/contacts?sort=name'), 400, 'Validation Error', '/sort');
    assert.equal((await panel.get('/contacts?q=&tag=&limit=')).status, 200, 'empty values mean not given');
  });
});

describe('one contact', () => {
  test('GET: the contact show profile; unknown id 404', async () => {
    const { panel, accountId } = await signedIn(t);
    const email = randomEmail();
    const id = await add(accountId, { email, name: 'Ada', tags: ['x'], metadata: { plan: 'pro' } });
    const res = await panel.get(`/contacts/${id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'archived',
      'createdAt',
      'emails',
      'fields',
      'id',
      'kpis',
      'metadata',
      'name',
      'notes',
      'optedOut',
      'phones',
      'suppressed',
      'tags',
      'trackers',
      'updatedAt',
    ]);
    assert.deepEqual([res.body.emails, res.body.tags, res.body.metadata], [[email], ['x'], { plan: 'pro' }]);
    assertError(await panel.get(`/contacts/${newId('ld')}`), 404, 'Lead not found');
  });

  test('PATCH archived / optedOut: each flag on its own, answered with the profile', async () => {
    const { panel, accountId } = await signedIn(t);
    const id = await add(accountId, { email: randomEmail(), name: 'Flags' });
    const res = await panel.patch(`/contacts/${id}`, { archived: true, optedOut: true });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.id, res.body.archived, res.body.optedOut], [id, true, true]);
    const back = await panel.patch(`/contacts/${id}`, { archived: false });
    assert.deepEqual([back.body.archived, back.body.optedOut], [false, true]);
    assertError(await panel.patch(`/contacts/${id}`, { archived: 'yes' }), 400, 'Validation Error', '/archived');
    assertError(await panel.patch(`/contacts/${id}`, { name: 'x' }), 400, 'Validation Error', '/name');
    assertError(await panel.patch(`/contacts/${newId('ld')}`, { archived: true }), 404, 'Lead not found');
  });

  test('notes: 201 signed with the user email; in the profile; archived stays archived', async () => {
    const { panel, accountId, email } = await signedIn(t);
    const id = await add(accountId, { email: randomEmail(), name: 'Noted' });
    await panel.patch(`/contacts/${id}`, { archived: true });
    const res = await panel.post(`/contacts/${id}/notes`, { text: '  Called, wants a demo  ' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual({ ...res.body, createdAt: undefined }, { text: 'Called, wants a demo', createdBy: email, createdAt: undefined });
    const profile = (await panel.get(`/contacts/${id}`)).body;
    assert.deepEqual(profile.notes, [res.body]);
    assert.equal(profile.archived, true);
    assertError(await panel.post(`/contacts/${id}/notes`, { text: '   ' }), 400, 'Validation Error', '/text');
    assertError(await panel.post(`/contacts/${id}/notes`, { text: 'x'.repeat(10_001) }), 400, 'Validation Error', '/text');
    assertError(await panel.post(`/contacts/${id}/notes`, { text: 'x', createdBy: 'someone else' }), 400, 'Validation Error', '/createdBy');
    assertError(await panel.post(`/contacts/${newId('ld')}/notes`, { text: 'x' }), 404, 'Lead not found');
  });

  test('activity: events and sends newest first, paged with before and limit; test sends marked test', async () => {
    const { panel, accountId } = await signedIn(t);
    const id = await add(accountId, { email: randomEmail(), name: 'Active' });
    const base = Date.now() - 60_000;
    await recordEvent(t.db, accountId, { type: 'signup', leadId: id }, base);
    await recordEvent(t.db, accountId, { type: 'purchase', leadId: id, value: '12' }, base + 1000);
    const { id: campaignId } = await makeEmailCampaign(t, accountId);
    const { id: realSend } = await insertSend(t.db, accountId, campaignId, {
      contactId: id,
      status: 'sent',
      at: base + 2000,
      attempts: 1,
      processed: true,
      delivered: true,
      test: 0,
    });
    const { id: testSend } = await insertSend(t.db, accountId, campaignId, {
      contactId: id,
      status: 'sent',
      at: base + 3000,
      attempts: 1,
      processed: true,
      delivered: true,
      test: 1,
    });
    const all = await panel.get(`/contacts/${id}/activity`);
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.items.map((i: { kind: string }) => i.kind),
      ['send', 'send', 'event', 'event'],
    );
    assert.deepEqual([all.body.items[0].sendId, all.body.items[0].test], [testSend, true]);
    assert.deepEqual([all.body.items[1].sendId, all.body.items[1].test], [realSend, undefined]);
    const page = await panel.get(`/contacts/${id}/activity?limit=1&before=${encodeURIComponent(new Date(base + 1500).toISOString())}`);
    assert.deepEqual(
      page.body.items.map((i: { type: string }) => i.type),
      ['purchase'],
    );
    assertError(await panel.get(`/contacts/${id}/activity?before=yesterday`), 400, 'Validation Error', '/before');
    assertError(await panel.get(`/contacts/${id}/activity?limit=501`), 400, 'Validation Error', '/limit');
    assertError(await panel.get(`/contacts/${newId('ld')}/activity`), 404, 'Lead not found');
  });
});
