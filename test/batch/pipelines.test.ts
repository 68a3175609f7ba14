import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { applyContactWrite } from '../../src/modules/contacts/contact-write.js';
import { contactTenant, useTestApp } from '../contacts/helpers.js';
import { randomEmail } from '../helpers/factories.js';
import { eachStatement, recordStatements, type StatementRecorder } from '../helpers/statements.js';

/**
 * PostgreSQL batches send their statements in pipelines (db/pipeline.ts). Lead batches
 * (item-transactions.ts): each item is still decided on the state the items before it left,
 * whatever happens to a statement in the middle of a pipeline. Event batches: every insert in
 * one pipeline, all kept or none.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
const app = useTestApp();

describe('PostgreSQL batches in pipelines', { skip: !onPostgres && 'PostgreSQL only (DATABASE_URL)' }, () => {
  let recorder: StatementRecorder;
  before(() => {
    recorder = recordStatements();
  });
  after(() => recorder.restore());

  async function tenant() {
    const t = await contactTenant(app());
    const known = randomEmail();
    assert.equal((await t.lead({ email: known, name: 'Known Lead' })).status, 200);
    return { ...t, known, batch: (items: unknown[]) => recorder.during(() => t.api.post('/api/leads/batch', { items })) };
  }

  const statuses = (body: { results: { status: number }[] }) => body.results.map((r) => r.status);
  const rollbacks = (statements: string[]) => eachStatement(statements).filter((text) => /^\s*rollback to\b/i.test(text)).length;

  test('a statement that writes nothing mid-pipeline: the run is undone and the items after it see the items before it', async () => {
    const t = await tenant();
    const fresh = randomEmail();
    const before = Array.from({ length: 10 }, (_, i) => ({ email: t.known, tags: [`before-${i}`] }));
    // The item after them, a new address without a name, is refused after its read; in the
    // pipeline the next item (the same address, named) had already created the contact.
    const { result, statements } = await t.batch([
      ...before,
      { email: fresh, tags: ['nameless'] },
      { email: fresh, name: 'Named Later', tags: ['third'] },
      { email: t.known, tags: ['fourth'] },
    ]);
    assert.deepEqual(statuses(result.body), [...before.map(() => 200), 400, 200, 200], JSON.stringify(result.body));
    assert.equal(result.body.results[11].body.created, true, 'the named item creates the contact: the nameless one left nothing');
    assert.ok(rollbacks(statements) >= 1, statements.join('\n'));
    // The ten items before the failure, which succeeded, run again in one pipeline.
    const afterRollback = statements.slice(statements.findIndex((text) => /\brollback to\b/i.test(text)));
    const items = (text: string) => eachStatement([text]).filter((statement) => /^\s*with\b/i.test(statement)).length;
    assert.ok(
      afterRollback.some((text) => items(text) === before.length),
      afterRollback.map((text) => text.slice(0, 20)).join('\n'),
    );
    const created = await t.profile({ email: fresh });
    assert.equal(created?.name, 'Named Later');
    assert.deepEqual(created?.tags, ['third']);
    assert.deepEqual((await t.profile({ email: t.known }))?.tags.sort(), [...before.map((item) => item.tags[0]!), 'fourth'].sort());
  });

  test('an item refused before anything is sent (an invalid address) is answered alone: no rollback', async () => {
    const t = await tenant();
    const fresh = randomEmail();
    const { result, statements } = await t.batch([
      { email: t.known, tags: ['before'] },
      { email: 'not an address', name: 'Nobody Here' },
      { email: fresh, name: 'After Refusal' },
    ]);
    assert.deepEqual(statuses(result.body), [200, 400, 200], JSON.stringify(result.body));
    assert.equal(rollbacks(statements), 0, statements.join('\n'));
    assert.equal((await t.profile({ email: fresh }))?.name, 'After Refusal');
    assert.deepEqual((await t.profile({ email: t.known }))?.tags, ['before']);
  });

  test('a lost race mid-pipeline (a unique violation): that item updates the winner, the others are applied once', async () => {
    const t = await tenant();
    const contested = randomEmail();
    const after = randomEmail();
    // Another writer creates the contested address and holds its transaction open: the batch's
    // insert of the same address waits for it, then fails with a unique violation once it commits.
    let commitRival!: () => void;
    const rivalMayCommit = new Promise<void>((resolve) => {
      commitRival = resolve;
    });
    let rivalWrote!: () => void;
    const rivalHasWritten = new Promise<void>((resolve) => {
      rivalWrote = resolve;
    });
    const rival = inTransaction(app().db, async (tx) => {
      const written = await applyContactWrite(tx, t.accountId, { email: contested, name: 'Rival Writer' }, Date.now());
      rivalWrote();
      await rivalMayCommit;
      return written;
    });
    await rivalHasWritten;
    const batch = t.batch([
      { email: t.known, tags: ['one'] },
      { email: contested, name: 'Batch Writer', tags: ['two'] },
      { email: after, name: 'After Race' },
    ]);
    await waitForALockWait();
    commitRival();
    const rivalContact = await rival;
    const { result, statements } = await batch;
    assert.deepEqual(statuses(result.body), [200, 200, 200], JSON.stringify(result.body));
    assert.equal(result.body.results[1].body.created, false);
    assert.equal(result.body.results[1].body.id, rivalContact.id);
    assert.ok(rollbacks(statements) >= 1, statements.join('\n'));
    const profile = await t.profile({ email: contested });
    assert.equal(profile?.name, 'Batch Writer');
    assert.deepEqual(profile?.tags, ['two']);
    assert.deepEqual((await t.profile({ email: t.known }))?.tags, ['one']);
    assert.equal((await t.profile({ email: after }))?.name, 'After Race');
  });

  test('an events batch whose second insert the server refuses keeps none of its events: every item 500', async () => {
    const t = await tenant();
    const lead = await t.lead({ email: randomEmail(), name: 'Event Maker' });
    const refused = `refused_${Date.now()}`;
    // A trigger of the test's own refuses one event type: the server's refusal of a statement
    // that is not the first of the pipeline.
    const trigger = `refuse_${refused}`;
    await sql
      .raw(
        `create function ${trigger}() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$;
         create trigger ${trigger} before insert on events for each row when (new.type = '${refused}') execute function ${trigger}()`,
      )
      .execute(app().db.kysely);
    try {
      const items = Array.from({ length: 150 }, (_, i) => ({ type: i === 120 ? refused : 'purchase', leadId: lead.body.id }));
      const res = await t.api.post('/api/events/batch', { items });
      assert.equal(res.status, 200);
      assert.deepEqual(new Set(statuses(res.body)), new Set([500]), JSON.stringify(res.body.results[0]));
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from events where contact_id = ${lead.body.id}`.execute(
        app().db.kysely,
      );
      assert.equal(rows[0]!.n, 0, 'the first insert (events 0 to 99) was rolled back with the second');
    } finally {
      await sql.raw(`drop trigger ${trigger} on events; drop function ${trigger}()`).execute(app().db.kysely);
    }
  });

  /** Until a backend of this database waits for a lock (the batch's insert behind the rival's). */
  async function waitForALockWait(): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const { rows } = await sql<{ waiting: number }>`select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(app().db.kysely);
      if (rows[0]!.waiting > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('no statement waited for the rival');
  }
});
