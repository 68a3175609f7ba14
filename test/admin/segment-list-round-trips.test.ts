import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKpi } from '../../src/modules/definitions/definitions.service.js';
import { expireCounts } from '../../src/modules/segments/segment-counts.js';
import { createSegment, listSegments } from '../../src/modules/segments/segments.service.js';
import { makeAccount, makeContact, makeField } from '../helpers/factories.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { eachStatement, recordStatements, type StatementRecorder } from '../helpers/statements.js';

/**
 * Statements the segment list sends on PostgreSQL (issue 12, admin reads): the segments, one
 * look-up of the custom fields and one of the KPIs that all of them name, then one count per
 * segment not counted within the last minute. Before, each segment looked its definitions up
 * itself (up to two statements more per segment). Each count is a transaction of its own that
 * plans it without JIT and without parallel workers (db/long-reads.ts): begin, the settings and
 * the count in one write, then the commit (two round trips).
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

describe('segment list round trips on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only (DATABASE_URL)' }, () => {
  let t: TestDatabase;
  let recorder: StatementRecorder;

  before(async () => {
    t = await openTestDatabase();
    recorder = recordStatements();
  });
  after(async () => {
    recorder.restore();
    await t.close();
  });

  async function sent(run: () => Promise<unknown>): Promise<string[]> {
    return (await recorder.during(run)).statements;
  }

  test('3 + one count (2 round trips) per segment counted afresh, 1 when every count is kept', async () => {
    const account = await makeAccount(t.db);
    await makeField(t.db, account.id, 'City', 'location');
    await makeField(t.db, account.id, 'Score', 'number');
    await createKpi(t.db, account.id, { id: 'orders', name: 'Orders' });
    await makeContact(t.db, account.id, { tags: ['vip'], fields: [{ key: 'City', value: 'Paris' }] });
    const segments = [
      { tags: ['vip'] },
      { fields: [{ name: 'City', value: 'Paris' }] },
      { fields: [{ name: 'Score', op: 'gt' as const, value: 5 }], kpis: [{ id: 'orders', op: 'gte' as const, value: 1 }] },
      { kpis: [{ id: 'orders', op: 'lte' as const, value: 2 }] },
      { events: [{ type: 'signup', withinDays: 30 }] },
    ];
    for (const [i, group] of segments.entries()) await createSegment(t.db, account.id, { name: `s${i}`, criteria: { groups: [group] } });
    expireCounts();
    const afresh = await sent(() => listSegments(t.db, account.id));
    assert.equal(afresh.length, 3 + 2 * segments.length, afresh.join('\n'));
    const settings = eachStatement(afresh).filter((text) =>
      /^select set_config\('jit', 'off', true\), set_config\('max_parallel_workers_per_gather', '0', true\)$/.test(text),
    );
    assert.equal(settings.length, segments.length, 'each count planned without JIT and without parallel workers');
    assert.equal((await sent(() => listSegments(t.db, account.id))).length, 1, 'counts kept for a minute: the segments only');
    const { items } = await listSegments(t.db, account.id);
    assert.deepEqual(
      items.map((s) => s.count),
      [1, 1, 0, 1, 0],
    );
  });
});
