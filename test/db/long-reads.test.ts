import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { longRead } from '../../src/db/long-reads.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { eachStatement, recordStatements } from '../helpers/statements.js';

/**
 * A long read on PostgreSQL (db/long-reads.ts): planned without JIT, and `oneCore` without
 * parallel workers, for that read only: the connection it ran on goes back to the pool with
 * the server's settings (PgBouncer may hand it to anyone).
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

describe('long reads on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only (DATABASE_URL)' }, () => {
  let t: TestDatabase;
  before(async () => {
    t = await openTestDatabase();
  });
  after(() => t.close());

  const settings = (q = t.db.reads) =>
    sql<{
      jit: string;
      workers: string;
    }>`select current_setting('jit') as jit, current_setting('max_parallel_workers_per_gather') as workers`
      .execute(q)
      .then((r) => r.rows[0]!);
  /** The server's own values, whatever any session set: what every connection must show outside a long read. */
  const serverDefaults = () =>
    sql<{ jit: string; workers: string }>`select
        (select reset_val from pg_settings where name = 'jit') as jit,
        (select reset_val from pg_settings where name = 'max_parallel_workers_per_gather') as workers`
      .execute(t.db.reads)
      .then((r) => r.rows[0]!);

  test('runs without JIT, and with oneCore without parallel workers', async () => {
    const defaults = await serverDefaults();
    // Otherwise the test would prove nothing.
    assert.equal(defaults.jit, 'on', 'the server compiles with JIT');
    assert.notEqual(defaults.workers, '0', 'the server allows parallel workers');
    assert.deepEqual(await longRead(t.db, (q) => settings(q)), { jit: 'off', workers: defaults.workers });
    assert.deepEqual(await longRead(t.db, (q) => settings(q), { oneCore: true }), { jit: 'off', workers: '0' });
  });

  test('the settings end with the read: every connection of the pool answers with the server defaults after', async () => {
    const defaults = await serverDefaults();
    // More at once than the pool has connections (4), so each of them ran one.
    await Promise.all(Array.from({ length: 8 }, () => longRead(t.db, (q) => settings(q), { oneCore: true })));
    const after = await Promise.all(Array.from({ length: 8 }, () => settings()));
    for (const s of after) assert.deepEqual(s, defaults);
  });

  test('two round trips: the BEGIN, the settings and the read in one write, then the COMMIT', async () => {
    const recorder = recordStatements();
    try {
      const { statements } = await recorder.during(() => longRead(t.db, (q) => settings(q), { oneCore: true }));
      assert.equal(statements.length, 2, statements.join('\n'));
      assert.deepEqual(
        eachStatement(statements).map((text) => text.trim().split(/\s/)[0]),
        ['begin', 'select', 'select', 'commit'],
      );
    } finally {
      recorder.restore();
    }
  });
});
