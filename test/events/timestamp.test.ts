import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listActivity } from '../../src/modules/activity/activity.service.js';
import { previewSegment } from '../../src/modules/segments/segments.service.js';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeContact, makeTenant } from '../helpers/factories.js';

/**
 * `timestamp` on POST /api/events (issue 13): when the event happened, to backfill history.
 * ISO 8601 with a zone, at most 5 minutes ahead and 365 days back (decisions.md, Events).
 */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

async function tenantWithContact() {
  const tenant = await makeTenant(t.db, t.config);
  const leadId = (await makeContact(t.db, tenant.accountId)).id;
  return { ...tenant, leadId, api: apiClient(t.app, tenant.key) };
}

const feed = async (accountId: string, leadId: string) =>
  (await listActivity(t.db, accountId, leadId)).items.filter((i) => i.kind === 'event') as { type: string; at: string }[];

describe('accepted', () => {
  test('the event gets the time it names, in the response and in the activity feed, in any zone and precision', async () => {
    const c = await tenantWithContact();
    const day = new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10);
    const cases: [string, string][] = [
      [`${day}T10:15:30Z`, `${day}T10:15:30.000Z`],
      [`${day}T12:15:30.25+02:00`, `${day}T10:15:30.250Z`],
      [`${day}T04:45:00.123456-05:30`, `${day}T10:15:00.123Z`],
      [`${day}t10:15:31z`, `${day}T10:15:31.000Z`],
    ];
    for (const [timestamp, expected] of cases) {
      const res = await c.api.post('/api/events', { type: timestamp, leadId: c.leadId, timestamp });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.createdAt, expected, timestamp);
    }
    const items = await feed(c.accountId, c.leadId);
    assert.deepEqual(
      items.map((i) => [i.type, i.at]),
      [cases[3], cases[1], cases[0], cases[2]],
      'newest first, by the time each names',
    );
  });

  test('a backfilled event takes its place in the feed behind newer ones; without timestamp the event is dated now', async () => {
    const c = await tenantWithContact();
    const before = Date.now();
    const now = await c.api.post('/api/events', { type: 'now', leadId: c.leadId });
    assert.ok(Date.parse(now.body.createdAt) >= before - 1 && Date.parse(now.body.createdAt) <= Date.now());
    const week = new Date(Date.now() - 7 * DAY).toISOString();
    await c.api.post('/api/events', { type: 'last-week', leadId: c.leadId, timestamp: week });
    await c.api.post('/api/events', { type: 'yesterday', leadId: c.leadId, timestamp: new Date(Date.now() - DAY).toISOString() });
    const items = await feed(c.accountId, c.leadId);
    assert.deepEqual(
      items.map((i) => i.type),
      ['now', 'yesterday', 'last-week'],
    );
    assert.equal(items[2]!.at, week);
  });

  test('the bounds: up to 5 minutes ahead and up to 365 days back are accepted', async () => {
    const c = await tenantWithContact();
    for (const at of [Date.now() + 4 * MINUTE, Date.now() - 364 * DAY]) {
      const timestamp = new Date(at).toISOString();
      const res = await c.api.post('/api/events', { type: 'edge', leadId: c.leadId, timestamp });
      assert.deepEqual([res.status, res.body.createdAt], [200, timestamp]);
    }
  });

  test('segments select by the time the event happened: a backfill older than the look-back does not count', async () => {
    const c = await tenantWithContact();
    const other = (await makeContact(t.db, c.accountId)).id;
    await c.api.post('/api/events', { type: 'purchase', leadId: c.leadId, timestamp: new Date(Date.now() - 10 * DAY).toISOString() });
    await c.api.post('/api/events', { type: 'purchase', leadId: other, timestamp: new Date(Date.now() - 120 * DAY).toISOString() });
    const within = async (withinDays: number) =>
      (await previewSegment(t.db, c.accountId, { event: { type: 'purchase', withinDays } })).items.map((i) => i.id);
    assert.deepEqual(await within(90), [c.leadId]);
    assert.deepEqual(await within(5), []);
  });
});

describe('refused', () => {
  const formatMessage = 'must be an ISO 8601 date and time with a time zone, e.g. 2026-11-25T10:15:30Z or 2026-11-25T11:15:30+01:00';

  test('each bad timestamp is a Validation Error at /timestamp with its exact message, and stores nothing', async () => {
    const c = await tenantWithContact();
    const cases: [unknown, string][] = [
      [new Date(Date.now() + 6 * MINUTE).toISOString(), 'must not be more than 5 minutes in the future'],
      [new Date(Date.now() - 366 * DAY).toISOString(), 'must not be more than 365 days in the past'],
      ['1970-01-01T00:00:00Z', 'must not be more than 365 days in the past'],
      ['2026-03-01T10:15:30', formatMessage],
      ['2026-03-01', formatMessage],
      ['2026-03-01 10:15:30Z', formatMessage],
      ['2026-03-01T10:15Z', formatMessage],
      ['2026-02-30T10:15:30Z', formatMessage],
      ['2026-03-01T24:00:00Z', formatMessage],
      ['2026-03-01T23:59:60Z', formatMessage],
      ['2026-03-01T10:15:30+0100', formatMessage],
      ['2026-03-01T10:15:30+01:60', formatMessage],
      [String(Date.now()), formatMessage],
      ['', formatMessage],
      [Date.now(), 'must be string'],
    ];
    for (const [timestamp, message] of cases) {
      const res = await c.api.post('/api/events', { type: 'x', leadId: c.leadId, timestamp });
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: {
            statusCode: 400,
            error: 'Bad Request',
            code: 'VALIDATION_ERROR',
            message: 'Validation Error',
            details: [{ path: '/timestamp', message }],
          },
        },
        String(timestamp),
      );
    }
    assert.deepEqual(await feed(c.accountId, c.leadId), [], 'nothing stored');
  });

  test('a bad timestamp is reported before a missing leadId/tracker (shape checks come first)', async () => {
    const c = await tenantWithContact();
    const res = await c.api.post('/api/events', { type: 'x', timestamp: 'yesterday' });
    assert.deepEqual([res.status, res.body.message, res.body.details?.[0]?.path], [400, 'Validation Error', '/timestamp']);
  });
});
