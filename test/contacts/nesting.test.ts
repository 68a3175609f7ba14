import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/json-limits.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeField, makeTenant, randomEmail } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';

/** decisions.md (Limits): free-form values nest at most 32 levels of objects and arrays. */
let t: TestHerald;
let sink: SmtpSink;
before(async () => {
  sink = await SmtpSink.start();
  t = await startTestHerald({ SMTP_URL: sink.url });
});
after(async () => {
  await t.close();
  await sink.close();
});

/** `levels` objects nested under key `a` (level 1 is the outer object), as JSON text: built as text, never by a recursive stringify. */
const nestedObject = (levels: number, leaf = '1') => `${'{"a":'.repeat(levels - 1)}{"a":${leaf}}${'}'.repeat(levels - 1)}`;
const nestedArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** The pointer of the first object below the limit, relative to the free-form member. */
const pointerBelowLimit = '/a'.repeat(MAX_JSON_DEPTH);
const TOO_DEEP = `is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`;

async function tenant() {
  const { accountId, key } = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, key);
  /** A raw JSON body: the test data is never passed through JSON.stringify. */
  const post = (url: string, body: string) =>
    api.call({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json' } });
  return { accountId, api, post };
}

const rowCount = async (table: 'contacts' | 'events' | 'sends') =>
  Number(
    (
      await t.db.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('values nested deeper than the limit are refused at validation', () => {
  test('contact metadata: 32 levels are stored as sent, 33 are a Validation Error naming the member too deep', async () => {
    const { accountId, post } = await tenant();
    const email = randomEmail();
    const ok = await post('/api/leads', `{"email":"${email}","name":"Deep Enough","metadata":${nestedObject(MAX_JSON_DEPTH)}}`);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual((await getContactProfile(t.db, accountId, { email }))?.metadata, JSON.parse(nestedObject(MAX_JSON_DEPTH)));

    const other = randomEmail();
    const res = await post('/api/leads', `{"email":"${other}","name":"Too Deep","metadata":${nestedObject(MAX_JSON_DEPTH + 1)}}`);
    assert.deepEqual(res.body, {
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_ERROR',
      message: 'Validation Error',
      details: [{ path: `/metadata${pointerBelowLimit}`, message: TOO_DEEP }],
    });
    assert.equal(await getContactProfile(t.db, accountId, { email: other }), undefined);
  });

  test("thousands of levels (contacts, a trigger's lead object, events, an Array field) answer 400, never 500, and change nothing", async () => {
    const { accountId, post } = await tenant();
    await makeField(t.db, accountId, 'Tree', 'array');
    const { id: campaignId } = await makeEmailCampaign(t, accountId);
    const email = randomEmail();
    const created = await post('/api/leads', `{"email":"${email}","name":"Target"}`);
    const before = { contacts: await rowCount('contacts'), events: await rowCount('events'), sends: await rowCount('sends') };

    const cases: [string, string, string][] = [
      ['/api/leads', `{"email":"${email}","metadata":${nestedObject(4100)}}`, `/metadata${pointerBelowLimit}`],
      [
        '/api/leads',
        `{"email":"${email}","fields":[{"key":"Tree","value":${nestedArray(4190)}}]}`,
        `/fields/0/value${'/0'.repeat(MAX_JSON_DEPTH)}`,
      ],
      [
        '/api/campaigns/trigger',
        `{"campaignId":"${campaignId}","lead":{"email":"${email}","metadata":${nestedObject(4100)}}}`,
        `/lead/metadata${pointerBelowLimit}`,
      ],
      ['/api/events', `{"type":"deep","leadId":"${created.body.id}","metadata":${nestedObject(4100)}}`, `/metadata${pointerBelowLimit}`],
    ];
    for (const [url, body, path] of cases) {
      const res = await post(url, body);
      assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body).slice(0, 300)}`);
      assert.equal(res.body.message, 'Validation Error');
      assert.ok(
        res.body.details.some((d: { path: string; message: string }) => d.path === path && d.message === TOO_DEEP),
        `${url}: ${JSON.stringify(res.body.details)}`,
      );
    }
    assert.deepEqual({ contacts: await rowCount('contacts'), events: await rowCount('events'), sends: await rowCount('sends') }, before);
    const profile = await getContactProfile(t.db, accountId, { email });
    assert.deepEqual([profile?.metadata, profile?.fields], [{}, {}]);
  });
});

describe('data stored before the limit existed', () => {
  test('thousands of levels in stored metadata and an Array field: reads cut them, sends render, later writes work', async () => {
    const { accountId, api } = await tenant();
    await makeField(t.db, accountId, 'Tree', 'array');
    const email = randomEmail();
    const created = await api.post('/api/leads', { email, name: 'Legacy Deep', fields: [{ key: 'Tree', value: [1] }] });
    // Written straight to the database, as an earlier version could store it.
    await t.db.kysely
      .updateTable('contacts')
      .set({ metadata: `{"plan":"gold","deep":${nestedObject(4000)}}` })
      .where('id', '=', created.body.id)
      .execute();
    await t.db.kysely
      .updateTable('contact_field_values')
      .set({ value: nestedArray(4000) })
      .where('contact_id', '=', created.body.id)
      .execute();

    const profile = await getContactProfile(t.db, accountId, { email });
    // The metadata object is level 1, so `deep` keeps 31 levels and the 32nd holds null.
    assert.deepEqual(profile?.metadata, { plan: 'gold', deep: JSON.parse(nestedObject(MAX_JSON_DEPTH - 1, 'null')) });
    assert.deepEqual(profile?.fields.Tree, JSON.parse(nestedArray(MAX_JSON_DEPTH).replace('[]', '[null]')));

    const { id: campaignId } = await makeEmailCampaign(t, accountId, {
      subject: 'Plan {{ contact.metadata.plan }}',
      text: '{{ contact.metadata.plan }} {{ contact.metadata.deep | json }} {{ contact.fields.Tree | json }}',
    });
    const trigger = await api.post('/api/campaigns/trigger', { campaignId, lead: email });
    assert.equal(trigger.body.status, 'queued');
    const row = await eventually(
      async () => {
        const r = await sendRow(t.db, trigger.body.sendId);
        return (r.status === 'sent' || r.status === 'error') && r;
      },
      5000,
      'the send',
    );
    assert.deepEqual([row.status, row.reason], ['sent', null]);
    assert.ok(sink.messages.some((m) => m.subject === 'Plan gold' && m.to.includes(email)));

    const write = await api.post('/api/leads', { email, metadata: { plan: 'silver' } });
    assert.equal(write.status, 200, JSON.stringify(write.body));
    assert.equal((await getContactProfile(t.db, accountId, { email }))?.metadata.plan, 'silver');
  });
});
